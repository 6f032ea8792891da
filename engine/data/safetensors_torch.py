"""A safetensors file read into torch tensors, each tensor's bytes read from the file straight into a tensor of its
own (writable, one copy, nothing else kept).

Not ``safetensors.safe_open(framework="pt")``: safetensors 0.8's reads through it left about three Python ints
(the tensor's byte offsets) behind for every tensor read, never freed: 145 for each load of bert-tiny. The window
loads and unloads models all day (the Run history's scrubber loads a checkpoint at every step it is moved to), and
those ints, each a small block alone among freed memory, kept pages resident that nothing else used
(bench/robustness/RESULTS.md, "Chaos in the window", the fortieth session's runs). The format is a little-endian
8-byte header length, a JSON header (each tensor's dtype, shape and byte offsets after the header;
``__metadata__``: strings), then the bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
          "BOOL": torch.bool}
MAX_HEADER_BYTES = 100_000_000  # safetensors' own limit


def read_safetensors(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The tensors and the metadata of the safetensors file at ``path``. ValueError names what is wrong with a file
    that is not one (truncated, a header that does not parse, offsets past its end or overlapping)."""
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        f.seek(0)
        length = int.from_bytes(f.read(8), "little")
        if size < 8 or not 0 < length <= min(MAX_HEADER_BYTES, size - 8):
            raise ValueError(f"a header of {length:,} bytes in a file of {size:,}: not a safetensors file")
        try:
            header = json.loads(f.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"its header does not parse ({e})") from None
        if not isinstance(header, dict):
            raise ValueError("its header is not a JSON object")
        metadata = header.pop("__metadata__", None) or {}
        body = 8 + length
        tensors: dict[str, torch.Tensor] = {}
        for name, entry in sorted(header.items(), key=lambda kv: _offsets(kv[0], kv[1])[0]):
            dtype, shape = _entry(name, entry)
            start, end = _offsets(name, entry)
            tensor = torch.empty(shape, dtype=dtype)
            if end - start != tensor.numel() * tensor.element_size():
                raise ValueError(f"'{name}': {end - start:,} bytes for a {dtype} tensor of shape {tuple(shape)}")
            if body + end > size:
                raise ValueError(f"'{name}' ends past the file's end (truncated?)")
            f.seek(body + start)
            if end > start and f.readinto(tensor.reshape(-1).view(torch.uint8).numpy().data) != end - start:
                raise ValueError(f"'{name}' could not be read whole")
            tensors[name] = tensor
    if not isinstance(metadata, dict):
        raise ValueError("its __metadata__ is not a JSON object")
    return tensors, {str(k): str(v) for k, v in metadata.items()}


def _entry(name: str, entry: Any) -> tuple[torch.dtype, list[int]]:
    if not isinstance(entry, dict) or entry.get("dtype") not in DTYPES:
        raise ValueError(f"'{name}' has no dtype this reader knows ({entry.get('dtype') if isinstance(entry, dict) else entry!r})")
    shape = entry.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ValueError(f"'{name}' has no valid shape ({shape!r})")
    return DTYPES[entry["dtype"]], shape


def _offsets(name: str, entry: Any) -> tuple[int, int]:
    offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
    if (not isinstance(offsets, list) or len(offsets) != 2 or not all(isinstance(o, int) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1]):
        raise ValueError(f"'{name}' has no valid data_offsets ({offsets!r})")
    return offsets[0], offsets[1]
