"""The C++ objects in malloc's heaps, named by their class, and those no word of memory points at: for the chaos
bench's census and ``leak_by_action``'s count.

An object of a C++ class with virtual functions opens with a pointer to its class's vtable, which lies in the
library that defines the class; ``dladdr`` names the vtable's symbol ("_ZTV13QWidgetItemV2") and libstdc++ demangles
it ("QWidgetItemV2"). ``glibc_pages.block_name`` names a block that is not a Python object this way, and
``unheld`` lists the objects nobody points at: memory a library allocated and nobody will free (run Z40's "not a
Python object, 96 bytes ← held by nothing" were Qt's layout items, each a word button's, taken out of their layouts
and never deleted: bench/robustness/RESULTS.md). A heuristic, as the pointer
scan's: a block whose first word happens to point at a vtable reads as an object of its class, and an object held
only by a pointer into its middle (a base class's part) or from a thread's stack reads as held by nobody."""

from __future__ import annotations

import ctypes
import os
from collections import Counter
from functools import cache
from typing import Any

import numpy as np

_FIRSTS: Any = None
LARGEST = 4096  # the largest block read as a C++ object here (Qt's and torch's small objects; not their buffers)


class _DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p),
                ("saddr", ctypes.c_void_p)]


@cache
def _libs() -> tuple[Any, Any]:
    libc = ctypes.CDLL(None)
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    try:
        cxx = ctypes.CDLL("libstdc++.so.6")
        cxx.__cxa_demangle.restype = ctypes.c_void_p
        cxx.__cxa_demangle.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                                       ctypes.POINTER(ctypes.c_int)]
    except OSError:  # (no libstdc++: the symbols stay mangled)
        cxx = None
    return libc, cxx


def demangle(symbol: str) -> str:
    """A C++ symbol as written in source ("_ZTV13QWidgetItemV2" → "vtable for QWidgetItemV2"); others as given."""
    libc, cxx = _libs()
    if cxx is None or not symbol.startswith("_Z"):
        return symbol
    status = ctypes.c_int()
    text = cxx.__cxa_demangle(symbol.encode(), None, None, ctypes.byref(status))
    if not text:
        return symbol
    try:
        return ctypes.string_at(text).decode(errors="replace")
    finally:
        libc.free(ctypes.c_void_p(text))


@cache
def vtable_class(word: int) -> str | None:
    """The class whose vtable ``word`` points into (an object's first word: the vtable's start + 16, past the
    offset to the top and the type's info), or None where it points at no vtable a library exports."""
    libc, _ = _libs()
    info = _DlInfo()
    if not libc.dladdr(ctypes.c_void_p(word), ctypes.byref(info)) or not info.sname:
        return None
    symbol = info.sname.decode(errors="replace")
    if not symbol.startswith("_ZTV"):
        return None
    name = demangle(symbol).removeprefix("vtable for ")
    return name if word - int(info.saddr or 0) == 16 else f"{name} (a base's part)"


def _library_span() -> tuple[int, int]:
    """The addresses the shared libraries' mappings span (a vtable lies in one)."""
    lo, hi = 2**64 - 1, 0
    with open("/proc/self/maps", encoding="ascii", errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and ".so" in parts[5]:
                first, last = (int(x, 16) for x in parts[0].split("-"))
                lo, hi = min(lo, first), max(hi, last)
    return lo, hi


def _firsts_kernel() -> Any:
    from numba import njit

    @njit(cache=False, nogil=True)
    def firsts(words, base, first, stop, lo, hi, largest, out, word0, n):  # pragma: no cover - compiled
        """The blocks in use of the heap ``[base, stop)``, ``largest`` bytes or less, whose first word lies in
        ``[lo, hi)``: their chunks into ``out`` and first words into ``word0``, from slot ``n`` on. (slots)"""
        c = first
        while c + 16 <= stop:
            size = np.int64(words[(c - base) // 8 + 1] & ~np.uint64(7))
            if size < 32 or c + size > stop:
                break
            nxt = c + size
            if size <= largest and nxt + 16 <= stop and (words[(nxt - base) // 8 + 1] & np.uint64(1)) == 1:
                w = words[(c - base) // 8 + 2]
                if lo <= w < hi:
                    if n < out.size:
                        out[n] = c
                        word0[n] = w
                    n += 1
            c = nxt
        return n

    return firsts


def prepare() -> None:
    """Compile the kernels now (as ``pointer_holders.prepare``: not between a census and its reading)."""
    global _FIRSTS
    from bench.robustness import pointer_holders

    pointer_holders.prepare()
    if _FIRSTS is None:
        _FIRSTS = _firsts_kernel()
        _FIRSTS(np.zeros(8, dtype=np.uint64), 0, 0, 64, np.uint64(0), np.uint64(1), 64, np.zeros(1, dtype=np.int64),
                np.zeros(1, dtype=np.uint64), 0)


def objects(limit: int = 1 << 22) -> dict[int, str]:
    """Every C++ object (a block of ``LARGEST`` bytes or less that opens with a vtable's address) in malloc's heaps:
    its chunk's address -> its class."""
    from bench.robustness.glibc_pages import _words, heap_ranges

    prepare()
    lo, hi = _library_span()
    chunks, word0 = np.zeros(limit, dtype=np.int64), np.zeros(limit, dtype=np.uint64)
    n = 0
    for start, end, first in heap_ranges():
        n = _FIRSTS(_words(start, end - start), start, first, end, np.uint64(lo), np.uint64(hi), LARGEST, chunks,
                    word0, n)
    n = min(n, limit)
    found = {}
    for c, w in zip(chunks[:n].tolist(), word0[:n].tolist(), strict=True):
        name = vtable_class(w)
        if name is not None:
            found[c] = name
    chunks[:] = 0
    word0[:] = 0
    vtable_class.cache_clear()  # (kept, its names of every first word read were memory the next census measured)
    return found


def unheld(found: dict[int, str] | None = None) -> dict[int, str]:
    """The C++ objects (``objects()``, or those given) no word of the process's memory points at (at their start):
    chunk -> class."""
    from bench.robustness import pointer_holders
    from bench.robustness.glibc_pages import heap_ranges

    found = objects() if found is None else found
    if not found:
        return {}
    targets = np.array(sorted(c + 16 for c in found), dtype=np.uint64)
    pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
    try:
        at, which = pointer_holders._scan(targets, pagemap, os.sysconf("SC_PAGE_SIZE"),
                                          [(targets.ctypes.data, targets.ctypes.data + targets.nbytes)])
    finally:
        os.close(pagemap)
    chunk, in_use = pointer_holders._placed(at, heap_ranges())
    itself = chunk == targets[which].astype(np.int64) - 16  # (an object's pointer to itself holds nothing)
    held = np.zeros(targets.size, dtype=bool)
    held[which[((chunk == -1) | in_use) & ~itself]] = True
    lost = {int(t) - 16: found[int(t) - 16] for t in targets[~held].tolist()}
    targets[:] = 0  # (a stale copy of these words would read as pointers in a scan that follows)
    return lost


def by_class(objects_: dict[int, str], top: int = 12) -> str:
    """"QWidgetItemV2 9,474; c10::TensorImpl 72": the classes of ``objects_``, most first."""
    counts = Counter(objects_.values())
    return "; ".join(f"{name} {n:,}" for name, n in counts.most_common(top)) or "none"
