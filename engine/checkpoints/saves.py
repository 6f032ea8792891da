"""Saving a checkpoint all or nothing: staged in ``RUN/.saving/``, committed by a marker, finished after
a kill (``finish_interrupted_save``); config.json and the weights carry the same ``save_id``, so files
from two saves are never taken for one."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine import __version__
from engine.checkpoints import file_lock
from engine.checkpoints.files import (
    CONFIG,
    FILE_MODE,
    STATE,
    STATE_JSON,
    STATE_LAYOUT,
    WEIGHTS,
    fsync,
    json_default,
)
from engine.config.settings import FORMAT_VERSION
from engine.errors import SaveError

if TYPE_CHECKING:
    import torch

STAGING = ".saving"  # a save in progress: every file of it, written here first
COMMIT = "COMMIT"  # in STAGING once the save is complete: from then on it is finished, even after a kill
OWNER = "OWNER"  # in STAGING: the process saving (a save of a live process is never finished or dropped)
LOW_SPACE = 64 * 2**20


def _why(run_dir: Path, error: BaseException) -> str:
    """What went wrong with a save, in words: a full disk says so (torch and safetensors do not)."""
    import errno
    import shutil

    text = str(error) or type(error).__name__
    try:
        free = shutil.disk_usage(run_dir).free
    except OSError:
        free = None
    full = (isinstance(error, OSError) and error.errno == errno.ENOSPC) or "os error 28" in text \
        or (free is not None and free < LOW_SPACE)
    if full:
        left = f" ({free / 2**20:.0f} MB left)" if free is not None else ""
        return f"the disk is full{left}: free some space and resume ({text})"
    return text


def save_run(run_dir: str | Path, kind: str, config: Mapping[str, Any],
             tensors: Mapping[str, torch.Tensor | np.ndarray],
             files: Mapping[str, Callable[[Path], None]] | None = None,
             training_state: Mapping[str, Any] | None = None, dtype: torch.dtype | None = None) -> Path:
    """Write a checkpoint into ``run_dir`` (created if needed), all or nothing. ``files`` maps names to
    writers.

    Every file is written and synced in ``RUN/.saving/`` first; a ``COMMIT`` marker then makes the save
    complete, and its files are moved into place (config.json last). A kill before the marker leaves
    the previous save untouched (the staging folder is removed at the next save or load); a kill after
    it is finished by the next save or load (``finish_interrupted_save``). A failure (a full disk)
    raises ``SaveError`` with the previous save intact and nothing left behind."""
    run_dir = Path(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        finish_interrupted_save(run_dir)
    except OSError as e:
        raise SaveError(f"could not save to {run_dir}: {_why(run_dir, e)}") from None
    save_id = uuid.uuid4().hex
    save_file, flat = _flatten(tensors, dtype)
    doc = {"format_version": FORMAT_VERSION, "kind": kind, "engine_version": __version__, "save_id": save_id, **config}
    config_bytes = json.dumps(doc, indent=2, default=json_default).encode()
    stage = run_dir / STAGING
    order: list[str] = []
    owner: file_lock.HeldLock | None = None
    try:
        owner = _claim_stage(run_dir, save_id)
        for name, writer in (files or {}).items():
            writer(stage / name)
            order.append(name)
        save_file(flat, str(stage / WEIGHTS), metadata={"save_id": save_id, "kind": kind})
        order.append(WEIGHTS)
        if training_state is not None:
            training_state = {"layout": STATE_LAYOUT, **training_state}
        if training_state is not None and "torch" not in sys.modules and _plain(training_state):
            (stage / STATE_JSON).write_text(json.dumps(dict(training_state)))  # no torch to load for a resume
            order.append(STATE_JSON)
        elif training_state is not None:
            import torch

            torch.save(dict(training_state), stage / STATE)
            order.append(STATE)
        (stage / CONFIG).write_bytes(config_bytes)
        order.append(CONFIG)  # last: a folder whose config.json is new has every other new file
        for name in order:
            fsync(stage / name)
            if (stage / name).is_file():
                os.chmod(stage / name, FILE_MODE)
        (stage / COMMIT).write_text(json.dumps(order))
        fsync(stage / COMMIT)
        fsync(stage)
    except Exception as e:  # OSError, or torch's and safetensors' own errors for a failed write
        _release(owner)
        _drop(stage)
        raise SaveError(f"could not save the checkpoint in {run_dir}: {_why(run_dir, e)}; the previous "
                        "checkpoint is intact") from None
    except BaseException:  # Ctrl-C in the middle of a save: the previous checkpoint stays
        _release(owner)
        _drop(stage)
        raise
    try:
        _commit(run_dir)
    finally:  # a commit cut short keeps its staging folder: the next save or load finishes it
        _release(owner)
    if stage.exists():  # Windows: the locked owner file could not be removed while held
        _drop(stage)
    return run_dir


def _claim_stage(run_dir: Path, save_id: str) -> file_lock.HeldLock:
    """Make ``RUN/.saving`` with a locked owner file already in it: made as ``.saving.<id>``, locked,
    then renamed, so that no reader ever sees the staging folder of a live save unlocked (it would take
    it for a dead one's and remove it). A staging folder already there (another live save) fails."""
    pending = run_dir / f"{STAGING}.{save_id}"
    pending.mkdir()
    owner = file_lock.hold(pending / OWNER, str(os.getpid()))
    try:
        if (run_dir / STAGING).exists():
            raise FileExistsError(f"{run_dir / STAGING} exists: another save is in progress")
        os.rename(pending, run_dir / STAGING)
    except BaseException:
        owner.release()
        _drop(pending)
        raise
    return owner


def _release(lock: file_lock.HeldLock | None) -> None:
    if lock is not None:
        lock.release()


def _flatten(tensors: Mapping[str, Any], dtype: Any) -> tuple[Callable[..., None], dict[str, Any]]:
    """The tensors as safetensors writes them, copied (it refuses ones that share memory), and its writer:
    numpy's when every one is a numpy array at its own precision (no torch needed), else torch's."""
    if dtype is None and all(isinstance(t, np.ndarray) for t in tensors.values()):
        from safetensors.numpy import save_file as save_numpy

        return save_numpy, {name: np.array(t, order="C", copy=True) for name, t in tensors.items()}
    import torch
    from safetensors.torch import save_file

    flat = {}
    for name, t in tensors.items():
        t = torch.from_numpy(np.ascontiguousarray(t)) if isinstance(t, np.ndarray) else t.detach().cpu()
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        flat[name] = t.contiguous().clone()
    return save_file, flat


def _plain(value: Any) -> bool:
    """Whether a training state is numbers, strings and lists/dicts of them (JSON keeps it exactly)."""
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def _drop(stage: Path) -> None:
    import shutil

    shutil.rmtree(stage, ignore_errors=True)


def _commit(run_dir: Path) -> None:
    """Move a complete staged save into place (again after a kill: a move already done is skipped)."""
    import shutil

    stage = run_dir / STAGING
    order = json.loads((stage / COMMIT).read_text())
    for name in order:
        if (stage / name).exists():
            os.replace(stage / name, run_dir / name)
    for new, old in ((STATE, STATE_JSON), (STATE_JSON, STATE)):  # the loop state is in one form only
        if new in order:
            (run_dir / old).unlink(missing_ok=True)
    fsync(run_dir)
    shutil.rmtree(stage, ignore_errors=True)


def _pid_in(text: str) -> int:
    import re

    match = re.search(r"(?:^|\.tmp)(\d+)", text.strip())
    return int(match.group(1)) if match else 0


def _alive(pid: int) -> bool:
    """Whether another process with this id runs: only where no lock can say (a temporary file on
    Windows), since ids are reused."""
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to someone else
        return True
    return True


PENDING_GRACE_S = 30.0  # a save's folder not yet renamed to STAGING: left alone this long when unlocked


def _save_in_flight(stage: Path) -> bool:
    """Whether a live process is saving into ``stage``: it holds the lock on the owner file (an id
    written in it is not trusted: ids are reused). The lock is taken before the folder gets its name."""
    return file_lock.held(stage / OWNER)


def _dead_pending(path: Path) -> bool:
    """A ``.saving.<id>`` folder of a save killed before its folder was renamed: unlocked and old enough
    that it is not a live save between making the folder and locking its owner file."""
    import time

    if file_lock.held(path / OWNER):
        return False
    try:
        return time.time() - path.stat().st_mtime > PENDING_GRACE_S
    except OSError:
        return False


def _stray_in_use(path: Path) -> bool:
    """Whether a temporary file is being written by a live process: its lock on POSIX (atomic writes hold
    one), else (Windows) the process id in its name."""
    if file_lock.fcntl is not None:
        return file_lock.held(path)
    return _alive(_pid_in(path.name))


def finish_interrupted_save(run_dir: str | Path) -> bool:
    """A save cut short (a kill, a crash): finish it if it was complete, else drop it, and remove stray
    temporary files. True if there was anything to do. Needs write access; a read-only folder is left
    as it is (and reads its last complete save)."""
    import shutil

    run_dir = Path(run_dir)
    stage = run_dir / STAGING
    did = False
    if stage.is_dir() and _save_in_flight(stage):
        return False  # another process is saving right now (a run training while the app reads it)
    if stage.is_dir():
        try:
            committed = (stage / COMMIT).is_file() and isinstance(json.loads((stage / COMMIT).read_text()), list)
        except (OSError, ValueError):
            committed = False
        if committed:
            _commit(run_dir)
        else:
            shutil.rmtree(stage, ignore_errors=True)
        did = True
    try:
        strays = [p for p in run_dir.glob(".*.tmp*") if p.is_file()]  # atomic writes cut short
        pending = [p for p in run_dir.glob(f"{STAGING}.*") if p.is_dir()]
    except OSError:
        strays, pending = [], []
    for p in pending:
        if _dead_pending(p):
            _drop(p)
            did = True
    for p in strays:
        if _stray_in_use(p):
            continue  # a live process's file being written
        try:
            p.unlink()
            did = True
        except OSError:
            pass
    return did


