"""A run's history: the checkpoints it kept, in step order — ours (``RUN/checkpoints/step-N``, written with
``--keep-every``) or a Hugging Face Trainer's (``checkpoint-500/``, ``checkpoint-1000/``, …) — each a folder
``load()`` opens on its own; the run folder itself is its latest save. A run that went on from another
(``init_from``) begins, at step 0, with that run's folder: the weights it started from."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.checkpoints.files import HISTORY
from engine.errors import CheckpointError

_OURS = re.compile(r"^step-(\d+)$")
_TRAINER = re.compile(r"^checkpoint-(\d+)$")


@dataclass(frozen=True)
class KeptCheckpoint:
    step: int
    path: str
    # the run this one went on from (its init_from, as its config.json names it), kept as step 0: the weights it
    # began with; "" for the run's own checkpoints
    began_from: str = ""

    def tokens(self) -> int | None:
        """Text tokens this run had trained on here (``tokens_seen``; where it began: none yet)."""
        return 0 if self.began_from else tokens_seen(self.path)


def run_history(run_dir: str | Path) -> list[KeptCheckpoint]:
    """Every checkpoint of a run, oldest first (the run folder itself last when it is a save of its own)."""
    run = Path(run_dir)
    if not run.is_dir():
        raise CheckpointError(f"no run folder at {run_dir}")
    kept: dict[int, Path] = {}
    history = run / HISTORY
    for folder in sorted(history.iterdir()) if history.is_dir() else []:
        match = _OURS.match(folder.name)
        if match and (folder / "config.json").is_file():
            kept[int(match.group(1))] = folder
    for folder in sorted(run.iterdir()):
        match = _TRAINER.match(folder.name)
        if match and (folder / "config.json").is_file():
            kept[int(match.group(1))] = folder
    config = run / "config.json"
    if config.is_file():
        try:
            step = int(json.loads(config.read_text(encoding="utf-8")).get("trained_steps", -1))
        except (ValueError, TypeError, AttributeError):
            step = -1
        if step >= 0 and step not in kept:
            kept[step] = run
    found = [KeptCheckpoint(step, str(kept[step])) for step in sorted(kept)]
    began = _began_from(run) if 0 not in kept else None
    if not found and began is None:
        raise CheckpointError(f"{run_dir} holds no checkpoints (ours keep them with --keep-every, and a run's "
                              "folder is a save of its own once it has saved; a Hugging Face Trainer writes "
                              "checkpoint-N folders)")
    return found if began is None else [began, *found]


def _began_from(run: Path) -> KeptCheckpoint | None:
    """The run a continued run went on from, as its step 0, while it is still where the run's config.json
    says and holds the save it began from (a folder moved, deleted or saved into since — a shipped model
    replaced by a newer one — is not where it began: none)."""
    from engine.checkpoints.reading import read_json, save_id
    from engine.checkpoints.shipped import run_folder

    try:
        # (a run still before its first save has no config.json yet: the settings its start logged say the same)
        config = read_json(run / "config.json") if (run / "config.json").is_file() else _started_info(run)
        config = config if isinstance(config, dict) else {}
        name = str(config.get("init_from") or "").strip()
        if not name:
            return None  # (it went on from nothing)
        recorded = Path(str(config.get("init_from_folder") or "")) if config.get("init_from_folder") else None
        folder = recorded if recorded is not None and recorded.is_dir() else run_folder(name) if name else None
    except (CheckpointError, OSError, ValueError):
        return None
    if folder is None or not (Path(folder) / "config.json").is_file() or Path(folder).resolve() == run.resolve():
        return None
    began_save = str(config.get("init_from_save") or "")  # (none in runs before it was recorded: trusted)
    if began_save and save_id(folder) != began_save:
        return None
    if config.get("init_from_steps") is not None:  # the steps behind it then; a folder saved into since has others
        try:  # (a shipped model replaced by this very run's export, in a run that recorded no save: not step 0)
            there = read_json(Path(folder) / "config.json")
            steps = int(there.get("trained_steps", 0) or 0) + int(there.get("init_from_steps", 0) or 0)
            if "trained_steps" in there and steps != int(config["init_from_steps"]):
                return None
        except (CheckpointError, OSError, ValueError, TypeError, AttributeError):
            return None
    return KeptCheckpoint(0, str(folder), began_from=name)


def _started_info(run: Path) -> dict[str, Any]:
    """What a run logged of itself when it started (the ``info`` of metrics.jsonl's first "started" event: where
    a continued run went on from, among others); empty where it logged none."""
    from engine.training.events import RunStarted, read_metrics

    try:
        return next((e.info for e in read_metrics(run) if isinstance(e, RunStarted)), {})
    except OSError:
        return {}


def tokens_seen(folder: str | Path) -> int | None:
    """Text tokens a contextual run had trained on at this checkpoint, from its config.json: steps × the
    tokens of text a step reads (``tokens_per_step``: padding of sentence windows not counted), or, in runs
    saved before that was written, steps × batch × accumulation × length. A Hugging Face Trainer's
    checkpoint: the ``num_input_tokens_seen`` its trainer_state.json logged (a Trainer counts them when asked
    to: ``include_num_input_tokens_seen``). None when the run does not say (static families, other folders)."""
    trainer = _trainer_tokens(Path(folder) / "trainer_state.json")
    if trainer is not None:
        return trainer
    try:
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
        steps = int(config["trained_steps"])
        if config.get("tokens_per_step"):
            return round(steps * float(config["tokens_per_step"]))
        model = config.get("model") or {}
        batch, length = int(model["batch_size"]), int(model["seq_len"])
        return steps * batch * int(model.get("accumulate", 1)) * length
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _trainer_tokens(path: Path) -> int | None:
    from engine.checkpoints.reading import read_json
    from engine.errors import CheckpointError

    if not path.is_file():
        return None
    try:
        state = read_json(path)
    except CheckpointError:
        return None
    if not isinstance(state, dict):
        return None
    entries = [state, *reversed([e for e in state.get("log_history") or [] if isinstance(e, dict)])]
    for entry in entries:  # the state's own count, else the latest logged one
        value = entry.get("num_input_tokens_seen")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return int(value)
    return None


HELD_OUT_SCORES = ("accuracy", "f1")  # the scores (0 to 1) an evaluation logs that a run's history plots
HELD_OUT_KINDS = ("loss", *HELD_OUT_SCORES)  # and its losses


def trainer_log(run_dir: str | Path) -> tuple[list[tuple[int, float]], list[tuple[int, str, float]]]:
    """A Hugging Face Trainer run's logged history, from its ``trainer_state.json`` (the run folder's, else
    the latest ``checkpoint-N``'s, which holds every entry before it): the training loss by step, and each
    evaluation's losses and scores (accuracy, F1) as (step, name, value). Empty when there is none or it cannot be
    read."""
    from engine.checkpoints.reading import read_json

    run = Path(run_dir)
    kept = sorted(((int(m.group(1)), f) for f in (run.iterdir() if run.is_dir() else [])
                   if (m := _TRAINER.match(f.name))), reverse=True)  # the latest first
    candidates = [run / "trainer_state.json", *(f / "trainer_state.json" for _, f in kept)]
    for path in candidates:
        if not path.is_file():
            continue
        try:
            state = read_json(path)
        except CheckpointError:
            continue
        entries = state.get("log_history") if isinstance(state, dict) else None
        if not isinstance(entries, list):
            continue
        losses, held_out = [], []
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("step"), (int, float)):
                continue
            step = int(entry["step"])
            if isinstance(entry.get("loss"), (int, float)):
                losses.append((step, float(entry["loss"])))
            for key, value in entry.items():
                if key.startswith("eval_") and key.endswith(HELD_OUT_KINDS) and isinstance(value, (int, float)):
                    held_out.append((step, key.replace("eval_", "eval "), float(value)))
        return sorted(losses), held_out
    return [], []


@dataclass(frozen=True)
class TrainerProgress:
    """How far a Hugging Face Trainer run has got, read off its folder without loading anything."""
    saved_step: int  # the step of its newest checkpoint-N whose trainer_state.json is written (-1: none)
    ended: bool  # it has finished (or there is no Trainer run to follow)
    written: float  # when its newest trainer_state.json was written (seconds since the epoch; 0: none)


def trainer_saved_step(run_dir: str | Path) -> int:
    """The step of a Trainer run's newest checkpoint-N whose trainer_state.json is written (-1: none): a listing
    and a stat or two, nothing read (the Run history looks at it every few seconds, on the window's thread)."""
    run = Path(run_dir)
    try:
        names = [f.name for f in run.iterdir()] if run.is_dir() else []
    except OSError:
        names = []
    steps = sorted((int(m.group(1)) for name in names if (m := _TRAINER.match(name))), reverse=True)
    return next((step for step in steps if (run / f"checkpoint-{step}" / "trainer_state.json").is_file()), -1)


def trainer_progress(run_dir: str | Path) -> TrainerProgress:
    """A Trainer writes a checkpoint's trainer_state.json after its weights, and ``save_state`` one in the run folder
    at the end: the run has ended when that one is there, or when its newest checkpoint reached ``max_steps``.
    A folder with no Trainer state at all has nothing to follow (ended)."""
    from engine.checkpoints.reading import read_json

    run = Path(run_dir)
    step = trainer_saved_step(run)
    if (run / "trainer_state.json").is_file() or step < 0:
        return TrainerProgress(step, True, 0.0)
    path = run / f"checkpoint-{step}" / "trainer_state.json"
    try:
        state, written = read_json(path), path.stat().st_mtime
    except (CheckpointError, OSError):
        return TrainerProgress(step, False, 0.0)
    most = state.get("max_steps") if isinstance(state, dict) else None
    at = state.get("global_step", step) if isinstance(state, dict) else step
    ended = not isinstance(most, int) or most <= 0 or (isinstance(at, int) and at >= most)
    return TrainerProgress(step, ended, written)
