"""Long-lived arrays in anonymous mappings of their own, marked for transparent huge pages.

A matrix that every query scans (the static vectors' unit rows: GloVe's 400,000 × 50 are 80 MB) is read faster
from huge pages: a neighbour search took 7.7 ms from them and 9.2 ms from 4 kB pages on this project's machine
(bench/speed/huge_pages.py). numpy marks every array of 4 MB or more for them, but an array glibc serves from its
heap (under its mmap threshold, which rises to 32 MB as big blocks are freed) leaves the mark on that range of the
heap after it is freed, and the kernel then fills a marked 2 MB range into a huge page around one live 4 kB page:
the window turns numpy's marking off (explorer/huge_pages.py) and keeps it for these matrices here, each in a
mapping of its own that goes with the array, mark and all. Linux only (elsewhere: ``np.empty``)."""

from __future__ import annotations

import contextlib
import mmap
import sys
import weakref
from typing import Any

import numpy as np

HUGE_AT_LEAST = 4 * 2**20  # numpy's own threshold for asking for huge pages

# the mappings made here: the robustness bench's census counts the arrays on them as the process's own memory
_MAPPINGS: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()


def mapped_empty(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    """An uninitialised C-contiguous array in an anonymous private mapping of its own (unmapped when the array and
    its views are freed), marked for transparent huge pages; below ``HUGE_AT_LEAST`` bytes, or off Linux, or where
    no mapping can be made: ``np.empty``."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    size = count * dtype.itemsize
    if size < HUGE_AT_LEAST or not sys.platform.startswith("linux"):
        return np.empty(shape, dtype)
    try:
        mapping = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)  # (MAP_ANONYMOUS with fileno -1)
    except (OSError, ValueError, OverflowError):
        return np.empty(shape, dtype)
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is not None:
        with contextlib.suppress(OSError):  # a kernel without transparent huge pages: plain pages
            mapping.madvise(advice)
    _MAPPINGS.add(mapping)
    return np.frombuffer(mapping, dtype=dtype, count=count).reshape(shape)


def is_mapped_here(obj: object) -> bool:
    """Whether ``obj`` is a mapping ``mapped_empty`` made (an array's ``base``): anonymous memory of the process's own,
    not a file's (``np.frombuffer`` keeps a memoryview of it)."""
    if isinstance(obj, memoryview):
        obj = obj.obj
    return isinstance(obj, mmap.mmap) and obj in _MAPPINGS
