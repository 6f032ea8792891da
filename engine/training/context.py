"""What a run's code needs besides its model: ``TrainContext`` holds the run folder, device and
precision, the stop flag, the step, the corpus, and builds the events (throughput over a window, ETA)."""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from engine.data.corpora import Corpus, get_corpus
from engine.data.text import tokenized_sentences
from engine.device import device_name, pick_device, precision_for
from engine.training.events import (
    CheckpointSaved,
    EvalMetrics,
    RunFinished,
    RunStarted,
    StepMetrics,
)

RATE_WINDOW_S = 0.5  # a StepMetrics' throughput covers at least this much time


class TrainContext:
    """What a family's ``run`` generator needs, and helpers that build its events."""

    def __init__(self, spec: Any, stop: threading.Event | None, kind: str | None = None, device: Any = None) -> None:
        """``spec``: a ``RunSpec`` (pre-training) or a ``FinetuneSpec``: ``out``, ``device``, ``seed``,
        ``resume``, ``log_every``, ``mixed_precision``; ``corpus`` too for pre-training. ``device``: the
        device already chosen (``engine.device.CPU`` for a run without torch); else ``pick_device``."""
        self.spec = spec
        self.kind = kind or spec.kind
        self.run_dir = Path(spec.out)
        self.resume = bool(spec.resume)
        self.stop = stop or threading.Event()
        self.device = device if device is not None else pick_device(spec.device)
        self.precision = precision_for(self.device, spec.mixed_precision)
        self.step = 0
        self.unit = "steps"
        self.total = 1.0
        self._t0 = time.perf_counter()
        self._last = (self._t0, 0.0)  # (time, units done) where the current speed window began
        self._rate = 0.0
        self.budget: Any = None  # the run's --max-minutes budget (engine.training.budget.Budget), if any
        # opens a model by name or folder (engine.handles.load.load), passed in from above by the callers that
        # have it (engine.api.train, word2bert-train): a run that reads another model (a tuned lens) needs it
        self.load: Any = None

    def budget_spent(self) -> float | None:
        """The fraction of the run's time budget used so far, when the learning rate follows the budget
        (``--budget-schedule``); None otherwise."""
        if self.budget is None or not getattr(self.spec, "budget_schedule", False):
            return None
        return float(self.budget.fraction())

    @functools.cached_property
    def corpus(self) -> Corpus:
        return get_corpus(self.spec.corpus)

    # ------------------------------------------------------------ data

    def sentence_stream(self, part: str, lowercase: bool) -> Iterable[list[str]]:
        """The tokenized sentences of a part, streamed (re-iterable: each pass reads the corpus again,
        nothing is kept in memory), capped at ``spec.max_words`` words for the train part."""
        ctx = self

        class Stream:
            def __iter__(self) -> Iterator[list[str]]:
                budget = ctx.spec.max_words if part == "train" else None
                return tokenized_sentences(ctx.corpus.sentences(part), lowercase, budget)

        return Stream()

    def sentences(self, part: str, lowercase: bool) -> list[list[str]]:
        """Tokenized sentences of the train or held-out part, capped at ``spec.max_words`` words."""
        budget = self.spec.max_words if part == "train" else None
        if budget is None and part == "heldout" and self.spec.max_words:
            budget = max(2000, self.spec.max_words // 20)
        return list(tokenized_sentences(self.corpus.sentences(part), lowercase, budget))

    # ------------------------------------------------------------ events

    def started(self, total: float, unit: str, info: dict[str, Any] | None = None) -> RunStarted:
        self.total, self.unit = float(max(total, 1)), unit
        self._t0 = time.perf_counter()
        self._last = (self._t0, 0.0)
        return RunStarted(str(self.run_dir), self.kind, device_name(self.device), self.total, unit,
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

    # the skeleton every loop shares (the gradient loop, word2vec's and GloVe's hand-written ones): the
    # same words for a run that diverged or stopped, whichever loop it was
    def diverged(self, what: str = "the loss", kept: str = "the last good checkpoint", hint: str = "") -> RunFinished:
        return self.finished("diverged", f"{what} is no longer finite; {kept} is kept" + (f" ({hint})" if hint else ""))

    def stopped(self, where: str = "", metrics: dict[str, float] | None = None) -> RunFinished:
        return self.finished("stopped", f"stopped {where or f'at step {self.step}'}; resume with --resume {self.run_dir}",
                             metrics)

    @staticmethod
    def finite(loss: float) -> bool:
        return math.isfinite(loss)


class LoggedLoss:
    """The loss summed over the steps between two logged events (numbers, or 0-d tensors on a GPU that are
    read only when an event logs them: no sync per step)."""

    def __init__(self) -> None:
        self.total: Any = 0.0
        self.count = 0
        self.last = 0.0

    def add(self, loss: Any, count: int = 1) -> None:
        """A step's summed loss over ``count`` examples (0: a step that did not compute its loss)."""
        self.total = self.total + loss
        self.count += count

    def take(self) -> float:
        """The mean since the last take, read from the device now; the sum starts again. With no step's loss
        since (steps that sample their loss), the last mean again."""
        if self.count:
            self.last = float(self.total) / self.count
        self.total, self.count = 0.0, 0
        return self.last
