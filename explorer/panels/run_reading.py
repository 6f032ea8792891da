"""What the Run history reads of a run folder, in a worker: its kept checkpoints, its training and held-out loss,
the scores cached for it, and whether it is still training (so the panel follows it as it goes on); and what the
Pretrain tab reads of a run whose curves it shows."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.widgets.run_follower import progress_mark

STILL_TRAINING_S = 600  # a run that has not finished and logged within this long is said to be still training


@dataclass(frozen=True)
class RunRead:
    run_dir: str
    history: list[Any]  # KeptCheckpoint, oldest first (empty: none kept yet, but a loss was logged)
    losses: list[tuple[int, float]]  # (step, training loss)
    held_out: list[tuple[int, str, float]]  # (step, name, loss) of the run's own evaluations
    held_out_scores: list[tuple[int, str, float]] = field(default_factory=list)  # (step, name, 0-1): their accuracies
    cached: list[dict[str, Any]] = field(default_factory=list)  # checkpoint scores computed before
    finished: bool = True  # its last event says it ended (or it is not a run of ours: nothing to follow)
    recent: bool = False  # not finished, and its metrics were written within STILL_TRAINING_S
    progress: int = -1  # its progress_mark when read: its metrics.jsonl's size, a Trainer's newest saved step


def read_run(run_dir: str, tasks: tuple[str, ...], cached_scores: bool = True) -> RunRead:
    """Read a run folder (in a worker: it lists folders and reads files). A folder with neither a checkpoint nor a
    logged loss raises CheckpointError, saying why; ``cached_scores``: also the checkpoint scores cached before."""
    from engine import api

    size = progress_mark(run_dir)  # (before reading: what is appended meanwhile is read next time)
    try:
        history = api.run_history(run_dir)
        none_kept = None
    except api.CheckpointError as e:  # a run still before its first save: its loss so far, if it logged one
        history, none_kept = [], e
    try:
        events = api.read_metrics(run_dir)
    except (api.Word2BertError, OSError):
        events = []  # a Trainer's folder: no metrics.jsonl of ours
    losses = [(e.step, e.loss) for e in events if isinstance(e, api.StepMetrics)]
    held_out = [held for e in events if isinstance(e, api.EvalMetrics) for held in _held_out_losses(e)]
    scores = [held for e in events if isinstance(e, api.EvalMetrics) for held in held_out_scores(e.step, e.metrics)]
    if not events:  # a Hugging Face Trainer's run: its trainer_state.json's log
        losses, logged = api.trainer_log(run_dir)
        held_out = [(step, key, value) for step, key, value in logged if key.endswith("loss")]
        scores = [score for step, key, value in logged for score in held_out_scores(step, {key: value})]
    if none_kept is not None and not losses:
        raise none_kept
    cached = list(api.checkpoint_scores(run_dir, tasks, cached_only=True)) if history and cached_scores else []
    if events:
        finished = isinstance(events[-1], api.RunFinished)
        recent = not finished and _written_lately(run_dir)
    else:  # a Trainer's run (or none of ours): followed until it has ended
        trainer = api.trainer_progress(run_dir)
        finished, recent = trainer.ended, not trainer.ended and time.time() - trainer.written < STILL_TRAINING_S
    return RunRead(str(run_dir), history, losses, held_out, scores, cached, finished, recent, size)


@dataclass(frozen=True)
class CurvesRead:
    """A run's metrics.jsonl as the Pretrain tab re-plots it (``whole``: drawn afresh, else only what is new)."""
    run_dir: str
    events: list[Any]
    whole: bool
    finished: bool
    recent: bool
    progress: int  # its progress_mark when read


def read_curves(run_dir: str, whole: bool) -> CurvesRead:
    """Read a run's training events (in a worker); OSError where it has no metrics.jsonl to read."""
    from engine import api

    size = progress_mark(run_dir)  # (before reading: what is appended meanwhile is read next time)
    events = api.read_metrics(run_dir)
    finished = bool(events) and isinstance(events[-1], api.RunFinished)
    return CurvesRead(str(run_dir), events, whole, finished, not finished and _written_lately(run_dir), size)


def _held_out_losses(ev: Any) -> list[tuple[int, str, float]]:
    """An evaluation's held-out losses (mlm_loss, loss, …); for one that logged only a perplexity (ELMo runs made
    before 2026-12-06: forward, backward and their geometric mean), its log, the loss on the training loss's scale
    (nats a word, the mean of both directions)."""
    losses = [(ev.step, key, value) for key, value in ev.metrics.items() if key.endswith("loss")]
    perplexity = ev.metrics.get("perplexity")
    if not losses and isinstance(perplexity, int | float) and perplexity > 0:
        losses.append((ev.step, "loss", math.log(perplexity)))
    return losses


def held_out_scores(step: int, metrics: dict[str, Any]) -> list[tuple[int, str, float]]:
    """An evaluation's scores between 0 and 1 (mlm_accuracy, nsp_accuracy, sense_pair_accuracy, a Trainer's
    eval_accuracy or eval_f1), plotted where the checkpoints' scores are; the counts beside them are not."""
    from engine.api import HELD_OUT_SCORES

    return [(step, key, float(value)) for key, value in metrics.items()
            if key.endswith(HELD_OUT_SCORES) and isinstance(value, int | float) and 0 <= value <= 1]


def _written_lately(run_dir: str) -> bool:
    from engine import api

    try:
        return time.time() - (Path(run_dir) / api.METRICS).stat().st_mtime < STILL_TRAINING_S
    except OSError:
        return False
