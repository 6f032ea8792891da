"""Hugging Face weights read into the process's own memory, never left mapped onto the checkpoint's file, and
read without holding Python's GIL for long.

transformers 5 loads a safetensors checkpoint by mapping the file and handing the model tensors that are views
of that mapping. A folder whose ``model.safetensors`` is then written again in place — ``save_pretrained`` or a
Trainer saving into the folder the app has loaded, a ``cp`` over it — is truncated first, and the next query
that touches a weight reads past the file's new end: the kernel kills the whole app with SIGBUS (exit 135),
every open panel and unsaved result with it. Read into memory, a loaded model keeps answering from the
weights it read, whatever happens to the file afterwards. (The word2bert run folders are written atomically,
a new file renamed over the old, so a mapping of theirs stays valid; a foreign folder's writer may not be.)

transformers' own way to read into memory (``disable_mmap``) hands the whole file to safetensors in one call
that holds the GIL while it copies every tensor: a MiniLM load held it for 34-36 ms at once in the median, up to
62 ms, on a quiet machine, and in the app's worker threads, at a lower priority than the window's, several times
that beside other work — the window's thread waits for the GIL all along (the Run history reads a checkpoint at
each step its slider rests on). ``read_weights`` reads the file with the GIL let go and copies one tensor at a
time, each copy a torch call that lets it go too: 9-12 ms in the median (bench/robustness/gil_holds.py; the
chaos bench's stalls per action fell by 38%: bench/robustness/RESULTS.md, "Chaos in the window")."""

from __future__ import annotations

import inspect
import json
import math
import sys
from functools import cache
from pathlib import Path
from typing import Any

from engine.errors import CheckpointError

WEIGHTS = "model.safetensors"
HEADER_AT_MOST = 100 * 1024 * 1024  # safetensors' own limit on the JSON header
_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
           "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool",
           "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "U16": "uint16", "U32": "uint32", "U64": "uint64"}


@cache
def in_memory() -> dict[str, Any]:
    """Keyword arguments for ``from_pretrained`` that read the weights into memory: transformers' own
    ``disable_mmap`` where it has it; older versions copy the file's weights into the model's own tensors."""
    from transformers import PreTrainedModel

    return {"disable_mmap": True} if "disable_mmap" in inspect.signature(PreTrainedModel.from_pretrained).parameters else {}


def read_weights(path: str | Path) -> dict[str, Any]:
    """Every tensor of a safetensors file, each in memory of its own (not a view of the file or of one another).
    The file is checked as it is read: a header that does not describe the bytes after it raises
    ``CheckpointError`` before any tensor is made."""
    import torch

    path = Path(path)
    with path.open("rb") as f:
        size = path.stat().st_size
        head = f.read(8)
        if len(head) < 8:
            raise CheckpointError(f"{path} is too short to be a safetensors file")
        length = int.from_bytes(head, "little")
        if length > min(HEADER_AT_MOST, size - 8):
            raise CheckpointError(f"{path} is not a safetensors file (its header claims {length} bytes)")
        try:
            header = json.loads(f.read(length))
        except (UnicodeDecodeError, ValueError):
            raise CheckpointError(f"{path} is not a safetensors file (its header is not JSON)") from None
        # torch's memory, not a bytearray: Python zeroes a bytearray holding the GIL (55 ms for MiniLM's 90 MB)
        data = torch.empty(size - 8 - length, dtype=torch.uint8, device="cpu")  # (whatever torch's default device)
        into: Any = data.numpy()  # (its buffer: the tensor's memory)
        if f.readinto(into) != len(data):  # (the GIL let go while the kernel copies)
            raise CheckpointError(f"{path} changed while it was read")
    if not isinstance(header, dict):
        raise CheckpointError(f"{path} is not a safetensors file (its header is not a table of tensors)")
    entries = {k: v for k, v in header.items() if k != "__metadata__"}
    placed = [_placed(path, key, entry, len(data)) for key, entry in entries.items()]
    tensors = {}
    for key, dtype, shape, begin, end in placed:
        # the copy is aligned for its type wherever the tensor lay in the file; torch lets the GIL go while it copies
        tensors[key] = data[begin:end].clone().view(dtype).reshape(shape)
    return tensors


def _placed(path: Path, key: str, entry: Any, data_size: int) -> tuple[str, Any, tuple[int, ...], int, int]:
    import torch

    bad = f"{path}: tensor {key!r} is described wrongly in the file's header"
    if not isinstance(entry, dict):
        raise CheckpointError(bad)
    dtype = getattr(torch, _DTYPES.get(str(entry.get("dtype")), ""), None)
    if not isinstance(dtype, torch.dtype):
        raise CheckpointError(f"{path}: tensor {key!r} has a type this torch cannot hold ({entry.get('dtype')!r})")
    shape, offsets = entry.get("shape"), entry.get("data_offsets")
    if not (isinstance(shape, list) and all(isinstance(n, int) and n >= 0 for n in shape)
            and isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(n, int) for n in offsets)):
        raise CheckpointError(bad)
    begin, end = offsets
    if not 0 <= begin <= end <= data_size or end - begin != math.prod(shape) * dtype.itemsize:
        raise CheckpointError(f"{path}: tensor {key!r} does not fit the bytes the file holds (truncated?)")
    return key, dtype, tuple(shape), begin, end


def from_pretrained_in_memory(auto: Any, folder: str | Path, **kwargs: Any) -> Any:
    """``auto.from_pretrained(folder, **kwargs)`` (an Auto class, or a model class) with the weights read by
    ``read_weights`` (one ``model.safetensors``, on a little-endian machine); transformers' own reading into
    memory otherwise."""
    folder = Path(folder)
    weights = folder / WEIGHTS
    if kwargs.get("config") is None:
        from transformers import AutoConfig

        kwargs["config"] = AutoConfig.from_pretrained(folder, local_files_only=True)
    model_class = _model_class(auto, kwargs["config"])
    if model_class is None or not weights.is_file() or sys.byteorder != "little":
        return auto.from_pretrained(folder, **kwargs, **in_memory())
    kwargs.pop("use_safetensors", None)  # (no file to choose: the weights are given)
    return model_class.from_pretrained(None, state_dict=read_weights(weights), **kwargs)


def _model_class(auto: Any, config: Any) -> Any:
    """The model class an Auto class picks for ``config`` (given weights need it: the Auto classes want a
    folder); None where this transformers does not say."""
    mapping = getattr(auto, "_model_mapping", None)
    if mapping is None:
        return auto  # a model class itself
    try:
        from transformers.models.auto.auto_factory import _get_model_class

        return _get_model_class(config, mapping)
    except (ImportError, KeyError, ValueError, AttributeError):
        return None
