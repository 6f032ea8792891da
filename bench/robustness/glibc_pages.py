"""Every resident anonymous page of the process, accounted for (Linux, glibc 2.27 or later, 64-bit): for the chaos
bench's census, where ``glibc_arenas`` reads only the arenas' free lists.

The anonymous RSS not in malloc's blocks in use grew by 110-170 MB in every thirty-minute chaos run (issue 37), and
two readings of it are possible: pages the arenas keep because a live block shares them with freed ones (a heap
fragmented at the page), or memory that is not malloc's at all (a library's own mappings). This module tells them
apart by walking every chunk of every arena's heaps and asking the kernel which pages are resident
(/proc/self/pagemap):

- ``arena_resident``: the arenas' heaps' resident pages; of them ``arena_live`` hold at least one byte of a block in
  use (``arena_in_use``: the blocks' bytes, so ``arena_live - arena_in_use`` is what sharing a page with freed memory
  keeps) and the rest, ``arena_resident - arena_live``, hold none (freed and kept: a trim gives these back but a
  thread arena's top and the pages a free block's header lies on); ``arena_free``: the free blocks' bytes;
- ``mmapped_resident``: malloc's blocks mapped on their own (each found by the chunk header that opens it),
  resident;
- ``other_anon``: every other anonymous page: thread stacks, mappings a library made itself. ``other_mappings`` lists
  those mappings (start, size, resident bytes), to tell which grew between moments;
- ``smaps_anon``: the kernel's count of the anonymous memory, read with the rest (smaps, a file's private pages
  written to included).

A page the walk reads was written before (a chunk's header), so reading does not make a page resident that was not.
The walk stops at the first header that does not fit (a heap a thread changes meanwhile): ``walk_ok`` says whether
every heap was walked to its end, and ``unwalked`` how many bytes of heap were not. Numba compiles the walk
(millions of blocks: Python's objects come from malloc)."""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

from bench.robustness.glibc_arenas import HEAP_ALIGN, _supported

IS_MMAPPED = 2
MALLOC_STATE_SIZE = 2200  # sizeof(struct malloc_state), glibc 2.27+ on 64-bit (glibc_arenas: NEXT + 40)


def _heap_info_size() -> int:
    """sizeof(heap_info): 48 from glibc 2.35 (it gained ``pagesize``), 32 before; the first chunk of a thread arena's
    second and later heaps lies just after it."""
    import platform

    major, minor = (int(x) for x in platform.libc_ver()[1].split(".")[:2])
    return 48 if (major, minor) >= (2, 35) else 32


