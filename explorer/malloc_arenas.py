"""At most two of glibc's malloc arenas in the window's process.

glibc gives threads arenas of their own, up to eight per core, so that they do not wait for one another's lock.
The window's query and job threads come and go (Qt's pool lets an idle thread end after 30 s), and over 10 minutes
of random use the window had 12-14 arenas. Each keeps freed memory resident that ``malloc_trim`` cannot give back:
the top of a thread's arena (glibc trims it only as a free in that arena leaves it above a threshold that rises
to 64 MB) and the pages that freed blocks share with live ones. What the window kept over a chaos run grew there,
not in the blocks in use (bench/robustness/RESULTS.md, "Chaos in the window": runs V and W). Two arenas cost the
window's queries nothing measurable (bench/robustness/allocator.py: 324 queries against the default's 320, with
three threads querying at once).

Set with ``mallopt`` when the window starts, before its threads do, on Linux with glibc only, and not where the
user chose a limit (``MALLOC_ARENA_MAX``, or ``arena_max`` in ``GLIBC_TUNABLES``). Process-local: the trainings the
window starts keep glibc's default."""

from __future__ import annotations

import os
import platform
import sys

ARENAS = 2
M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


def fewer_arenas(limit: int = ARENAS) -> bool:
    """Call first in the window's process: glibc's malloc keeps at most ``limit`` arenas (the main one included)
    from now on. Whether it was set."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    if "MALLOC_ARENA_MAX" in os.environ or "arena_max" in os.environ.get("GLIBC_TUNABLES", ""):
        return False  # the user's choice
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_ARENA_MAX, limit))
    except (OSError, AttributeError):
        return False
