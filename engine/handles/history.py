"""A run's history: the checkpoints it kept, in step order — ours (``RUN/checkpoints/step-N``, written with
``--keep-every``) or a Hugging Face Trainer's (``checkpoint-500/``, ``checkpoint-1000/``, …) — each a folder
``load()`` opens on its own; the run folder itself is its latest save."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from engine.checkpoints.files import HISTORY
from engine.errors import CheckpointError

_OURS = re.compile(r"^step-(\d+)$")
_TRAINER = re.compile(r"^checkpoint-(\d+)$")


@dataclass(frozen=True)
class KeptCheckpoint:
    step: int
    path: str


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
    if not kept:
        raise CheckpointError(f"{run_dir} holds no checkpoints (ours keep them with --keep-every; a Hugging Face "
                              "Trainer writes checkpoint-N folders)")
    return [KeptCheckpoint(step, str(kept[step])) for step in sorted(kept)]


def tokens_seen(folder: str | Path) -> int | None:
    """Text tokens a contextual run had trained on at this checkpoint, from its config.json: steps × the
    tokens of text a step reads (``tokens_per_step``: padding of sentence windows not counted), or, in runs
    saved before that was written, steps × batch × accumulation × length. None when the run does not say
    (static families, Hugging Face folders)."""
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
