"""The skeleton of the hand-written loops (word2vec's and GloVe's; n-gram counting has no steps): the loss
summed between logged events and read from the device only then, a loss that is no longer finite ends the
run as diverged, a save never overwrites the last good checkpoint with weights that are not finite, and a
stop (Ctrl-C, the app's Stop, ``--max-steps``) saves where the loop is and says how to resume. The gradient
loop (``engine.training.gradient_loop``) does the same for BERT, GPT, ELMo, NNLM, the heads and fine-tuning.

A loop drives it with ``yield from`` and returns when ``ended`` is set::

    loop = HandLoop(ctx, save=save, weights_finite=model.finite, hint="try a smaller --alpha")
    for info in steps:
        yield from loop.step(info["loss"], info["count"], epoch, done, lr)
        if loop.ended:
            return
        if at_an_epoch_end:
            yield from loop.epoch_end(position, evaluate, last=...)  # evaluate, save, stop if asked
        elif stopping_mid_epoch:
            yield from loop.stop(position)  # save where it is, end as stopped
        if loop.ended:
            return
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from engine.training.context import LoggedLoss, TrainContext
from engine.training.events import TrainEvent


class HandLoop:
    """``save(position)`` writes the run with its loop position (word2vec: epoch and chunk; GloVe: epoch and
    batch); ``weights_finite()`` says whether the weights may be saved; ``hint`` ends a divergence message."""

    def __init__(self, ctx: TrainContext, save: Callable[[dict[str, int]], None],
                 weights_finite: Callable[[], bool], hint: str = "", weights: str = "the vectors") -> None:
        self.ctx, self._save, self._finite = ctx, save, weights_finite
        self.hint, self.weights = hint, weights
        self.logged = LoggedLoss()
        self.ended = False
        self.metrics: dict[str, float] = {}  # the last epoch's evaluation (the run's end reports it)

    def past_max_steps(self) -> bool:
        limit = self.ctx.spec.max_steps
        return bool(limit and self.ctx.step >= limit)

    def step(self, loss: Any, count: int, epoch: int, done: float, lr: float, done_before: float = 0.0,
             log: bool = False) -> Iterator[TrainEvent]:
        """One step done: its loss counted; logged every ``log_every`` steps (or when ``log``)."""
        ctx = self.ctx
        ctx.step += 1
        self.logged.add(loss, count)
        if ctx.should_log() or log:
            value = self.logged.take()
            if not ctx.finite(value):
                self.ended = True
                yield ctx.diverged(hint=self.hint)
                return
            yield ctx.step_metrics(epoch, done, value, lr, done_before)

    def _diverged_weights(self) -> Iterator[TrainEvent]:
        """The weights are no longer finite: the run ends as diverged, and the last good checkpoint stays."""
        self.ended = True
        yield self.ctx.diverged(self.weights, hint=self.hint)

    def save(self, position: dict[str, int]) -> Iterator[TrainEvent]:
        """Save at ``position`` unless the weights are no longer finite."""
        if not self._finite():
            yield from self._diverged_weights()
            return
        self._save(position)
        yield self.ctx.saved()

    def stop(self, position: dict[str, int], where: str = "") -> Iterator[TrainEvent]:
        """Save where the loop is and end the run as stopped (resumable from there)."""
        yield from self.save(position)
        if not self.ended:
            self.ended = True
            yield self.ctx.stopped(where)

    def epoch_end(self, position: dict[str, int], evaluate: Callable[[], dict[str, float]],
                  last: bool) -> Iterator[TrainEvent]:
        """An epoch ended: evaluate, save, and stop there if asked to (or past ``--max-steps`` with epochs
        still to go). ``evaluate``'s metrics are kept in ``metrics`` for the run's end."""
        ctx = self.ctx
        if not self._finite():  # nothing to evaluate (checked once: GloVe's check builds its vectors)
            yield from self._diverged_weights()
            return
        self.metrics = evaluate()
        yield ctx.eval_metrics(self.metrics)
        self._save(position)
        yield ctx.saved()
        if ctx.stop.is_set() or (self.past_max_steps() and not last):
            self.ended = True
            yield ctx.stopped(f"after epoch {position['epoch']}")
