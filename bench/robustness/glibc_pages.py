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


_WALK: Any = None


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


def _words(start: int, length: int) -> np.ndarray:
    return np.ctypeslib.as_array(ctypes.cast(ctypes.c_void_p(start), ctypes.POINTER(ctypes.c_uint64)),
                                 shape=(length // 8,))


def page_account() -> dict[str, Any]:
    """The account above, in bytes (``other_mappings``: a list of (start, size, resident bytes)). Empty where the
    arenas cannot be read."""
    global _WALK
    if not _supported():
        return {}
    if _WALK is None:
        _WALK = _walk_kernel()
        _WALK(np.zeros(8, dtype=np.uint64), 0, 0, 0, 4096, np.zeros(1, dtype=np.uint8))  # compiled now, not while
        # the walk reads the maps (compiling grows the heap)
    try:
        pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
    except OSError:
        return {}
    try:
        return _account(pagemap)
    finally:
        os.close(pagemap)


def _account(pagemap: int) -> dict[str, Any]:
    page = os.sysconf("SC_PAGE_SIZE")
    info_size = _heap_info_size()
    maps = _Maps()
    anon = [r for r in maps.rows if r[2].startswith("rw") and r[3] in ("", "[heap]")]

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
    out: dict[str, Any] = {"arena_resident": 0, "arena_live": 0, "arena_in_use": 0, "arena_free": 0,
                           "arena_chunks": 0, "walk_ok": 1, "unwalked": 0, "mmapped_resident": 0,
                           "other_anon": 0}
    walked: list[tuple[int, int, int]] = []  # (start, end, first chunk)
    for h, used_end, arena in heaps:
        walked.append((h, used_end, arena + -(-MALLOC_STATE_SIZE // 16) * 16 if h <= arena < h + HEAP_ALIGN
                       else h + info_size))
    if main_rows:
        walked.append((min(r[0] for r in main_rows), max(r[1] for r in main_rows), min(r[0] for r in main_rows)))
    for start, end, first in walked:
        resident = _resident(pagemap, start, end - start, page)
        live = np.zeros(resident.size, dtype=np.uint8)
        in_use, free, chunks, reached = _WALK(_words(start, end - start), start, first, end, page, live)
        # (a fencepost, 16 bytes then 0, closes a heap the arena grew past: the walk ends on it)
        if reached != end and (reached + 16 > end or word(reached + 8) & ~7 != 16):
            out["walk_ok"] = 0
            out["unwalked"] += end - reached  # what the account leaves out of "in use" and "free"
        out["arena_resident"] += int(resident.sum()) * page
        out["arena_live"] += int((resident & live).sum()) * page
        out["arena_in_use"] += int(in_use)
        out["arena_free"] += int(free)
        out["arena_chunks"] += int(chunks)
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


_CENSUS_MAPPINGS: list[tuple[int, int, int]] = []


def page_account_mb() -> dict[str, float]:
    """``page_account`` in MB, for the census; its list of mappings is kept for ``census_mappings``."""
    account = page_account()
    _CENSUS_MAPPINGS[:] = account.get("other_mappings", [])
    mb = 2**20
    return {f"pages_{k}": (v if k in ("walk_ok", "arena_chunks") else v / mb)
            for k, v in account.items() if k != "other_mappings"}


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
