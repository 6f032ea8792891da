"""Reading a run folder back: config.json validated before anything is built, the weights checked
against it (keys, shapes, the same save), the loop state of a resume. Loaders (engine/handles) read
``kind`` from config.json and rebuild with strict key and shape checks (``read_tensors``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from engine.checkpoints import file_lock
from engine.checkpoints.files import (
    CONFIG,
    PICKLE_SUFFIXES,
    STATE,
    STATE_JSON,
    STATE_LAYOUT,
    WEIGHTS,
    refuse_pickle,
)
from engine.checkpoints.saves import COMMIT, OWNER, STAGING, finish_interrupted_save
from engine.config.settings import FORMAT_VERSION
from engine.errors import CheckpointError

T = TypeVar("T")
COMMIT_WAIT_S = 10.0  # a commit moves a few files in place: milliseconds; a reader waits at most this long


class MixedSave(CheckpointError):
    """config.json and model.safetensors come from two saves (read while a save was being committed)."""

MAX_CONFIG_BYTES = 10 * 2**20  # a config.json is a few kB; anything this large is not one


def read_json(path: Path) -> Any:
    """A JSON file read safely: only a regular file (not a folder, a FIFO or a device), at most
    MAX_CONFIG_BYTES, nesting that Python can parse."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError as e:
        raise CheckpointError(f"{path} cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(mode):
        raise CheckpointError(f"{path} is not a regular file (a folder, a pipe or a device): refused")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise CheckpointError(f"{path} cannot be read ({e.strerror})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise CheckpointError(f"{path} is over {MAX_CONFIG_BYTES // 2**20} MB: not a word2bert config")
    try:
        return json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path} is not valid JSON (truncated or damaged?): {e}") from None
    except RecursionError:
        raise CheckpointError(f"{path} is nested too deeply to be a word2bert config") from None


def read_config(run_dir: str | Path) -> dict[str, Any]:
    """Read and validate config.json of a word2bert run folder."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise CheckpointError(f"no run folder at {run_dir}")
    if run_dir.is_file():
        refuse_pickle(run_dir)
        raise CheckpointError(f"{run_dir} is a file, not a run folder")
    if (run_dir / STAGING).is_dir() and os.access(run_dir, os.W_OK):
        try:
            finish_interrupted_save(run_dir)  # a kill during a save: finish it (or drop a partial one)
        except OSError as e:
            raise CheckpointError(f"{run_dir}: an interrupted save could not be finished ({e})") from None
    cfg_path = run_dir / CONFIG
    if not cfg_path.exists():
        pickles = sorted(p.name for p in run_dir.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES and p.name != STATE)
        if pickles:
            raise CheckpointError(
                f"{run_dir} holds only pickle-based weights ({', '.join(pickles)}); they are refused, never "
                "unpickled. Convert them to safetensors first."
            )
        raise CheckpointError(f"{run_dir} has no config.json: it is not a run folder (or the save was interrupted)")
    config = read_json(cfg_path)
    if not isinstance(config, dict):
        raise CheckpointError(f"{cfg_path} does not hold a JSON object")
    if "format_version" not in config:
        if "model_type" in config or "architectures" in config:
            raise CheckpointError(f"{run_dir} is a Hugging Face checkpoint, not a word2bert run folder")
        raise CheckpointError(f"{cfg_path} has no format_version: not written by word2bert")
    version = config["format_version"]
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CheckpointError(
            f"{run_dir} was written by a newer word2bert (format {version}; this one reads up to "
            f"{FORMAT_VERSION}); upgrade word2bert to open it"
        )
    if not isinstance(config.get("kind"), str):
        raise CheckpointError(f"{cfg_path}: 'kind' must name a model family, not {config.get('kind')!r}")
    return config


def read_tensors(run_dir: str | Path, config: Mapping[str, Any],
                 expected: Mapping[str, tuple[int, ...]] | None = None, framework: str = "pt") -> dict[str, Any]:
    """Load model.safetensors; check it belongs to this config.json and has exactly the expected keys/shapes.
    ``framework``: "pt" for torch tensors, "np" for numpy arrays (no torch imported)."""
    from safetensors import safe_open

    path = Path(run_dir) / WEIGHTS
    if not path.exists():
        raise CheckpointError(f"{run_dir} has no {WEIGHTS}")
    try:
        tensors: dict[str, Any] = {}
        if framework == "pt":  # (not safe_open's "pt": it left ints behind, engine/data/safetensors_torch.py)
            from engine.data.safetensors_torch import read_safetensors

            tensors, meta = read_safetensors(path)
        else:
            with safe_open(str(path), framework=framework) as f:
                meta = f.metadata() or {}
                for key in f.keys():  # noqa: SIM118 - safe_open is not a mapping
                    tensors[key] = f.get_tensor(key)
    except Exception as e:  # safetensors raises its own error types for damaged files
        raise CheckpointError(f"{path} is damaged or truncated ({e})") from None
    if config.get("save_id") and meta.get("save_id") != config["save_id"]:
        raise MixedSave(f"{run_dir}: config.json and {WEIGHTS} come from different saves (an interrupted save?)")
    if expected is not None:
        check_shapes(tensors, expected, str(run_dir))
    return tensors


def check_shapes(tensors: Mapping[str, Any], expected: Mapping[str, tuple[int, ...]], where: str) -> None:
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    wrong = sorted(
        f"{k} {tuple(tensors[k].shape)} (expected {tuple(expected[k])})"
        for k in set(expected) & set(tensors)
        if tuple(tensors[k].shape) != tuple(expected[k])
    )
    problems = []
    if missing:
        problems.append("missing: " + ", ".join(missing))
    if unexpected:
        problems.append("unexpected: " + ", ".join(unexpected))
    if wrong:
        problems.append("wrong shape: " + ", ".join(wrong))
    if problems:
        raise CheckpointError(f"{where}: weights do not match the config; " + "; ".join(problems))


def read_training_state(run_dir: str | Path, mmap: bool = False) -> dict[str, Any]:
    """The saved loop state of a run; ``mmap``: tensors stay on disk until read (a glance at its small
    entries costs no copy of the weights and optimiser moments). A state of a newer layout than this
    version writes (``STATE_LAYOUT``) is refused by name; one without a layout number is of layout 0."""
    path = Path(run_dir) / STATE
    if not path.exists() and (Path(run_dir) / STATE_JSON).exists():  # a run saved without torch
        path = Path(run_dir) / STATE_JSON
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise CheckpointError(f"{path} cannot be read ({e})") from None
        if not isinstance(state, dict):
            raise CheckpointError(f"{path} is not a training state (a JSON object)")
        return _known_layout(state, path)
    if not path.exists():
        raise CheckpointError(f"{run_dir} has no {STATE}: it cannot be resumed")
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True, mmap=mmap)
    except Exception as e:
        raise CheckpointError(f"{path} cannot be read safely ({e})") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} is not a training state (a dictionary)")
    return _known_layout(state, path)



def has_training_state(run_dir: str | Path) -> bool:
    """Whether a run folder holds a loop state to resume from (either form)."""
    return (Path(run_dir) / STATE).exists() or (Path(run_dir) / STATE_JSON).exists()



def _known_layout(state: dict[str, Any], path: Path) -> dict[str, Any]:
    layout = state.get("layout", 0)
    if not isinstance(layout, int) or isinstance(layout, bool) or layout > STATE_LAYOUT:
        raise CheckpointError(f"{path} was saved by a newer word2bert (training-state layout {layout!r}; this "
                              f"version reads up to {STATE_LAYOUT}): resume it with that version, or load its weights")
    return state


def committing(run_dir: str | Path) -> bool:
    """Whether a live process is moving a complete save into ``run_dir`` right now (its files are a mix
    of two saves for these milliseconds)."""
    stage = Path(run_dir) / STAGING
    return (stage / COMMIT).is_file() and file_lock.held(stage / OWNER)


def save_id(run_dir: str | Path) -> str:
    """The ``save_id`` of a run folder's config.json ("" when there is none or it cannot be read safely)."""
    try:
        config = read_json(Path(run_dir) / CONFIG)  # a regular file of a sane size only (never a pipe left open)
    except CheckpointError:
        return ""
    return str(config.get("save_id") or "") if isinstance(config, dict) else ""


def read_complete(run_dir: str | Path, read: Callable[[], T], wait_s: float = COMMIT_WAIT_S) -> T:
    """``read()`` of a run folder that a training process may be saving into, seeing one complete save:
    it waits out a commit in progress, and reads again when a save was committed while it read (its
    config.json's ``save_id`` changed) or it met two saves' files (``MixedSave``). A run saved into so
    often that no read of ``wait_s`` seconds finds it still is refused (``MixedSave``), never read mixed."""
    import time

    run_dir = Path(run_dir)
    deadline = time.monotonic() + wait_s
    pause = 0.005
    while True:
        if committing(run_dir) and time.monotonic() < deadline:
            time.sleep(0.01)
            continue
        before = save_id(run_dir)
        try:
            result = read()
        except MixedSave:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
            continue
        if save_id(run_dir) == before and not committing(run_dir):
            return result
        # a save landed (or is landing) while we read: what we read may mix the two
        if time.monotonic() >= deadline:
            raise MixedSave(f"{run_dir}: a training process saved into it during every read for {wait_s:.0f} s; "
                            "try again when it saves less often")
        time.sleep(pause)  # a little longer each time: a reader slower than the saves finds a still moment
        pause = min(pause * 2, 0.2)