def _walk_kernel() -> Any:
    from numba import njit

    @njit(cache=False, nogil=True)
    def walk(words, base, first, stop, page, live):  # pragma: no cover - compiled
        """From the chunk at ``first`` to ``stop``, the heap's end: marks in ``live`` every page of ``[base, …)`` a
        block in use lies on. The chunk that ends at the heap's end is the arena's top, free. (in use bytes, free
        bytes, chunks, the address where it stopped)"""
        c = first
        in_use = np.int64(0)
        free = np.int64(0)
        chunks = 0
        while c + 16 <= stop:
            size = np.int64(words[(c - base) // 8 + 1] & ~np.uint64(7))
            if size < 32:
                break
            if c + size > stop:  # the top, grown since the heap's end was read (the program's break moved): free
                free += stop - c
                c = stop
                break
            nxt = c + size
            used = False  # the top
            if nxt + 16 <= stop:
                used = (words[(nxt - base) // 8 + 1] & np.uint64(1)) == 1
            if used:
                in_use += size
                for p in range((c + 8 - base) // page, (nxt - 1 - base) // page + 1):
                    live[p] = 1
            else:
                free += size
            chunks += 1
            c = nxt
        return in_use, free, chunks, c

    return walk


def _lone_kernel() -> Any:
    from numba import njit

    @njit(cache=False, nogil=True)
    def lone(words, base, first, stop, page, resident, by_size, every, sample, kept_share):  # pragma: no cover
        """The blocks in use that lie on a resident page filled a quarter or less by blocks in use (a page kept
        for a few bytes): adds to ``by_size[bucket] = (blocks, bytes of page kept)``, the bucket the block's size's
        bit length, a page's bytes shared among its blocks by how much of it each covers. With ``every`` > 0,
        every ``every``-th such block's address goes into ``sample`` and its share of pages into ``kept_share``.
        (blocks found, samples written)"""
        used = np.zeros(resident.size, dtype=np.int64)
        for sweep in range(2):
            c = first
            found = 0
            sampled = 0
            while c + 16 <= stop:
                size = np.int64(words[(c - base) // 8 + 1] & ~np.uint64(7))
                if size < 32 or c + size > stop:
                    break
                nxt = c + size
                if nxt + 16 <= stop and (words[(nxt - base) // 8 + 1] & np.uint64(1)) == 1:
                    share = 0.0
                    for p in range((c - base) // page, (nxt - 1 - base) // page + 1):
                        lo = max(c, base + p * page)
                        hi = min(nxt, base + (p + 1) * page)
                        if sweep == 0:
                            used[p] += hi - lo
                        # (used > 0: a block that came in use between the two sweeps, the heap being read as
                        # the app's threads change it, has no first sweep's count to share: left out)
                        elif resident[p] and used[p] > 0 and used[p] * 4 <= page:
                            share += page * (hi - lo) / used[p]
                    if share > 0:
                        bucket = 0  # the size's bit length: 33-64 bytes in 6, 65-128 in 7, …
                        v = size - 1
                        while v > 0:
                            v >>= 1
                            bucket += 1
                        bucket = min(bucket, by_size.shape[0] - 1)
                        by_size[bucket, 0] += 1
                        by_size[bucket, 1] += share
                        if every > 0 and found % every == 0 and sampled < sample.size:
                            sample[sampled] = c
                            kept_share[sampled] = share
                            sampled += 1
                        found += 1
                c = nxt
        return found, sampled

    return lone


_WALK: Any = None
_LONE: Any = None
LONE_SAMPLE = 20_000  # the blocks alone on their pages whose first words are read, to tell what they are


class _Maps:
    """/proc/self/smaps: every mapping's range, permissions, name and anonymous bytes (the kernel's count)."""

    def __init__(self) -> None:
        self.rows: list[list[Any]] = []  # [start, end, perms, name, anonymous bytes]
        with open("/proc/self/smaps", encoding="ascii", errors="replace") as f:
            for line in f:
                head = line.split()
                if not head:
                    continue
                if "-" in head[0] and not head[0].endswith(":"):
                    first, last = (int(x, 16) for x in head[0].split("-"))
                    self.rows.append([first, last, head[1], head[5] if len(head) > 5 else "", 0])
                elif head[0] == "Anonymous:" and self.rows:
                    self.rows[-1][4] = int(head[1]) * 1024


def _resident(pagemap: int, start: int, length: int, page: int) -> np.ndarray:
    """Per page of ``[start, start + length)`` (page-aligned), 1 where the process has a page of its own there
    (/proc/self/pagemap: present and mapped by this process alone). Not ``mincore``, which also counts the
    shared zero page that a read of a never-written page maps: the kernel's RSS does not."""
    pages = length // page
    if pages <= 0:
        return np.zeros(0, dtype=np.uint8)
    entries = np.frombuffer(os.pread(pagemap, pages * 8, start // page * 8), dtype=np.uint64)
    return ((entries >> np.uint64(63)) & (entries >> np.uint64(56)) & np.uint64(1)).astype(np.uint8)


class _Span:
    """Memory at an address, as numpy reads it (``__array_interface__``): no ctypes type is made for it, where
    ``np.ctypeslib.as_array`` makes an array type for every length, which ctypes keeps for good (its pointer
    types' cache): a census of a few hundred mappings left a few hundred classes behind each time, ~33 blocks
    each, in the memory it was measuring."""

    def __init__(self, start: int, length: int) -> None:
        self.__array_interface__ = {"data": (start, False), "shape": (length // 8,), "typestr": "<u8", "version": 3}


def _words(start: int, length: int) -> np.ndarray:
    """The 8-byte words of ``[start, start + length)``, read in place."""
    return np.asarray(_Span(start, length))


def page_account(lone: bool = False) -> dict[str, Any]:
    """The account above, in bytes (``other_mappings``: a list of (start, size, resident bytes)). With ``lone``,
    also ``lone``: the blocks in use alone on mostly free pages (``_lone_blocks``). Empty where the arenas cannot be
    read."""
    global _WALK, _LONE
    if not _supported():
        return {}
    if _WALK is None:
        _WALK = _walk_kernel()
        _WALK(np.zeros(8, dtype=np.uint64), 0, 0, 0, 4096, np.zeros(1, dtype=np.uint8))  # compiled now, not while
        # the walk reads the maps (compiling grows the heap)
    if lone and _LONE is None:
        _LONE = _lone_kernel()
        _LONE(np.zeros(8, dtype=np.uint64), 0, 0, 0, 4096, np.zeros(1, dtype=np.uint8), np.zeros((16, 2)), 0,
              np.zeros(1, dtype=np.int64), np.zeros(1))
    try:
        pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
    except OSError:
        return {}
    try:
        return _account(pagemap, lone)
    finally:
        os.close(pagemap)


def _heaps(anon: list[list[Any]], pagemap: int, page: int) -> tuple[list[tuple[int, int, int]],
                                                                     list[tuple[int, int, int]]]:
    """malloc's heaps among the anonymous mappings ``anon`` (``_Maps`` rows): (start, end, first chunk) of each,
    to walk, and the thread arenas' heaps as (heap, its end, its arena)."""
    info_size = _heap_info_size()

    def word(address: int) -> int:
        return ctypes.c_size_t.from_address(address).value

    def resident_word(address: int) -> int | None:  # (a page not yet resident is not read: no zero page mapped)
        return word(address) if _resident(pagemap, address - address % page, page, page)[0] else None

    # the thread heaps: 64 MB-aligned anonymous mappings opening with a heap_info, whose first word is its arena.
    # An arena's first heap holds the arena just after its heap_info; from one arena, the ring of ``next`` gives all
    from bench.robustness.glibc_arenas import NEXT

    aligned = [r[0] for r in anon if r[3] == "" and r[0] % HEAP_ALIGN == 0]
    heads = {h: a for h in aligned if (a := resident_word(h)) is not None}
    arenas: set[int] = set()
    a = next((a for h, a in heads.items() if h + 32 <= a <= h + 64), None)
    while a and a not in arenas and len(arenas) < 1024:
        arenas.add(a)
        a = word(a + NEXT)
    heaps = [(h, h + word(h + 16), a) for h, a in heads.items() if a in arenas and 0 < word(h + 16) <= HEAP_ALIGN]
    main_rows = [r for r in anon if r[3] == "[heap]"]  # the main arena's: from the start of the program's break
    walked: list[tuple[int, int, int]] = []  # (start, end, first chunk)
    for h, used_end, arena in heaps:
        walked.append((h, used_end, arena + -(-MALLOC_STATE_SIZE // 16) * 16 if h <= arena < h + HEAP_ALIGN
                       else h + info_size))
    if main_rows:
        walked.append((min(r[0] for r in main_rows), max(r[1] for r in main_rows), min(r[0] for r in main_rows)))
    return walked, heaps


def heap_ranges() -> list[tuple[int, int, int]]:
    """malloc's heaps now, as (start, end, first chunk): what the account walks. Empty where they cannot be read."""
    if not _supported():
        return []
    pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
    try:
        anon = [r for r in _Maps().rows if r[2].startswith("rw") and r[3] in ("", "[heap]")]
        return _heaps(anon, pagemap, os.sysconf("SC_PAGE_SIZE"))[0]
    finally:
        os.close(pagemap)


def _account(pagemap: int, lone: bool = False) -> dict[str, Any]:
    page = os.sysconf("SC_PAGE_SIZE")
    maps = _Maps()
    anon = [r for r in maps.rows if r[2].startswith("rw") and r[3] in ("", "[heap]")]
    walked, heaps = _heaps(anon, pagemap, page)
    out: dict[str, Any] = {"arena_resident": 0, "arena_live": 0, "arena_in_use": 0, "arena_free": 0,
                           "arena_chunks": 0, "walk_ok": 1, "unwalked": 0, "mmapped_resident": 0,
                           "other_anon": 0}
    for start, end, first in walked:
        resident = _resident(pagemap, start, end - start, page)
        live = np.zeros(resident.size, dtype=np.uint8)
        in_use, free, chunks, reached = _WALK(_words(start, end - start), start, first, end, page, live)
        # (a fencepost, 16 bytes then 0, closes a heap the arena grew past: the walk ends on it)
        if reached != end and (reached + 16 > end or ctypes.c_size_t.from_address(reached + 8).value & ~7 != 16):
            out["walk_ok"] = 0
            out["unwalked"] += end - reached  # what the account leaves out of "in use" and "free"
        out["arena_resident"] += int(resident.sum()) * page
        out["arena_live"] += int((resident & live).sum()) * page
        out["arena_in_use"] += int(in_use)
        out["arena_free"] += int(free)
        out["arena_chunks"] += int(chunks)
    if lone:
        out["lone"] = _lone_blocks(walked, pagemap, page)
    # the rest: malloc's own mappings (a chunk header marked "mmapped" opens each, at a page's start; numpy's madvise
    # can split one into several of the kernel's mappings, and the kernel joins adjacent ones with the same flags,
    # so a header can lie anywhere in a run of adjacent mappings) and what is not malloc's
    rows = [r for r in anon if r[3] == "" and not any(h <= r[0] < h + HEAP_ALIGN for h, _, _ in heaps)]
    others: list[tuple[int, int, int]] = []
    i = 0
    while i < len(rows):
        j = i  # rows i..j: one run of adjacent mappings
        while j + 1 < len(rows) and rows[j + 1][0] == rows[j][1]:
            j += 1
        start, end = rows[i][0], rows[j][1]
        resident = _resident(pagemap, start, end - start, page)
        words = _words(start, end - start)
        in_chunk = np.zeros(resident.size, dtype=bool)
        at_pages = np.flatnonzero(resident) * (page // 8)  # only pages of its own are read
        lead, head = words[at_pages], words[at_pages + 1]
        size = head & ~np.uint64(7)
        fits = ((head & np.uint64(7)) == IS_MMAPPED) & (lead < page) & (size >= page) & ((lead + size) % page == 0)
        cursor = start
        for at in at_pages[fits]:
            m = start + int(at) * 8
            span = int(words[at]) + int(words[at + 1] & ~np.uint64(7))
            if m < cursor or m + span > end:
                continue
            in_chunk[(m - start) // page:(m + span - start) // page] = True
            cursor = m + span
        out["mmapped_resident"] += int(resident[in_chunk].sum()) * page
        for r in rows[i:j + 1]:
            first, last = (r[0] - start) // page, (r[1] - start) // page
            rest = int(resident[first:last][~in_chunk[first:last]].sum()) * page
            out["other_anon"] += rest
            if rest:
                others.append((r[0], r[1] - r[0], rest))
        i = j + 1
    out["other_mappings"] = others
    # the kernel's own count at the same moment, every mapping (a file's private pages written to included): what
    # the account above leaves out, or counts that the kernel does not, is the difference
    out["smaps_anon"] = sum(r[4] for r in maps.rows)
    return out


def _lone_blocks(walked: list[tuple[int, int, int]], pagemap: int, page: int) -> dict[str, Any]:
    """The blocks in use that lie on a resident page blocks in use fill a quarter or less of: what keeps the pages
    a trim cannot give back. ``pages``: those pages' bytes; ``blocks``: how many blocks; ``by_size``: per size
    bucket (its upper bound in bytes), blocks and the bytes of page they keep (a page's bytes shared among its
    blocks); ``sample``/``kept``: about LONE_SAMPLE of them spread evenly (every ``every``-th), their addresses
    and what each keeps, for ``name_blocks``."""
    heaps = [(start, end, first, _resident(pagemap, start, end - start, page)) for start, end, first in walked]
    by_size = np.zeros((24, 2))
    found = 0
    for start, end, first, resident in heaps:
        found += _LONE(_words(start, end - start), start, first, end, page, resident, by_size, 0,
                       np.zeros(1, dtype=np.int64), np.zeros(1))[0]
    every = max(1, -(-found // LONE_SAMPLE))
    samples: list[np.ndarray] = []
    kept: list[np.ndarray] = []
    for start, end, first, resident in heaps:  # (the heap may have changed since: a block freed meanwhile is read
        # as it was left, and named by what it held)
        sample, share = np.zeros(LONE_SAMPLE, dtype=np.int64), np.zeros(LONE_SAMPLE)
        _, wrote = _LONE(_words(start, end - start), start, first, end, page, resident, np.zeros((24, 2)), every,
                         sample, share)
        samples.append(sample[:wrote])
        kept.append(share[:wrote])
    return {"pages": float(by_size[:, 1].sum()), "blocks": found,
            "by_size": [(2**b, int(n), float(k)) for b, (n, k) in enumerate(by_size) if n],
            "sample": np.concatenate(samples)[:LONE_SAMPLE], "kept": np.concatenate(kept)[:LONE_SAMPLE],
            "every": every}


def _every_type() -> dict[int, type]:
    """Every class alive, by address (id): the classes reached from ``object`` through their subclasses."""
    found: dict[int, type] = {}
    stack: list[type] = [object]
    while stack:
        cls = stack.pop()
        if id(cls) in found:
            continue
        found[id(cls)] = cls
        try:
            stack.extend(type.__subclasses__(cls))
        except TypeError:
            continue
    return found


def block_name(chunk: int, types: dict[int, type]) -> tuple[str, int]:
    """What the malloc block at ``chunk`` (its header's address) holds: a Python object's type where the block opens
    with one (CPython keeps its objects in malloc's blocks here: an object not tracked by the collector starts the
    block, a tracked one follows its 16-byte collector header, and one with a managed dict 16 bytes more), else a
    C++ object's class, from its vtable (``cxx_objects``), else "not a Python object", each of these two with the
    block's size; with the object's offset in the block's user bytes (0 for none). A heuristic: a block whose second word happens to be a class's address reads as that class (an int, str,
    bytes or float only where its length fits the block too). ``types``: ``_every_type()``."""
    from bench.robustness.cxx_objects import LARGEST, vtable_class
    from bench.robustness.object_headers import UNTRACKED, fits

    size = ctypes.c_size_t.from_address(chunk + 8).value & ~7
    for offset in (0, 16, 32):
        if offset + 32 > size:  # the header, then the object's count and type
            break
        count = ctypes.c_size_t.from_address(chunk + 16 + offset).value
        cls = types.get(ctypes.c_size_t.from_address(chunk + 24 + offset).value)
        if offset == 0 and cls in UNTRACKED and not fits(cls, chunk + 16, size - 8):
            continue  # its length does not fit the block: not one (the test lone_holders makes too)
        if cls is not None and 0 < count < 2**32:
            return f"{cls.__module__}.{cls.__qualname__}", offset
    if size <= LARGEST:
        name = vtable_class(ctypes.c_size_t.from_address(chunk + 16).value)
        if name is not None:  # an object of a C++ class with virtual functions: its class, from its vtable
            return f"C++ {name}, {size} bytes", 0
    return f"not a Python object, {size} bytes", 0


def name_blocks(lone: dict[str, Any], top: int = 12) -> list[tuple[str, int, float]]:
    """What the sampled lone blocks are (``block_name``): (name, blocks, bytes of page kept), scaled from the sample
    to all, most kept first."""
    types = _every_type()
    every = lone.get("every", 1)
    named: dict[str, list[float]] = {}
    for chunk, share in zip(lone.get("sample", []), lone.get("kept", []), strict=True):
        name = block_name(int(chunk), types)[0]
        row = named.setdefault(name, [0, 0.0])
        row[0] += every
        row[1] += float(share) * every
    ranked = sorted(named.items(), key=lambda kv: -kv[1][1])
    from bench.robustness.cxx_objects import vtable_class

    vtable_class.cache_clear()  # (its names are not to stay in the memory the next census reads)
    return [(name, int(n), kept) for name, (n, kept) in ranked[:top]]


_CENSUS_MAPPINGS: list[tuple[int, int, int]] = []
_CENSUS_LONE: dict[str, Any] = {}


def page_account_mb() -> dict[str, float]:
    """``page_account`` in MB, for the census; its list of mappings is kept for ``census_mappings``, and its lone
    blocks for ``census_lone``."""
    account = page_account(lone=True)
    _CENSUS_MAPPINGS[:] = account.get("other_mappings", [])
    _CENSUS_LONE.clear()
    _CENSUS_LONE.update(account.get("lone", {}))
    if _CENSUS_LONE:
        _CENSUS_LONE["named"] = name_blocks(_CENSUS_LONE)
    mb = 2**20
    out = {f"pages_{k}": (v if k in ("walk_ok", "arena_chunks") else v / mb)
           for k, v in account.items() if k not in ("other_mappings", "lone")}
    if _CENSUS_LONE:
        out["pages_lone"] = _CENSUS_LONE["pages"] / mb
    return out


def census_lone() -> dict[str, Any]:
    """The lone blocks of the last census (``page_account_mb``), with ``named``: ``name_blocks``'s answer."""
    return dict(_CENSUS_LONE)


def lone_said(lone: dict[str, Any]) -> str:
    """The lone blocks in a line: how many pages they keep, by size and by what they are."""
    if not lone:
        return "not read"
    mb = 2**20
    sizes = ", ".join(f"≤{bound:,} B: {n:,} ({kept / mb:,.1f} MB)" for bound, n, kept in lone["by_size"]
                      if kept >= 0.05 * mb)
    named = "; ".join(f"{name} {n:,} ({kept / mb:,.1f} MB)" for name, n, kept in lone.get("named", [])[:8])
    return (f"{lone['pages'] / mb:,.0f} MB of pages kept by {lone['blocks']:,} blocks; by size (blocks, pages kept): "
            f"{sizes or 'none'}; by what they are (from {len(lone['sample']):,} read): {named or 'none'}")


def census_mappings() -> list[tuple[int, int, int]]:
    """The mappings not malloc's of the last census (``page_account_mb``), read at its instant: no second walk."""
    return list(_CENSUS_MAPPINGS)


def mapping_growth(before: list[tuple[int, int, int]], after: list[tuple[int, int, int]], top: int = 10) -> str:
    """The mappings not malloc's whose resident memory grew most between two accounts (``other_mappings``), as
    "address (size): before → after MB"; a mapping that was not there before counts from 0, one that went is left
    out. With the total of what grew, what was new and what went."""
    mb = 2**20
    old = {start: (size, rest) for start, size, rest in before}
    rows = []
    for start, size, rest in after:
        was = old.get(start, (0, 0))[1]
        rows.append((rest - was, start, size, was, rest))
    rows.sort(reverse=True)
    gone = sum(rest for start, _, rest in before if start not in {s for s, _, _ in after})
    new = sum(rest for start, _, rest in after if start not in old)
    grown = sum(max(0, d) for d, *_ in rows)
    listed = "; ".join(f"{start:#x} ({size / mb:,.1f} MB{', new' if start not in old else ''}): {was / mb:,.1f} → "
                       f"{rest / mb:,.1f} MB" for d, start, size, was, rest in rows[:top] if d > 0)
    return (f"{sum(r for _, _, r in before) / mb:,.0f} → {sum(r for _, _, r in after) / mb:,.0f} MB in "
            f"{len(before)} → {len(after)} mappings (grown {grown / mb:,.0f} MB, of it in new mappings "
            f"{new / mb:,.0f}; in mappings gone {gone / mb:,.0f}): {listed or 'none grew'}")
