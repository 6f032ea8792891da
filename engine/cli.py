"""Headless commands: ``word2bert-train``, ``word2bert-eval``, ``word2bert-export``.

They print the same events the GUI shows: a progress line with throughput and ETA on stderr, and a
line per evaluation and checkpoint. Ctrl-C saves a resumable checkpoint (a second Ctrl-C aborts).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from engine.config import MODEL_CONFIGS, RunSpec, apply_preset
from engine.errors import Word2BertError

# word2vec's CLI mirrors gensim; these flags are spelled as in the word2vec tool / the issue
ALIASES = {"word2vec": {"dim": "vector_size"}, "glove": {"dim": "vector_size"}, "nnlm": {}, "ngram": {}}


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


def _add_model_options(parser: argparse.ArgumentParser, kind: str) -> None:
    group = parser.add_argument_group(f"{kind} settings")
    for f in dataclasses.fields(MODEL_CONFIGS[kind]):
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        if isinstance(default, bool):
            group.add_argument(flag, dest=f"m_{f.name}", action=argparse.BooleanOptionalAction, default=None,
                               help=f"(default {default})")
        else:
            typ = type(default) if default is not None else int
            group.add_argument(flag, dest=f"m_{f.name}", type=typ, default=None, help=f"(default {default})")
    for alias, target in ALIASES.get(kind, {}).items():
        group.add_argument("--" + alias, dest=f"m_{target}", type=int, default=None, help=f"same as --{target.replace('_', '-')}")
    if kind == "word2vec":
        group.add_argument("--arch", choices=["cbow", "skipgram"], default=None, help="cbow (default) or skipgram")
        group.add_argument("--loss", choices=["ns", "hs"], default=None, help="ns: negative sampling (default); hs: hierarchical softmax")


def _train_parser(kind: str | None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="word2bert-train", description="Train a model of the NLP-pretraining lineage.")
    p.add_argument("kind", choices=sorted(MODEL_CONFIGS), nargs="?" if kind is None else None,
                   help="model family (optional with --resume)")
    p.add_argument("--corpus", default="default", help="default, wiki-vital, bbc-news, enwiki-sample, or a file/folder")
    p.add_argument("--out", help="run folder to create")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a stopped run")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps (default: best available)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-words", type=int, default=None, help="read at most this many corpus words (quick runs)")
    p.add_argument("--max-steps", type=int, default=None,
                   help="bert/gpt/elmo: the run's length in steps (instead of --epochs); others: stop resumably after it")
    p.add_argument("--checkpoint-every", type=int, default=0, help="steps between checkpoints (0: at evaluations/epochs)")
    p.add_argument("--log-every", type=int, default=50, help="steps between progress events")
    p.add_argument("--background", action="store_true",
                   help="run at a lower CPU priority (the app does: its window stays responsive on few cores)")
    p.add_argument("--json-events", action="store_true",
                   help="print every event as one JSON line on stdout (for the app, which runs the CLI as a process)")
    if kind:
        _add_model_options(p, kind)
    return p


def _model_config(kind: str, args: argparse.Namespace) -> Any:
    cfg = MODEL_CONFIGS[kind]()
    preset = getattr(args, "m_preset", None)
    if preset is not None:
        apply_preset(kind, cfg, preset)  # the preset first; explicit settings then override it
    for f in dataclasses.fields(cfg):
        value = getattr(args, f"m_{f.name}", None)
        if value is not None:
            setattr(cfg, f.name, value)
    if kind == "word2vec":
        if args.arch:
            cfg.sg = int(args.arch == "skipgram")
        if args.loss:
            cfg.hs = int(args.loss == "hs")
    return cfg


def lower_priority() -> None:
    """Let interactive programs go first: nice +10 on POSIX, 'below normal' on Windows; and leave the
    app a core (word2vec's CPU kernel; see engine.models.word2vec_cpu.set_threads)."""
    import contextlib
    import os

    os.environ.setdefault("WORD2BERT_SPARE_CORES", "1")

    with contextlib.suppress(OSError, AttributeError):
        if hasattr(os, "nice"):
            os.nice(10)
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
        print(f"training {ev.kind} on {ev.device} -> {ev.run_dir} ({_fmt_count(ev.total)} {ev.unit})", file=sys.stderr)
        for note in ev.info.get("notes", []):
            print(f"note: {note}", file=sys.stderr)
    elif isinstance(ev, StepMetrics):
        width = 24
        filled = int(ev.progress * width)
        bar.line(f"[{'#' * filled}{'.' * (width - filled)}] {ev.progress:6.1%} epoch {ev.epoch + 1} step {ev.step} "
                 f"loss {ev.loss:.4f} {_fmt_count(ev.throughput)} {ev.unit}/s ETA {_fmt_time(ev.eta_s)}")
    elif isinstance(ev, EvalMetrics):
        bar.line(f"eval (step {ev.step}): " + ", ".join(f"{k} {v:.4f}" for k, v in ev.metrics.items()), final=True)
    elif isinstance(ev, CheckpointSaved):
        bar.line(f"checkpoint saved: {ev.path} (step {ev.step})", final=True)
    elif isinstance(ev, ProbePredictions):
        for text, label, p in zip(ev.texts, ev.labels, ev.probabilities, strict=True):
            bar.line(f"probe (step {ev.step}): {text[:50]!r} -> {label} ({p:.2f})", final=True)
    elif isinstance(ev, RunFinished):
        bar.line(f"{ev.status}: {ev.message or ev.run_dir}", final=True)
        status = {"completed": 0, "stopped": 0, "diverged": 3}.get(ev.status, 1)
    return status


def stop_on_sigint(stop: threading.Event) -> Any:
    """First Ctrl-C: save and stop; second: abort. Returns the previous handler (None off the main thread)."""
    def on_sigint(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print("\nstopping: saving a checkpoint (Ctrl-C again to abort)...", file=sys.stderr)

    return signal.signal(signal.SIGINT, on_sigint) if threading.current_thread() is threading.main_thread() else None


def train_main(argv: list[str] | None = None) -> int:
    from engine.api import train
    from engine.checkpoint import read_config

    argv = list(sys.argv[1:] if argv is None else argv)
    first = argv[0] if argv and not argv[0].startswith("-") else None
    kind = first
    if kind in MODEL_CONFIGS:  # "word2bert-train KIND --help" lists the family's settings
        pre = _train_parser(kind).parse_known_args(argv)[0]
    else:
        pre = _train_parser(None).parse_known_args(argv)[0]
    try:
        if kind is None and pre.resume:
            kind = read_config(pre.resume)["kind"]
            argv = [kind, *argv]
    except Word2BertError as e:
        print(f"word2bert-train: {e}", file=sys.stderr)
        return 2
    if kind not in MODEL_CONFIGS:
        _train_parser(None).parse_args(argv)  # prints usage and exits
        return 2
    args = _train_parser(kind).parse_args(argv)
    out = args.resume or args.out
    if not out:
        print("word2bert-train: give --out RUN_DIR (or --resume RUN_DIR)", file=sys.stderr)
        return 2
    try:
        spec = RunSpec(kind=kind, out=out, corpus=args.corpus, device=args.device, seed=args.seed,
                       model=_model_config(kind, args), log_every=args.log_every, max_steps=args.max_steps,
                       checkpoint_every=args.checkpoint_every,
                       max_words=args.max_words, resume=bool(args.resume))
    except ValueError as e:
        print(f"word2bert-train: {e}", file=sys.stderr)
        return 2
    if args.background:
        lower_priority()
    stop = threading.Event()
    return run_events(lambda: train(spec, stop=stop), stop, prog="word2bert-train", json_events=args.json_events,
                      aborted="the last saved checkpoint is kept")


def run_events(events: Callable[[], Iterator[Any]], stop: threading.Event, *, prog: str, json_events: bool,
               aborted: str, failed_event_for: str | None = None) -> int:
    """Run a training generator for the command line: progress on stderr, JSON lines on stdout when asked,
    Ctrl-C stops it (saving), a second Ctrl-C aborts. ``failed_event_for``: a run folder, to end the JSON
    stream with a failed RunFinished when the run cannot start. Returns the exit status."""
    from engine.training.events import event_to_dict

    previous = stop_on_sigint(stop)
    bar = _Progress()
    status = 1
    try:
        for ev in events():
            if json_events:
                print(json.dumps(event_to_dict(ev)), flush=True)
            status = show_event(ev, bar, status)
    except (Word2BertError, ValueError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        if json_events and failed_event_for is not None:
            print(json.dumps({"event": "finished", "status": "failed", "step": 0, "run_dir": failed_event_for,
                              "message": str(e), "metrics": {}}), flush=True)
        return 2
    except KeyboardInterrupt:
        print(f"\naborted; {aborted}", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return status


def eval_main(argv: list[str] | None = None) -> int:
    from engine.api import load
    from engine.evaluate import TASKS, evaluate_handle

    p = argparse.ArgumentParser(prog="word2bert-eval", description="Evaluate a model (run folder, glove-6b-50d, vectors file).")
    p.add_argument("model")
    p.add_argument("--tasks", default="analogy,wordsim,simlex", help=f"comma-separated: {','.join(TASKS)}")
    p.add_argument("--corpus", default=None, help="corpus whose held-out part perplexity uses (default: the model's)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    try:
        result = evaluate_handle(load(args.model), tasks, args.corpus)
    except (Word2BertError, ValueError) as e:
        print(f"word2bert-eval: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


def export_main(argv: list[str] | None = None) -> int:
    from engine.api import load
    from engine.keyed_vectors import save_word2vec_format

    p = argparse.ArgumentParser(prog="word2bert-export", description="Export a model to another format.")
    p.add_argument("run_dir")
    p.add_argument("--to", choices=["word2vec", "hf", "slim"], required=True,
                   help="word2vec: static vectors file; hf: a transformers folder (BERT, GPT); "
                        "slim: a run folder with fp16 weights and no training state (for shipping)")
    p.add_argument("out")
    p.add_argument("--binary", action="store_true", help="word2vec binary format (default: text)")
    args = p.parse_args(argv)
    try:
        if args.to == "hf":
            from engine.export import export_hf

            export_hf(args.run_dir, args.out)
        elif args.to == "slim":
            from engine.export import export_slim

            export_slim(args.run_dir, args.out)
        else:
            handle = load(args.run_dir)
            save_word2vec_format(handle.static_vectors(), args.out, binary=args.binary)
    except Word2BertError as e:
        print(f"word2bert-export: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(train_main())
