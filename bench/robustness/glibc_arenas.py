"""glibc's arenas read in place, for the census of a quiet moment (Linux, glibc 2.27 or later, 64-bit): how many
arenas there are, their free bytes (free chunks and each arena's top) and how much of those is still resident.

``malloc_trim`` gives back the whole pages of every free chunk in every arena, and the main arena's top, but not a
thread arena's top: glibc trims that only when a free in that arena leaves it above the trim threshold, which
rises with the blocks freed (up to 64 MB). So each thread arena can keep its top resident. What a free chunk or a
top still holds resident is asked of the kernel (``mincore``) page by page.

The arenas are found from the threads' heaps (anonymous mappings aligned at 64 MB, each starting with glibc's
``heap_info``, whose first field points at its arena) and then by each arena's ``next``, which links them all,
the main one included, in a ring. Every pointer is checked against the process's mappings before it is read: the
walk happens at a quiet moment, but a thread that allocates meanwhile must not make it read freed memory."""

from __future__ import annotations

import bisect
import ctypes
import os
import platform
import sys

HEAP_ALIGN = 64 << 20  # glibc's HEAP_MAX_SIZE on 64-bit
# struct malloc_state (glibc 2.27+, 64-bit): mutex, flags, have_fastchunks, then 10 fastbins from offset 16
TOP, BINS, NBINS = 96, 112, 128
NEXT = BINS + (2 * NBINS - 2) * 8 + 16  # after the bins and the binmap (4 unsigned ints)
SYSTEM_MEM = NEXT + 24  # after next, next_free and attached_threads
HEADER = 32  # a free chunk's prev_size, size, fd and bk: written while it is free


def _supported() -> bool:
    if not sys.platform.startswith("linux") or ctypes.sizeof(ctypes.c_void_p) != 8:
        return False
    name, version = platform.libc_ver()
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        return False
    return name == "glibc" and (major, minor) >= (2, 27)


class _Memory:
    """The process's writable mappings (adjacent ones as one range), to read a word only where one is."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.heaps: list[int] = []  # anonymous writable mappings aligned at 64 MB: the threads' heaps
        with open("/proc/self/maps", encoding="ascii", errors="replace") as f:
            for line in f:
                fields = line.split()
                first, last = (int(x, 16) for x in fields[0].split("-"))
                if not fields[1].startswith("rw"):
                    continue
                if self.ends and self.ends[-1] == first:  # one range with the mapping before it (a heap grown by
                    self.ends[-1] = last                  # mprotect can be listed as several, a chunk across them)
                else:
                    self.starts.append(first)
                    self.ends.append(last)
                if len(fields) < 6 and first % HEAP_ALIGN == 0:
                    self.heaps.append(first)
        self.libc = ctypes.CDLL("libc.so.6", use_errno=True)
        self.libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        self.page = os.sysconf("SC_PAGE_SIZE")

    def end_of(self, address: int) -> int:
        """The end of the writable range ``address`` lies in (0: none)."""
        i = bisect.bisect_right(self.starts, address) - 1
        return self.ends[i] if i >= 0 and address < self.ends[i] else 0

    def word(self, address: int) -> int | None:
        if address + 8 > self.end_of(address):
            return None
        return ctypes.c_size_t.from_address(address).value

    def chunk_size(self, chunk: int) -> int | None:
        """A free chunk's size, if it is one: a multiple of 16 that ends within the chunk's range (the walk stops
        at anything else rather than ask the kernel about a range it made up)."""
        size = self.word(chunk + 8)
        if size is None:
            return None
        size &= ~7
        if size < HEADER or size % 16 or chunk + size > self.end_of(chunk):
            return None
        return size

    def resident(self, address: int, size: int) -> int:
        """Bytes of the whole pages in [address, address + size) that are resident."""
        first = -(-address // self.page) * self.page
        pages = (min(address + size, self.end_of(address)) - first) // self.page
        if pages <= 0:
            return 0
        # (a bytearray, not create_string_buffer: ctypes keeps a new array type for every length it is asked for)
        flags = bytearray(pages)
        if self.libc.mincore(first, pages * self.page, ctypes.addressof(ctypes.c_char.from_buffer(flags))) != 0:
            return 0
        return sum(b & 1 for b in flags) * self.page


def arenas_mb() -> dict[str, float]:
    """``arenas`` (how many), ``arena_free`` (MB free in them, tops included), ``arena_free_resident`` (of it
    resident) and ``arena_tops_resident`` (of that, in the tops). Empty where glibc's arenas cannot be read."""
    if not _supported():
        return {}
    try:
        memory = _Memory()
    except OSError:
        return {}
    # a thread arena's first heap holds the arena itself, just after its heap_info (at 32 or 48 bytes): a mapping that
    # merely happens to be aligned at 64 MB (a big block of its own) points nowhere like that
    first = next((a for h in memory.heaps if (a := memory.word(h)) is not None and h + 32 <= a <= h + 64
                  and (size := memory.word(h + 16)) is not None and 0 < size <= HEAP_ALIGN), None)
    if first is None:  # no thread arena yet: nothing this census adds to glibc's own account
        return {}
    arenas = free = free_resident = tops_resident = 0
    arena: int | None = first
    seen: set[int] = set()
    while arena is not None and arena not in seen and len(seen) < 1024:
        seen.add(arena)
        arenas += 1
        top = memory.word(arena + TOP)
        top_size = memory.chunk_size(top) if top is not None else None
        if top is not None and top_size is not None:
            free += top_size
            in_top = memory.resident(top + HEADER, top_size - HEADER)
            free_resident += in_top
            tops_resident += in_top
        for i in range(1, NBINS):
            bin_ = arena + BINS + (i - 1) * 16 - 16  # bin_at: the bin's pseudo-chunk, whose fd and bk are the list's
            chunk = memory.word(bin_ + 24)
            steps = 0
            while chunk is not None and chunk != bin_ and steps < 1_000_000:
                size = memory.chunk_size(chunk)
                if size is None:
                    break
                free += size
                if size > HEADER:
                    free_resident += memory.resident(chunk + HEADER, size - HEADER)
                chunk = memory.word(chunk + 24)
                steps += 1
        arena = memory.word(arena + NEXT)
    mb = 2**20
    return {"arenas": float(arenas), "arena_free": free / mb, "arena_free_resident": free_resident / mb,
            "arena_tops_resident": tops_resident / mb}
