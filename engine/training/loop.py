"""Running a training generator: ``train(spec, stop)`` pre-trains a family; ``run_events`` is what every
run (pre-training and fine-tuning) goes through: the run folder checked, metrics.jsonl written with
every event, out-of-memory turned into a ``failed`` event, problems found before training raised.

Each family provides ``run(ctx)``, a generator of events: the static families' own step loops
(engine/training/static_runs.py) and the gradient loop of the contextual ones
(engine/training/contextual_runs.py on engine/training/gradient_loop.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine import families
from engine.checkpoints.files import CONFIG
from engine.checkpoints.reading import has_training_state, read_config, read_training_state
from engine.config.checks import config_from_dict
from engine.config.run_spec import RunSpec
from engine.data.corpora import trained_on
from engine.errors import CheckpointError, SaveError, Word2BertError
from engine.training.budget import cpu_budget, wall_budget
from engine.training.context import TrainContext
from engine.training.events import METRICS, RunFinished, TrainEvent, event_to_dict, read_metrics  # noqa: F401 - read_metrics re-exported

RunGenerator = Callable[[TrainContext], Iterator[TrainEvent]]  # a family's pretraining recipe


def family(kind: str) -> RunGenerator:
    """The run generator of a model family (engine.families; its module imported now: they import the
    models)."""
    return families.family(kind).run_generator()


def runs_without_torch(spec: RunSpec) -> bool:
    """Whether this run trains on the CPU without importing torch: a family whose declaration says it can
    (word2vec with its compiled kernel, numba installed) where no GPU can be
    (``engine.device.accelerator_possible``) or the CPU is asked for."""
    declaration = families.family(spec.kind)
    if not declaration.without_torch or spec.device not in (None, "", "auto", "cpu"):
        return False
    if spec.device != "cpu":
        from engine.device import accelerator_possible

        if accelerator_possible():
            return False
    return declaration.trains_without_torch()


def _out_of_memory(error: BaseException) -> bool:
    torch = sys.modules.get("torch")  # a run that never imported torch cannot run out of device memory
    return torch is not None and isinstance(error, torch.OutOfMemoryError)


def check_new_run_folder(out: str | Path) -> None:
    if (Path(out) / CONFIG).exists():
        raise CheckpointError(f"{out} already holds a run; use --resume to continue it or choose another --out")


def run_events(ctx: TrainContext, events: Iterator[TrainEvent], *, write: bool = True) -> Iterator[TrainEvent]:
    """Yield a run's events, each also appended to RUN/metrics.jsonl (``write``: only DDP's rank 0 writes),
    until the ``RunFinished``. Out of device memory ends the run as ``failed`` (its last checkpoint stays);
    a ``Word2BertError`` (bad corpus, bad folder) propagates to the caller."""
    created = write and not ctx.resume and not ctx.run_dir.exists()
    ctx.run_dir.mkdir(parents=True, exist_ok=True)
    try:
        yield from _logged_events(ctx, events, write)
    except BaseException:
        if created:  # it failed (or was stopped) before anything was saved: no empty run folder stays
            _remove_unsaved(ctx.run_dir)
        raise


def _remove_unsaved(run_dir: Path) -> None:
    import shutil

    if not (run_dir / "config.json").exists():
        shutil.rmtree(run_dir, ignore_errors=True)


def _logged_events(ctx: TrainContext, events: Iterator[TrainEvent], write: bool) -> Iterator[TrainEvent]:
    path = ctx.run_dir / METRICS if write else Path(os.devnull)
    with open(path, "a" if ctx.resume else "w", encoding="utf-8") as metrics_file:
        sink: Any = metrics_file
        while True:
            try:
                event = next(events)
            except StopIteration:
                return
            except SaveError as e:  # a full disk: the run ends with the reason, its last checkpoint intact
                event = ctx.finished("failed", str(e))
            except Word2BertError:
                raise
            except Exception as e:
                if not _out_of_memory(e):
                    raise
                event = ctx.finished("failed", "out of memory on the device: try a smaller --batch-size "
                                     "(the last checkpoint is kept)")
            if sink is not None:
                try:
                    sink.write(json.dumps(event_to_dict(event)) + "\n")
                    sink.flush()
                except OSError:  # a full disk: the events still reach the caller
                    sink = None
            yield event
            if isinstance(event, RunFinished):
                return


def _prepare_resume(spec: RunSpec) -> RunSpec:
    config = read_config(spec.out)
    if config["kind"] != spec.kind:
        raise CheckpointError(f"{spec.out} holds a {config['kind']} run, not {spec.kind}")
    spec.model = config_from_dict(spec.kind, config["model"])
    if "corpus" in config:
        spec.corpus = trained_on(config)  # the same text, though "default" has changed since
    return spec


def _carry_budget(spec: RunSpec) -> float:
    """A resumed run whose learning rate follows its time budget (``--budget-schedule``) keeps that
    schedule: the budget counts the whole run (a larger ``--max-minutes`` extends it), on the clock it
    was started with. Returns what earlier sessions used of it, in seconds."""
    if not has_training_state(spec.out):
        return 0.0
    saved: Any = read_training_state(spec.out, mmap=True).get("budget")  # the loop reads the whole state later
    try:
        seconds, clock, used = float(saved["seconds"]), str(saved["clock"]), float(saved["used_s"])
    except (TypeError, KeyError, ValueError):  # no budget schedule saved (or not one we can read)
        return 0.0
    spec.budget_schedule = True
    spec.max_minutes = spec.max_minutes or seconds / 60
    spec.budget_clock = clock if clock in ("wall", "cpu") else "wall"
    return max(0.0, used)


def train(spec: RunSpec, stop: threading.Event | None = None, load: Any = None) -> Iterator[TrainEvent]:
    """Pre-train ``spec`` and yield its events; the last is always ``RunFinished``. ``load``: how a run that
    reads another model opens it (``engine.handles.load.load``, passed in from above).

    Problems found before training starts (bad corpus, bad folder) raise a ``Word2BertError``.
    """
    no_torch = runs_without_torch(spec)
    distributed: Any = None
    if not no_torch:
        from engine.training import distributed
    main = distributed is None or distributed.is_main()
    spent_before = 0.0
    if spec.resume:
        spec = _prepare_resume(spec)
        spent_before = _carry_budget(spec)
    elif main:
        check_new_run_folder(spec.out)
    run = family(spec.kind)
    if no_torch:
        from engine.device import CPU

        ctx = TrainContext(spec, stop, device=CPU)
    else:
        import torch

        torch.manual_seed(spec.seed)
        ctx = TrainContext(spec, stop)
    ctx.load = load
    budget = None
    if spec.max_minutes:  # a time budget: when it is spent the run stops as on Stop (saved, resumable)
        make = cpu_budget if spec.budget_clock == "cpu" else wall_budget
        budget = make(spec.max_minutes * 60, ctx.stop.set, spent_before)
        budget.start()
        ctx.budget = budget
    try:
        for event in run_events(ctx, run(ctx), write=main):
            if isinstance(event, RunFinished) and event.status == "stopped" and budget is not None and budget.finished.is_set():
                event = dataclasses.replace(event, message=f"the {spec.max_minutes:g}-minute {spec.budget_clock} budget is spent: {event.message}")
            yield event
    finally:
        if budget is not None:
            budget.cancel()
        if distributed is not None:
            distributed.cleanup()


