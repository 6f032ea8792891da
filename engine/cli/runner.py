"""What every command shares: a training run's events printed for people (a progress line with
throughput and ETA on stderr, a line per evaluation and checkpoint) or as JSON lines for the app, Ctrl-C
to stop with a save (a second Ctrl-C aborts), and a lower CPU priority for runs started by the app."""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from engine.errors import Word2BertError
from engine.training.events import metrics_text


def _fmt_time(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "--:--"
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _fmt_count(x: float) -> str:
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.1f}{suffix}"
    return f"{x:.0f}"


def _amount(ev: Any) -> str:
    """The run's work as people count it: word2vec's 10.9M words are 2.2M corpus words read 5 times."""
    total = f"{_fmt_count(ev.total)} {ev.unit}"
    corpus = ev.info.get("corpus_words")
    if ev.unit == "words" and corpus and ev.total > corpus * 1.01:
        epochs = ev.total / corpus
        return f"{_fmt_count(corpus)} corpus words × {epochs:.0f} epochs = {total}"
    return total


def exit_now(code: int) -> NoReturn:
    """End a command's process without tearing its modules down: everything is saved and closed by then,
    and torch's and numba's teardown took 0.7 s of a 6 s word2vec command. Output is flushed first
    (the app reads the JSON events from a pipe). For the console scripts only — never in-process callers."""
    import contextlib
    import os

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that went away, or a closed stream
            stream.flush()
    os._exit(code)


BACKGROUND_NICE = 10  # a background run's nice value at least (POSIX)


def lower_priority() -> None:
    """Let interactive programs go first: nice 10 or lower on POSIX (a process started lower stays there: the
    app starts its runs already lowered, explorer/training_process.py), 'below normal' on Windows; and leave
    the app a core (word2vec's CPU kernel; see engine.models.word2vec.cpu.set_threads)."""
    import contextlib
    import os

    os.environ.setdefault("WORD2BERT_SPARE_CORES", "1")

    with contextlib.suppress(OSError, AttributeError):
        if hasattr(os, "nice"):
            now = os.getpriority(os.PRIO_PROCESS, 0)
            if now < BACKGROUND_NICE:
                os.nice(BACKGROUND_NICE - now)
        else:  # Windows
            import ctypes

            below_normal = 0x4000
            kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]  # Windows only
            kernel32.SetPriorityClass(kernel32.GetCurrentProcess(), below_normal)


class _Progress:
    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr  # looked up now: a default bound at import would go stale
        self.tty = self.stream.isatty()

    def line(self, text: str, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


# what a training command's exit status says (README "Exit status"): a script tells a finished run from one
# that stopped part-way (Ctrl-C, --max-steps, --max-minutes: resumable with --resume) or went wrong
EXIT_STATUS = {"completed": 0, "failed": 1, "bad input": 2, "diverged": 3, "stopped": 4, "aborted": 130}


def show_event(ev: Any, bar: _Progress, status: int) -> int:
    """Print one training event for people (stderr); returns the exit status so far."""
    from engine.training.events import (
        CheckpointSaved,
        EvalMetrics,
        ProbePredictions,
        RunFinished,
        RunStarted,
        StepMetrics,
    )

    if isinstance(ev, RunStarted):
        print(f"training {ev.kind} on {ev.device} -> {ev.run_dir} ({_amount(ev)})", file=sys.stderr)
        if ev.resumed_step:
            print(f"resuming from step {ev.resumed_step}", file=sys.stderr)
        for note in ev.info.get("notes", []):
            print(f"note: {note}", file=sys.stderr)
    elif isinstance(ev, StepMetrics):
        width = 24
        filled = int(ev.progress * width)
        bar.line(f"[{'#' * filled}{'.' * (width - filled)}] {ev.progress:6.1%} epoch {ev.epoch + 1} step {ev.step} "
                 f"loss {ev.loss:.4f} {_fmt_count(ev.throughput)} {ev.unit}/s ETA {_fmt_time(ev.eta_s)}")
    elif isinstance(ev, EvalMetrics):
        bar.line(f"eval (step {ev.step}): " + metrics_text(ev.metrics, digits=4), final=True)
    elif isinstance(ev, CheckpointSaved):
        bar.line(f"checkpoint saved: {ev.path} (step {ev.step})", final=True)
    elif isinstance(ev, ProbePredictions):
        for text, label, p in zip(ev.texts, ev.labels, ev.probabilities, strict=True):
            bar.line(f"probe (step {ev.step}): {text[:50]!r} -> {label} ({p:.2f})", final=True)
    elif isinstance(ev, RunFinished):
        bar.line(f"{ev.status}: {ev.message or ev.run_dir}", final=True)
        status = EXIT_STATUS.get(ev.status, 1)
    return status


_EARLY_SIGINT = threading.Event()


READY = {"event": "ready"}  # printed with --json-events once a Stop can no longer be lost (see below)


def catch_sigint_early(announce: bool = False) -> None:
    """A training command's first step: a Ctrl-C (or the app's Stop, sent as one) that comes before the run's
    own handler is in place — while torch and the rest import — is remembered, and the run stops as soon as
    it can (``run_events``), instead of raising KeyboardInterrupt inside whatever library code is running
    (some swallow it: the app's Stop was lost and the run went on to complete). A second one aborts."""
    def early(signum: int, frame: Any) -> None:
        if _EARLY_SIGINT.is_set():
            raise KeyboardInterrupt
        _EARLY_SIGINT.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, early)
    if announce:  # the app sends its Stop only after this line: a SIGINT before it could still be lost
        print(json.dumps(READY), flush=True)  # (ignored, or default: the interpreter was not up yet)


