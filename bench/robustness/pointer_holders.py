"""What points at the blocks that sit alone on mostly free pages (bench/robustness/glibc_pages.py's lone blocks),
found by reading memory: for the chaos bench, at the end of a run, and ``leak_by_action``'s count of the ints
nobody holds (``unheld``).

``lone_holders`` asks the garbage collector who refers to a lone object. It cannot see a holder that is not a
Python object it tracks: a C or C++ table (Qt's, torch's, a C extension's statics), a numpy array of objects, or a
reference nobody holds at all (a count a C function took and never gave back). Here every resident page the
process can write is read, word by word, for the lone blocks' addresses: a word that equals one, inside a malloc
block in use (or in a library's data, a mapping of its own), is a pointer to it. The block that
holds the pointer is named (a Python object's type, or "not a Python object" with its size) and the search goes on
from it, up to ``depth`` steps: "int ← not a Python object, 48 bytes ← dict". A lone block no word points at is
held by nobody: a leaked reference, or memory nobody will free.

A heuristic, as a conservative collector's is: a word that happens to equal an address (a float's bits, a stale
copy in a block still in use) reads as a pointer. Free blocks, ints, strs, bytes and floats are not read as
holders, and neither are this module's own arrays nor the threads' stacks (``_writable``).
"""

from __future__ import annotations

import ctypes
import os
from collections import Counter
from typing import Any

import numpy as np

_SCAN: Any = None
_OWNERS: Any = None
_OBJECTS: Any = None
_ATOMS = {f"builtins.{t}" for t in ("int", "str", "bytes", "float")}
HITS = 1 << 22  # pointers recorded at most, a scan (past it, a warning)


def _scan_kernel() -> Any:
    from numba import njit

    @njit(cache=False, nogil=True)
    def scan(words, base, targets, at, which, n):  # pragma: no cover - compiled
        """Every word of ``words`` (the memory at ``base``) equal to one of ``targets`` (sorted): its address into
        ``at`` and the target's index into ``which``, from slot ``n`` on. (slots used, capacity or not)"""
        lo, hi = targets[0], targets[-1]
        for i in range(words.size):
            w = words[i]
            if w < lo or w > hi or (w & np.uint64(7)) != 0:
                continue
            j = np.searchsorted(targets, w)
            if j < targets.size and targets[j] == w:
                if n < at.size:
                    at[n] = base + 8 * i
                    which[n] = j
                n += 1
        return n

    return scan


