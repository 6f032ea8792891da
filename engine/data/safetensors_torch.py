"""A safetensors file read into torch tensors, each in memory of its own (writable; not a view of the file or of
one another), with the file's metadata; the header checked against the bytes before any tensor is made.

One reader for the run folders' weights (``engine.checkpoints.reading.read_tensors``), the MLM heads' and Hugging
Face folders' (``engine.models.hf_memory``). Not ``safetensors.safe_open(framework="pt")``: safetensors 0.8's reads
through it left about three Python ints (the tensor's byte offsets) behind for every tensor read, never freed: 145
for each load of bert-tiny. The window loads and unloads models all day (the Run history's scrubber loads a
checkpoint at every step it is moved to), and those ints, each a small block alone among freed memory, kept pages
resident that nothing else used (bench/robustness/CHAOS-HISTORY.md, the fortieth session's runs).

The file is read in one call with the GIL let go, into torch's memory, then each tensor copied out of it, each copy
a torch call that lets the GIL go too (bench/robustness/gil_holds.py).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from engine.errors import CheckpointError
from engine.yield_points import yield_point

HEADER_AT_MOST = 100 * 1024 * 1024  # safetensors' own limit on the JSON header
_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
           "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool",
           "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "U16": "uint16", "U32": "uint32", "U64": "uint64"}


def read_safetensors(path: str | Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Every tensor of a safetensors file, each in memory of its own, and the file's metadata. The file is checked as
    it is read: a header that does not describe the bytes after it raises ``CheckpointError`` before any tensor is
    made."""
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
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict):
        raise CheckpointError(f"{path} is not a safetensors file (its metadata is not a table)")
    entries = {k: v for k, v in header.items() if k != "__metadata__"}
    placed = [_placed(path, key, entry, len(data)) for key, entry in entries.items()]
    tensors = {}
    for key, dtype, shape, begin, end in placed:
        yield_point()  # (a worker's load waits here while the app's window works: engine.yield_points)
        # the copy is aligned for its type wherever the tensor lay in the file; torch lets the GIL go while it copies
        tensors[key] = data[begin:end].clone().view(dtype).reshape(shape)
    return tensors, {str(k): str(v) for k, v in metadata.items()}


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
