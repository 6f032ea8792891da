"""malloc's blocks in use, counted by size, and what the sizes that grew between two moments hold (Linux, glibc):
for the chaos bench's ``--growth``, where the census's other readings name only what Python reaches (tensors,
arrays, objects by type) or the blocks alone on their pages.

The forty-third session's run Z44 left ~54 MB of growth in blocks in use that no reading named: C and C++ blocks
(Qt's, torch's, oneDNN's) and Python objects of types that did not grow in number. ``live_sizes`` walks every chunk
of every arena's heaps (as ``glibc_pages`` does) and counts the blocks in use by their exact size; ``grown`` compares
two counts; ``name_sizes`` reads a sample of the blocks of the sizes that grew most and names them
(``glibc_pages.block_name``: a Python object's type, a C++ object's class from its vtable, or "not a Python
object"). Blocks malloc mapped on their own (its large ones) are not in the arenas' heaps and are left out: the
census counts them apart ("mmapped")."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from bench.robustness.glibc_arenas import _supported
from bench.robustness.glibc_pages import _every_type, _words, block_name, heap_ranges

STEP = 16  # malloc's chunks are a multiple of 16 bytes
SMALL = 1 << 20  # sizes below this are counted one bin per size; larger ones are listed one by one
BIG_CAP = 1 << 16  # how many large blocks are listed

_COUNT: Any = None
_FIND: Any = None


def _count_kernel() -> Any:
    from numba import njit

    @njit(cache=False, nogil=True)
    def count(words, base, first, stop, bins, big, nbig):  # pragma: no cover - compiled
        """Adds every block in use from ``first`` to ``stop`` to ``bins[size // 16]``, or lists its size in ``big``
        (from ``nbig``) when it is ``SMALL`` or more. The new count of ``big``."""
        c = first
        while c + 16 <= stop:
            size = np.int64(words[(c - base) // 8 + 1] & ~np.uint64(7))
            if size < 32 or c + size > stop:
                break
            nxt = c + size
            if nxt + 16 <= stop and (words[(nxt - base) // 8 + 1] & np.uint64(1)) == 1:
                if size // 16 < bins.size:
                    bins[size // 16] += 1
                elif nbig < big.size:
                    big[nbig] = size
                    nbig += 1
            c = nxt
        return nbig

    return count


def _find_kernel() -> Any:
    from numba import njit

    @njit(cache=False, nogil=True)
    def find(words, base, first, stop, wanted, small_rows, big, every, seen, out, wrote):  # pragma: no cover
        """The addresses of blocks in use whose size's bin is ``wanted[bin] = row + 1``, or whose size is
        ``big[i]`` (sorted; row ``small_rows + i``): every ``every[row]``-th of each row goes to ``out[row]``
        (``seen``/``wrote``: per row, counted so far, written so far)."""
        c = first
        while c + 16 <= stop:
            size = np.int64(words[(c - base) // 8 + 1] & ~np.uint64(7))
            if size < 32 or c + size > stop:
                break
            nxt = c + size
            row = -1
            if size // 16 < wanted.size:
                row = wanted[size // 16] - 1
            elif big.size:
                i = np.searchsorted(big, size)
                if i < big.size and big[i] == size:
                    row = small_rows + int(i)
            if row >= 0 and nxt + 16 <= stop and (words[(nxt - base) // 8 + 1] & np.uint64(1)) == 1:
                if seen[row] % every[row] == 0 and wrote[row] < out.shape[1]:
                    out[row, wrote[row]] = c
                    wrote[row] += 1
                seen[row] += 1
            c = nxt

    return find


def _prepare() -> None:
    global _COUNT, _FIND
    if _COUNT is None:  # compiled once, early: compiling grows the heap the walk reads
        _COUNT = _count_kernel()
        _COUNT(np.zeros(8, dtype=np.uint64), 0, 0, 0, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), 0)
        _FIND = _find_kernel()
        _FIND(np.zeros(8, dtype=np.uint64), 0, 0, 0, np.zeros(1, dtype=np.int64), 0, np.zeros(1, dtype=np.int64),
              np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros((1, 1), dtype=np.int64),
              np.zeros(1, dtype=np.int64))


def live_sizes() -> dict[int, int]:
    """Every block in use in malloc's heaps now: chunk size (bytes, its header included) -> how many. Empty where
    the heaps cannot be read."""
    if not _supported():
        return {}
    _prepare()
    bins = np.zeros(SMALL // STEP, dtype=np.int64)
    big = np.zeros(BIG_CAP, dtype=np.int64)
    nbig = 0
    for start, end, first in heap_ranges():
        nbig = _COUNT(_words(start, end - start), start, first, end, bins, big, nbig)
    counts = {int(i) * STEP: int(bins[i]) for i in np.flatnonzero(bins)}
    for size in big[:nbig]:
        counts[int(size)] = counts.get(int(size), 0) + 1
    return counts


def grown(before: dict[int, int], after: dict[int, int], top: int = 12) -> list[tuple[int, int, int]]:
    """The sizes whose blocks' bytes grew most from ``before`` to ``after``: (size, blocks more, bytes more)."""
    more = {size: after.get(size, 0) - before.get(size, 0) for size in set(before) | set(after)}
    rows = [(size, d, size * d) for size, d in more.items() if d > 0]
    return sorted(rows, key=lambda r: -r[2])[:top]


def name_sizes(sizes: list[int], counts: dict[int, int], sample: int = 200) -> dict[int, list[tuple[str, int]]]:
    """For each size, what about ``sample`` of its blocks in use spread across the heaps are (``counts``:
    ``live_sizes``'s, to spread the sample): name -> how many of those read, most first. A block that holds a tensor's storage or a numpy array's buffer Python reaches is named
    so ("torch storage", "numpy buffer"); else ``block_name``'s reading."""
    if not sizes or not _supported():
        return {}
    _prepare()
    small = [s for s in sizes if s < SMALL]
    large = sorted(s for s in sizes if s >= SMALL)
    order = small + large
    wanted = np.zeros(SMALL // STEP, dtype=np.int64)
    for row, size in enumerate(small):
        wanted[size // STEP] = row + 1
    every = np.array([max(1, counts.get(s, 0) // sample) for s in order], dtype=np.int64)
    seen, wrote = np.zeros(len(order), dtype=np.int64), np.zeros(len(order), dtype=np.int64)
    out = np.zeros((len(order), sample), dtype=np.int64)
    for start, end, first in heap_ranges():
        _FIND(_words(start, end - start), start, first, end, wanted, len(small), np.array(large, dtype=np.int64),
              every, seen, out, wrote)
    buffers = _buffers()
    types = _every_type()
    named: dict[int, list[tuple[str, int]]] = {}
    for row, size in enumerate(order):
        tally: dict[str, int] = {}
        for chunk in out[row, : wrote[row]]:
            name = _buffer_in(buffers, int(chunk) + 16, int(chunk) + size) or block_name(int(chunk), types)[0]
            tally[name] = tally.get(name, 0) + 1
        named[size] = sorted(tally.items(), key=lambda kv: -kv[1])
    from bench.robustness.cxx_objects import vtable_class

    vtable_class.cache_clear()  # (its names are not to stay in the memory the next census reads)
    return named


def _buffers() -> tuple[np.ndarray, list[str]]:
    """The start addresses of the tensor storages and numpy buffers of 4 kB or more Python reaches, sorted, with
    what each is."""
    import gc
    import sys
    import warnings

    torch = sys.modules.get("torch")
    found: dict[int, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for o in gc.get_objects():
            try:
                if torch is not None and isinstance(o, torch.Tensor) and o.device.type == "cpu" and not o.is_mkldnn:
                    storage = o.untyped_storage()
                    if storage.nbytes() >= 4096:
                        found.setdefault(storage.data_ptr(), "torch storage")
                elif isinstance(o, np.ndarray) and o.base is None and o.nbytes >= 4096:
                    found.setdefault(o.__array_interface__["data"][0], "numpy buffer")
            except (RuntimeError, NotImplementedError, ReferenceError):
                continue
    starts = np.array(sorted(found), dtype=np.int64)
    return starts, [found[int(a)] for a in starts]


def _buffer_in(buffers: tuple[np.ndarray, list[str]], lo: int, hi: int) -> str:
    """What buffer starts in ``[lo, hi)`` (a block's user bytes: an allocator may align the start within), or ""."""
    starts, names = buffers
    i = int(np.searchsorted(starts, lo))
    return names[i] if i < starts.size and starts[i] < hi else ""


def growth_said(before: dict[int, int], after: dict[int, int], top: int = 12) -> str:
    """The blocks in use that grew, in a line: their bytes in all, then the sizes that grew most, each with what a
    sample of its blocks are."""
    if not before or not after:
        return "not read"
    mb = 2**20
    total = sum(s * n for s, n in after.items()) - sum(s * n for s, n in before.items())
    rows = grown(before, after, top)
    names = name_sizes([size for size, _, _ in rows], after)
    said = []
    for size, more, grew in rows:
        kinds = names.get(size, [])
        read = sum(n for _, n in kinds)
        what = ", ".join(f"{name} {n * 100 // max(read, 1)}%" for name, n in kinds[:3]) or "not read"
        said.append(f"{size:,} B: +{more:,} blocks, +{grew / mb:,.1f} MB ({what})")
    return (f"{sum(s * n for s, n in before.items()) / mb:,.0f} → {sum(s * n for s, n in after.items()) / mb:,.0f} MB "
            f"in the arenas' heaps ({total / mb:+,.0f} MB); the sizes that grew most: {'; '.join(said) or 'none'}")


if __name__ == "__main__":  # a look at this process: python -m bench.robustness.live_blocks
    first = live_sizes()
    kept = [bytearray(40) for _ in range(100_000)]
    print(growth_said(first, live_sizes()), os.getpid())
