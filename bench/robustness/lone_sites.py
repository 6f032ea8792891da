"""Where the blocks that sit alone on mostly free pages were allocated (bench/robustness/glibc_pages.py's lone
blocks), asked of tracemalloc by address: for the chaos bench's ``--trace``, at the end of a run.

``lone_holders`` names what holds a lone Python object, where the collector can see its holder. Many have none it
can see (an int held by a C library's own table), and many lone blocks are not objects at all. tracemalloc, when it
traced a block's allocation, knows the Python lines that made it, whatever holds it now: CPython's
``_PyTraceMalloc_GetTraceback`` answers for an address, so no address is made an object here. Blocks from Python's
allocators are in tracemalloc's domain 0, numpy's data buffers in numpy's own domain; blocks that C or C++ code
allocated with malloc itself (Qt's, torch's) and blocks made before tracing began are not traced.
"""

from __future__ import annotations

import ctypes
import functools
from collections import Counter
from pathlib import Path
from typing import Any

NUMPY_DOMAIN = 389047  # numpy's tracemalloc domain for its data buffers (numpy/_core/src/multiarray/alloc.c)
OURS = ("engine", "explorer", "bench")
ROOT = Path(__file__).resolve().parents[2]


def _traceback_of() -> Any:
    get = ctypes.pythonapi._PyTraceMalloc_GetTraceback
    get.restype, get.argtypes = ctypes.py_object, [ctypes.c_uint, ctypes.c_size_t]
    return get


@functools.cache  # (a run's end asks for the same few files' lines thousands of times: each a path resolved)
def _short(filename: str, line: int) -> str:
    path = Path(filename)
    try:
        return f"{path.resolve().relative_to(ROOT)}:{line}"
    except ValueError:
        parts = path.parts  # a library's file from its package on: after the last site-packages or python3.x
        cut = max((i for i, p in enumerate(parts) if p == "site-packages" or p.startswith("python3")), default=None)
        return f"{'/'.join(parts[cut + 1:]) if cut is not None else path.name}:{line}"


@functools.cache
def _ours(filename: str) -> bool:
    try:
        return Path(filename).resolve().relative_to(ROOT).parts[0] in OURS
    except (ValueError, IndexError):
        return False


def site(frames: tuple[tuple[str, int], ...] | None, domain: int = 0) -> str:
    """A block's allocation, named by the line that allocated it and the nearest line of the project's own above it
    (tracemalloc's frames come most recent first)."""
    if frames is None:
        return "not traced (made before tracing began, or by C or C++ code's own malloc)"
    inner = _short(*frames[0])
    ours = next((_short(f, n) for f, n in frames if _ours(f)), None)
    where = inner if ours in (None, inner) else f"{inner} ← {ours}"
    return f"numpy's data: {where}" if domain == NUMPY_DOMAIN else where


def sites(lone: dict[str, Any], top: int = 12) -> list[tuple[str, int, float]]:
    """The allocation sites of the sampled lone blocks, with how many blocks each made and the bytes of page those
    keep (scaled from the sample to all, like ``glibc_pages.name_blocks``), most kept first."""
    import tracemalloc

    if not tracemalloc.is_tracing():
        return []
    get = _traceback_of()
    every = lone.get("every", 1)
    kept: Counter[str] = Counter()
    made: Counter[str] = Counter()
    for chunk, share in zip(lone.get("sample", []), lone.get("kept", []), strict=True):
        user = int(chunk) + 16
        domain, frames = 0, get(0, user)
        if frames is None:
            domain, frames = NUMPY_DOMAIN, get(NUMPY_DOMAIN, user)
        name = site(frames, domain)
        kept[name] += float(share) * every
        made[name] += every
    return [(name, made[name], kept[name]) for name, _ in kept.most_common(top)]


def sites_said(lone: dict[str, Any]) -> str:
    found = sites(lone)
    if not found:
        return "not traced (run with --trace FRAMES)"
    mb = 2**20
    return "; ".join(f"{name} {n:,} ({kept / mb:,.1f} MB)" for name, n, kept in found)
