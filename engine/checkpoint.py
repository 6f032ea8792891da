"""Run folders: ``config.json`` + ``model.safetensors`` (+ vocab/tokenizer files, ``metrics.jsonl``,
``training_state.pt`` for resume, or ``training_state.json`` from a run that never imported torch). A save is all or nothing (see ``save_run``: staged in ``.saving/``,
committed by a marker, finished after a kill), and config.json and the weights carry the same
``save_id``, so files from two saves are never taken for one.

Loaders (engine/handles) read ``kind`` from config.json and rebuild with strict key and shape checks
(``read_tensors``). Pickle files are refused, never executed; ``training_state.pt`` is read with
``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine import __version__, file_lock
from engine.config import FORMAT_VERSION
from engine.errors import CheckpointError, SaveError

if TYPE_CHECKING:
    import torch

PICKLE_SUFFIXES = {".pkl", ".pickle", ".pt", ".pth", ".bin", ".ckpt", ".joblib", ".npz"}
WEIGHTS = "model.safetensors"
CONFIG = "config.json"
HISTORY = "checkpoints"  # a run's kept copies: RUN/checkpoints/step-N, each a run folder of its own
STATE = "training_state.pt"
STATE_JSON = "training_state.json"  # the loop state of a run that never imported torch (word2vec on a CPU): numbers only

STAGING = ".saving"  # a save in progress: every file of it, written here first
COMMIT = "COMMIT"  # in STAGING once the save is complete: from then on it is finished, even after a kill
OWNER = "OWNER"  # in STAGING: the process saving (a save of a live process is never finished or dropped)
LOW_SPACE = 64 * 2**20


def _fsync(path: Path) -> None:
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


_FILE_MODE = _file_mode()  # read once, at import (os.umask is process-wide: not from a worker thread)


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
        _fsync(tmp)
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    finally:
        if lock is not None:
            lock.release()
        if tmp.exists():
            tmp.unlink()


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
    config_bytes = json.dumps(doc, indent=2, default=_json_default).encode()
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
            _fsync(stage / name)
            if (stage / name).is_file():
                os.chmod(stage / name, _FILE_MODE)
        (stage / COMMIT).write_text(json.dumps(order))
        _fsync(stage / COMMIT)
        _fsync(stage)
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


def has_training_state(run_dir: str | Path) -> bool:
    """Whether a run folder holds a loop state to resume from (either form)."""
    return (Path(run_dir) / STATE).exists() or (Path(run_dir) / STATE_JSON).exists()


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
    _fsync(run_dir)
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


def _json_default(obj: Any) -> Any:
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


MAX_CONFIG_BYTES = 10 * 2**20  # a config.json is a few kB; anything this large is not one


def _read_json(path: Path) -> Any:
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
    config = _read_json(cfg_path)
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
        tensors = {}
        with safe_open(str(path), framework=framework) as f:
            meta = f.metadata() or {}
            for key in f.keys():  # noqa: SIM118 - safe_open is not a mapping
                tensors[key] = f.get_tensor(key)
    except Exception as e:  # safetensors raises its own error types for damaged files
        raise CheckpointError(f"{path} is damaged or truncated ({e})") from None
    if config.get("save_id") and meta.get("save_id") != config["save_id"]:
        raise CheckpointError(
            f"{run_dir}: config.json and {WEIGHTS} come from different saves (an interrupted save?)"
        )
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


# the training state's layout, saved with it: every loop's state holds "step" and its own position (the
# gradient loop: its optimiser, scaler and RNG; word2vec: epoch and chunk; GloVe: epoch, batch, optimiser)
STATE_LAYOUT = 1


def _known_layout(state: dict[str, Any], path: Path) -> dict[str, Any]:
    layout = state.get("layout", 0)
    if not isinstance(layout, int) or isinstance(layout, bool) or layout > STATE_LAYOUT:
        raise CheckpointError(f"{path} was saved by a newer word2bert (training-state layout {layout!r}; this "
                              f"version reads up to {STATE_LAYOUT}): resume it with that version, or load its weights")
    return state