class NotStarted(KeyboardInterrupt):
    """Ctrl-C before training began (reading the corpus, building the vocabulary): nothing to save."""


def stop_on_sigint(stop: threading.Event, started: threading.Event | None = None) -> Any:
    """First Ctrl-C: save and stop (at once, with nothing to save, before ``started`` is set); second:
    abort. Returns the previous handler (None off the main thread)."""
    def on_sigint(signum: int, frame: Any) -> None:
        if started is not None and not started.is_set():
            stop.set()
            raise NotStarted
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print("\nstopping: saving a checkpoint (Ctrl-C again to abort)...", file=sys.stderr)

    return signal.signal(signal.SIGINT, on_sigint) if threading.current_thread() is threading.main_thread() else None


def run_events(events: Callable[[], Iterator[Any]], stop: threading.Event, *, prog: str, json_events: bool,
               aborted: str, failed_event_for: str | None = None, run_dir: str | None = None) -> int:
    """Run a training generator for the command line: progress on stderr, JSON lines on stdout when asked,
    Ctrl-C stops it (saving), a second Ctrl-C aborts. ``failed_event_for``: a run folder, to end the JSON
    stream with a failed RunFinished when the run cannot start; ``run_dir``: the run a "stopped before
    training began" event names. Returns the exit status."""
    from engine.training.events import RunStarted, event_to_dict

    started = threading.Event()
    previous = stop_on_sigint(stop, started)
    bar = _Progress()
    status = 1
    try:
        if _EARLY_SIGINT.is_set():  # stopped while the command was starting
            raise NotStarted
        for ev in events():
            if isinstance(ev, RunStarted):
                started.set()
            if json_events:
                print(json.dumps(event_to_dict(ev)), flush=True)
            status = show_event(ev, bar, status)
    except (Word2BertError, ValueError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        if json_events and failed_event_for is not None:
            print(json.dumps({"event": "finished", "status": "failed", "step": 0, "run_dir": failed_event_for,
                              "message": str(e), "metrics": {}}), flush=True)
        return EXIT_STATUS["bad input"]
    except NotStarted:
        message = "stopped before training began: nothing was trained, nothing to save"
        print(f"\n{message}", file=sys.stderr)
        if json_events:
            print(json.dumps({"event": "finished", "status": "stopped", "step": 0,
                              "run_dir": run_dir or failed_event_for or "",
                              "message": message, "metrics": {}}), flush=True)
        return EXIT_STATUS["stopped"]
    except KeyboardInterrupt:
        print(f"\naborted; {aborted}", file=sys.stderr)
        return EXIT_STATUS["aborted"]
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return status