def _owners_kernel() -> Any:
    from numba import njit

    @njit(cache=False, nogil=True)
    def owners(words, base, first, stop, addresses, chunk, in_use):  # pragma: no cover - compiled
        """For each of ``addresses`` (sorted, in the heap ``[base, stop)``): the chunk whose bytes it lies in and
        whether that chunk is in use (-1: past where the walk could go; -2: a chunk's size word). A chunk in use owns
        ``[chunk + 16, next chunk + 8)``: the next chunk's first word (its "previous size") is its last 8 bytes."""
        c = first
        prev = np.int64(-1)
        k = 0
        while k < addresses.size and addresses[k] < c + 8:
            chunk[k] = -1
            k += 1
        while c + 16 <= stop and k < addresses.size:
            size = np.int64(words[(c - base) // 8 + 1] & ~np.uint64(7))
            if size < 32 or c + size > stop:
                break
            nxt = c + size
            used = nxt + 16 <= stop and (words[(nxt - base) // 8 + 1] & np.uint64(1)) == 1
            while k < addresses.size and addresses[k] < c + 8:  # the previous chunk's last word
                chunk[k] = prev
                in_use[k] = prev >= 0 and (words[(c - base) // 8 + 1] & np.uint64(1)) == 1
                k += 1
            while k < addresses.size and addresses[k] < c + 16:  # this chunk's size
                chunk[k] = -2
                k += 1
            while k < addresses.size and addresses[k] < nxt:
                chunk[k] = c
                in_use[k] = used
                k += 1
            prev = c
            c = nxt
        while k < addresses.size:
            chunk[k] = -1
            k += 1

    return owners


def _objects_kernel() -> Any:
    from numba import njit

    @njit(cache=False, nogil=True)
    def objects(words, base, first, stop, type_address, out, n):  # pragma: no cover - compiled
        """The blocks in use of the heap ``[base, stop)`` that open with an object of the type at ``type_address``
        (a count under 2**32, then the type): their objects' addresses into ``out`` from slot ``n`` on. (slots)"""
        c = first
        while c + 16 <= stop:
            size = np.int64(words[(c - base) // 8 + 1] & ~np.uint64(7))
            if size < 32 or c + size > stop:
                break
            nxt = c + size
            if nxt + 16 <= stop and (words[(nxt - base) // 8 + 1] & np.uint64(1)) == 1:
                at = (c - base) // 8 + 2
                if words[at + 1] == type_address and 0 < words[at] < np.uint64(1 << 32):
                    if n < out.size:
                        out[n] = c + 16
                    n += 1
            c = nxt
        return n

    return objects


def prepare() -> None:
    """Compile the scan now: compiling later, between a census and its reading, would change the heap read."""
    global _SCAN, _OWNERS, _OBJECTS
    if _SCAN is None:
        _SCAN = _scan_kernel()
        _OWNERS = _owners_kernel()
        _OBJECTS = _objects_kernel()
        _OBJECTS(np.zeros(8, dtype=np.uint64), 0, 0, 64, np.uint64(8), np.zeros(1, dtype=np.int64), 0)
        targets = np.array([8, 16], dtype=np.uint64)  # compiled now, before the maps are read
        _SCAN(np.zeros(4, dtype=np.uint64), 0, targets, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), 0)
        _OWNERS(np.zeros(8, dtype=np.uint64), 0, 0, 64, np.array([8], dtype=np.int64), np.zeros(1, dtype=np.int64),
                np.zeros(1, dtype=np.bool_))


def _writable() -> list[tuple[int, int, str]]:
    """The mappings a pointer could lie in: every one the process can write, but devices' and the threads' stacks
    (``pointer_mappings``)."""
    from bench.robustness.glibc_pages import _Maps, heap_ranges

    return pointer_mappings(_Maps().rows, {start for start, _, _ in heap_ranges()})


def pointer_mappings(rows: list[list[Any]], heap_starts: set[int]) -> list[tuple[int, int, str]]:
    """Of ``rows`` (smaps': start, end, permissions, name, …), those a pointer could lie in: every one the process
    can write, but devices' and the threads' stacks. A stack keeps the words its calls left beneath its top, where
    they read as holders; at a quiet moment no call of interest is under way. A thread's stack is an anonymous
    mapping just above its guard page, one it cannot touch; a thread arena's heap can lie just above one too (the
    reserved, unwritable rest of the heap before it), so a mapping where one of malloc's heaps starts
    (``heap_starts``) is always read: taken for a stack, a heap's objects were left out, and what they held read as
    held by nobody (the forty-first session: a reloaded model's parameters)."""
    out = []
    for i, r in enumerate(rows):
        guarded = i > 0 and rows[i - 1][1] == r[0] and rows[i - 1][2].startswith("---") and not rows[i - 1][3]
        stack = guarded and not r[3] and r[0] not in heap_starts
        if r[2].startswith("rw") and not r[3].startswith(("/dev/", "[vvar", "[vsyscall", "[stack")) and not stack:
            out.append((r[0], r[1], r[3]))
    return out


def _scan(targets: np.ndarray, pagemap: int, page: int, mine: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The words equal to one of ``targets`` (sorted) in every resident page the process wrote: (their addresses,
    the targets' indices), leaving out those in ``mine`` (ranges this module holds)."""
    from bench.robustness.glibc_pages import _resident, _words

    at, which = np.zeros(HITS, dtype=np.int64), np.zeros(HITS, dtype=np.int64)
    mine = [*mine, (at.ctypes.data, at.ctypes.data + at.nbytes), (which.ctypes.data, which.ctypes.data + which.nbytes)]
    n = 0
    for start, end, _ in _writable():
        resident = _resident(pagemap, start, end - start, page)
        edges = np.flatnonzero(np.diff(np.concatenate([[0], resident, [0]]).astype(np.int8)))
        for first, last in zip(edges[::2], edges[1::2], strict=True):  # each run of resident pages
            n = _SCAN(_words(start + int(first) * page, (int(last) - int(first)) * page), start + int(first) * page,
                      targets, at, which, n)
    if n > HITS:
        print(f"pointer_holders: {n:,} words point at the blocks sought, {HITS:,} read", flush=True)
    n = min(n, HITS)
    keep = np.ones(n, dtype=bool)
    for lo, hi in mine:
        keep &= ~((at[:n] >= lo) & (at[:n] < hi))
    return at[:n][keep], which[:n][keep]


def _placed(addresses: np.ndarray, heaps: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """For each address: the malloc chunk whose bytes it lies in (-1 outside the heaps or past where a walk could go,
    -2 a chunk's size word), and whether that chunk is in use."""
    from bench.robustness.glibc_pages import _words

    chunk = np.full(addresses.size, -1, dtype=np.int64)
    in_use = np.zeros(addresses.size, dtype=np.bool_)
    order = np.argsort(addresses)
    ordered = addresses[order]
    for start, end, first in heaps:
        lo, hi = np.searchsorted(ordered, start), np.searchsorted(ordered, end)
        if hi > lo:
            got_chunk, got_use = np.zeros(hi - lo, dtype=np.int64), np.zeros(hi - lo, dtype=np.bool_)
            _OWNERS(_words(start, end - start), start, first, end, ordered[lo:hi].copy(), got_chunk, got_use)
            chunk[order[lo:hi]], in_use[order[lo:hi]] = got_chunk, got_use
    return chunk, in_use


def _mapping_name(address: int, maps: list[tuple[int, int, str]]) -> str:
    for start, end, name in maps:
        if start <= address < end:
            if name.startswith("["):
                return name
            if name:
                return f"{os.path.basename(name)}'s data"
            return f"an anonymous mapping of {(end - start) / 2**20:,.1f} MB"
    return "memory unmapped since"


def _short(name: str) -> str:
    return name.removeprefix("builtins.")


def holder_paths(blocks: list[int], depth: int = 3) -> list[list[str]]:
    """For each malloc block (its chunk's address, in one of malloc's heaps): the chain of what points at it,
    nearest first, up to ``depth`` steps, each named as ``glibc_pages.block_name`` names a block (a pointer outside
    the heaps by its mapping: a library's data, a stack). [] for a block nothing points at; a chain ends early where
    the holder lies outside malloc's heaps or nothing points at it."""
    from bench.robustness.glibc_pages import _every_type, block_name, heap_ranges

    prepare()
    page = os.sysconf("SC_PAGE_SIZE")
    types = _every_type()
    heaps = heap_ranges()
    maps = _writable()
    paths: list[list[str]] = [[] for _ in blocks]
    current = {i: int(c) for i, c in enumerate(blocks)}  # block index -> the chunk its chain has reached
    pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
    try:
        for _ in range(depth):
            if not current:
                break
            # a pointer to a block points at its object (after the collector's header, if any) or at its start
            pointee = {i: c + 16 + block_name(c, types)[1] for i, c in current.items()}
            # (not through a set, nor numpy's sorting: its hashes or a freed copy, left in memory malloc gives out
            # again, would be read as the very words sought)
            ordered = sorted(pointee.values())
            targets = np.array([t for k, t in enumerate(ordered) if k == 0 or t != ordered[k - 1]], dtype=np.uint64)
            at, which = _scan(targets, pagemap, page, [(targets.ctypes.data, targets.ctypes.data + targets.nbytes)])
            sought = targets.tolist()  # (the array is cleared before it is freed: a stale copy of its words would
            targets[:] = 0  # read as pointers in the next step's scan)
            chunk, in_use = _placed(at, heaps)
            found: dict[int, tuple[int, str]] = {}  # target address -> (the holder's chunk or -1, its name)
            for a, w, c, used in zip(at.tolist(), which.tolist(), chunk.tolist(), in_use.tolist(), strict=True):
                target = sought[w]
                if (c >= 0 and not used) or c == -2:
                    continue  # a stale copy in a free block (or a size word that reads as the address)
                if c >= 0 and (c + 16 <= target < c + (ctypes.c_size_t.from_address(c + 8).value & ~7)):
                    continue  # a block's pointer to itself
                name = block_name(c, types)[0] if c >= 0 else _mapping_name(a, maps)
                if name in _ATOMS:
                    continue  # an int, str, bytes or float holds no reference: a stale word past its own bytes
                held = (c, _short(name))
                if target not in found or (found[target][0] < 0 <= c):  # a block in use before a stack's stale word
                    found[target] = held
            nxt: dict[int, int] = {}
            for i, target in pointee.items():
                if target in found:
                    c, name = found[target]
                    paths[i].append(name)
                    if c >= 0:
                        nxt[i] = c
            current = nxt
    finally:
        os.close(pagemap)
    return paths


def pointers_said(lone: dict[str, Any], top: int = 12) -> str:
    """The lone blocks sampled in a census, by what they are and the chain of what points at them, with the pages
    they keep (scaled from the sample to all), most first: "int ← not a Python object, 48 bytes ← dict 1,200
    (0.9 MB)"; "held by nothing" where no word points at them."""
    from bench.robustness.glibc_pages import _every_type, block_name

    sample = [int(c) for c in lone.get("sample", [])]
    if not sample:
        return "none read"
    types = _every_type()
    every = lone.get("every", 1)
    kept: Counter[str] = Counter()
    held: Counter[str] = Counter()
    for c, share, path in zip(sample, lone.get("kept", []), holder_paths(sample), strict=True):
        name = " ← ".join([_short(block_name(c, types)[0]), *(path or ["held by nothing"])])
        kept[name] += float(share) * every
        held[name] += every
    mb = 2**20
    from bench.robustness.cxx_objects import vtable_class

    vtable_class.cache_clear()  # (its names are not to stay in the memory the next census reads)
    return "; ".join(f"{name} {held[name]:,} ({pages / mb:,.1f} MB)" for name, pages in kept.most_common(top))


def unheld(cls: type = int, limit: int = 1 << 21) -> list[int]:
    """The objects of ``cls`` (an int, str, bytes or float: a type the collector does not track) in malloc's heaps
    that no word of the process's memory points at: references taken and never given back (a leak in C code), or
    the dead. Their addresses; the objects are never made here."""
    from bench.robustness.glibc_pages import _every_type, _words, block_name, heap_ranges
    from bench.robustness.object_headers import fits

    prepare()
    found = np.zeros(limit, dtype=np.int64)
    n = 0
    heaps = heap_ranges()
    for start, end, first in heaps:
        n = _OBJECTS(_words(start, end - start), start, first, end, np.uint64(id(cls)), found, n)
    objects = [int(a) for a in found[:min(n, limit)]
               if fits(cls, int(a), (ctypes.c_size_t.from_address(int(a) - 8).value & ~7) - 8)]
    if not objects:
        return []
    targets = np.array(sorted(objects), dtype=np.uint64)
    pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
    try:
        at, which = _scan(targets, pagemap, os.sysconf("SC_PAGE_SIZE"),
                          [(targets.ctypes.data, targets.ctypes.data + targets.nbytes),
                           (found.ctypes.data, found.ctypes.data + found.nbytes)])
    finally:
        os.close(pagemap)
    chunk, in_use = _placed(at, heaps)
    types = _every_type()
    holders = np.unique(chunk[in_use])  # (each block named once, however many of its words were hits)
    atoms = [c for c in holders.tolist() if block_name(c, types)[0] in _ATOMS]
    in_use &= ~np.isin(chunk, atoms)  # (an int, str, bytes or float holds no reference: a stale word there)
    held = np.zeros(targets.size, dtype=bool)
    held[which[(chunk == -1) | in_use]] = True
    lost = [int(a) for a in targets[~held]]
    targets[:] = 0  # (a stale copy of these words would read as pointers in a scan that follows)
    found[:] = 0
    return lost
