"""The files of a run folder: their names, atomic writes (temp + sync + rename, the usual permissions),
and refusing pickles. ``saves`` writes a whole checkpoint from these; ``reading`` reads one back.

A run folder: ``config.json`` + ``model.safetensors`` (+ vocab/tokenizer files, ``metrics.jsonl``,
``training_state.pt`` for resume, or ``training_state.json`` from a run that never imported torch).
Pickle files are refused, never executed; ``training_state.pt`` is read with
``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engine.checkpoints import file_lock
from engine.errors import CheckpointError

PICKLE_SUFFIXES = {".pkl", ".pickle", ".pt", ".pth", ".bin", ".ckpt", ".joblib", ".npz"}
WEIGHTS = "model.safetensors"
CONFIG = "config.json"
HISTORY = "checkpoints"  # a run's kept copies: RUN/checkpoints/step-N, each a run folder of its own
STATE = "training_state.pt"
STATE_JSON = "training_state.json"  # the loop state of a run that never imported torch (word2vec on a CPU): numbers only

# the training state's layout, saved with it: every loop's state holds "step" and its own position (the
# gradient loop: its optimiser, scaler and RNG; word2vec: epoch and chunk; GloVe: epoch, batch, optimiser)
STATE_LAYOUT = 1


def fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder
    finally:
        os.close(fd)


def _file_mode() -> int:
    """The permissions a new file gets here (0o666 less the umask): a library that writes its files
    private (safetensors: 0600) would otherwise leave weights that no one else can read or share."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _temporary(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp{os.getpid()}-{threading.get_ident()}{path.suffix}")


FILE_MODE = _file_mode()  # read once, at import (os.umask is process-wide: not from a worker thread)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    def write(tmp: Path) -> None:
        tmp.write_bytes(data)

    atomic_write_with(path, write)


def atomic_write_with(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp_path)``, sync it, then rename to ``path``; the target never holds a partial file
    and no temporary file is left behind, whatever ``write`` raised."""
    tmp = _temporary(path)
    # POSIX: the temporary file is locked while it is written, so a reader cleaning leftovers knows a
    # live writer's file from a dead one's (see finish_interrupted_save)
    lock = file_lock.hold(tmp) if file_lock.fcntl is not None else None
    try:
        write(tmp)
        fsync(tmp)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    finally:
        if lock is not None:
            lock.release()
        if tmp.exists():
            tmp.unlink()



def json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def refuse_pickle(path: Path) -> None:
    if path.suffix.lower() in PICKLE_SUFFIXES:
        raise CheckpointError(
            f"{path.name} is a pickle-based file; word2bert never unpickles files (they can run code). "
            "Use a run folder with model.safetensors, or vectors in word2vec text/binary format."
        )
