"""The generic training loop: ``train(spec, stop)`` yields events and writes metrics.jsonl.

Each model family provides ``run(ctx)``, a generator of events (see engine/training/runs.py). This
module owns what they share: the run folder, device, the stop flag, throughput/ETA, the metrics file,
the loss check (read from the device only every ``log_every`` steps) and clear failures.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import torch

from engine.checkpoint import read_config
from engine.config import RunSpec, config_from_dict
from engine.corpora import Corpus, get_corpus
from engine.device import device_name, pick_device, precision_for
from engine.errors import CheckpointError, Word2BertError
from engine.text import tokenized_sentences
from engine.training.events import (
    CheckpointSaved,
    EvalMetrics,
    RunFinished,
    RunStarted,
    StepMetrics,
    TrainEvent,
    event_to_dict,
)

RATE_WINDOW_S = 0.5  # a StepMetrics' throughput covers at least this much time


class TrainContext:
    """What a family's ``run`` generator needs, and helpers that build its events."""

    def __init__(self, spec: RunSpec, stop: threading.Event | None) -> None:
        self.spec = spec
        self.run_dir = Path(spec.out)
        self.stop = stop or threading.Event()
        self.device = pick_device(spec.device)
        self.precision = precision_for(self.device, spec.mixed_precision)
        self.step = 0
        self.unit = "steps"
        self.total = 1.0
        self._t0 = time.perf_counter()
        self._last = (self._t0, 0.0)  # (time, units done) where the current speed window began
        self._rate = 0.0
        self.corpus: Corpus = get_corpus(spec.corpus)

    # ------------------------------------------------------------ data

    def sentence_stream(self, part: str, lowercase: bool) -> Iterable[list[str]]:
        """The tokenized sentences of a part, streamed (re-iterable: each pass reads the corpus again,
        nothing is kept in memory), capped at ``spec.max_words`` words for the train part."""
        ctx = self

        class Stream:
            def __iter__(self) -> Iterator[list[str]]:
                budget = ctx.spec.max_words if part == "train" else None
                n = 0
                for words in tokenized_sentences(ctx.corpus.sentences(part), lowercase):
                    yield words
                    n += len(words)
                    if budget is not None and n >= budget:
                        return

        return Stream()

    def sentences(self, part: str, lowercase: bool) -> list[list[str]]:
        """Tokenized sentences of the train or held-out part, capped at ``spec.max_words`` words."""
        out: list[list[str]] = []
        budget = self.spec.max_words if part == "train" else None
        if budget is None and part == "heldout" and self.spec.max_words:
            budget = max(2000, self.spec.max_words // 20)
        n = 0
        for words in tokenized_sentences(self.corpus.sentences(part), lowercase):
            out.append(words)
            n += len(words)
            if budget is not None and n >= budget:
                break
        return out

    # ------------------------------------------------------------ events

    def started(self, total: float, unit: str, info: dict[str, Any] | None = None) -> RunStarted:
        self.total, self.unit = float(max(total, 1)), unit
        self._t0 = time.perf_counter()
        self._last = (self._t0, 0.0)
        return RunStarted(str(self.run_dir), self.spec.kind, device_name(self.device), self.total, unit,
                          self.step, info or {})

    def should_log(self) -> bool:
        return self.step % max(1, self.spec.log_every) == 0

    def step_metrics(self, epoch: int, done: float, loss: float, lr: float, done_before_run: float = 0.0) -> StepMetrics:
        now = time.perf_counter()
        last_t, last_done = self._last
        # the speed over at least RATE_WINDOW_S: events a few ms apart (word2vec's kernel on a fast corpus)
        # would show timer jitter, not speed; until then the last rate stands
        if not last_done:
            rate = (done - done_before_run) / max(now - self._t0, 1e-9)
            self._last, self._rate = (now, done), rate
        elif now - last_t >= RATE_WINDOW_S:
            rate = (done - last_done) / (now - last_t)
            self._last, self._rate = (now, done), rate
        else:
            rate = self._rate
        overall = (done - done_before_run) / max(now - self._t0, 1e-9)
        eta = (self.total - done) / overall if overall > 0 else math.inf
        return StepMetrics(self.step, epoch, min(1.0, done / self.total), loss, lr, rate, self.unit,
                           now - self._t0, eta)

    def eval_metrics(self, metrics: dict[str, float]) -> EvalMetrics:
        return EvalMetrics(self.step, {k: float(v) for k, v in metrics.items()})

    def saved(self) -> CheckpointSaved:
        return CheckpointSaved(self.step, str(self.run_dir))

    def finished(self, status: str, message: str = "", metrics: dict[str, float] | None = None) -> RunFinished:
        return RunFinished(status, self.step, str(self.run_dir), message, metrics or {})

    @staticmethod
    def finite(loss: float) -> bool:
        return math.isfinite(loss)


def _prepare_resume(spec: RunSpec) -> RunSpec:
    config = read_config(spec.out)
    if config["kind"] != spec.kind:
        raise CheckpointError(f"{spec.out} holds a {config['kind']} run, not {spec.kind}")
    spec.model = config_from_dict(spec.kind, config["model"])
    if "corpus" in config:
        spec.corpus = config["corpus"]
    return spec


def train(spec: RunSpec, stop: threading.Event | None = None) -> Iterator[TrainEvent]:
    """Train ``spec`` and yield its events; the last is always ``RunFinished``.

    Problems found before training starts (bad corpus, bad folder) raise a ``Word2BertError``.
    """
    from engine.training import distributed, runs

    main = distributed.is_main()
    if spec.resume:
        spec = _prepare_resume(spec)
    elif main and (Path(spec.out) / "config.json").exists():
        raise CheckpointError(f"{spec.out} already holds a run; use --resume to continue it or choose another --out")
    family = runs.FAMILIES[spec.kind]
    torch.manual_seed(spec.seed)
    ctx = TrainContext(spec, stop)
    ctx.run_dir.mkdir(parents=True, exist_ok=True)
    metrics_path = ctx.run_dir / "metrics.jsonl" if main else Path(os.devnull)  # only rank 0 writes
    with open(metrics_path, "a" if spec.resume else "w", encoding="utf-8") as sink:
        gen = family(ctx)
        while True:
            try:
                event = next(gen)
            except StopIteration:
                return
            except torch.OutOfMemoryError:
                event = ctx.finished("failed", "out of memory on the device: try a smaller --batch-size "
                                     "(the last checkpoint is kept)")
            except Word2BertError:
                raise
            sink.write(json.dumps(event_to_dict(event)) + "\n")
            sink.flush()
            yield event
            if isinstance(event, RunFinished):
                return


def read_metrics(run_dir: str | Path) -> list[TrainEvent]:
    """Re-read a run's metrics.jsonl (a finished run can be re-plotted from disk)."""
    from engine.training.events import event_from_dict

    path = Path(run_dir) / "metrics.jsonl"
    events = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                try:
                    events.append(event_from_dict(json.loads(line)))
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut short by a crash
    return events
