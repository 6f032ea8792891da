"""bench/robustness/pointer_holders.py: what points at a block is found by reading memory, where the garbage
collector cannot see it (a numpy array of objects), and a block nothing points at is said to be held by nothing."""

import platform
import subprocess
import sys
from pathlib import Path

import pytest

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not glibc, reason="reads glibc's arenas")
def test_holders_are_found_by_the_words_that_point_at_them():
    """In a process of its own, with Python's objects from malloc as in the window: a small one is read in a second,
    and nothing another test left can point at them."""
    import os

    root = Path(__file__).resolve().parents[2]
    code = f"import runpy; runpy.run_path({str(Path(__file__).resolve())!r})['_pointer_check']()"
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONMALLOC": "malloc"})
    assert done.returncode == 0, done.stderr[-3000:]


def _pointer_check() -> None:
    import ctypes
    import gc

    import numpy as np

    from bench.robustness.glibc_pages import _every_type, block_name
    from bench.robustness.pointer_holders import holder_paths, unheld

    def big(i: int) -> int:  # ~600 bytes: a block of malloc's own under pymalloc too
        return (1 << 4500) + i

    def make_three() -> list[int]:  # (in a frame of its own: the stale copies its evaluation left are overwritten by
        return [big(4), big(5), big(6)]  # the calls that follow, where this frame's own would stay)

    stale = np.zeros(4, dtype=np.uint64)  # a sampled block freed since: its size word now reads as anything (once,
    stale[1] = 1 << 46  # the range such a block seemed to span was left out of the scan, and every pointer with it)
    in_array = np.empty(3, dtype=object)  # a numpy array is not the collector's: its items have no referrer
    in_array[1] = big(1)
    in_list = [None, big(2)]
    three = make_three()  # 24 bytes of items, a 32-byte block: the third lies in the next block's first word
    made = ctypes.pythonapi.PyLong_FromLongLong  # an int made in C and never given back: no Python code held it
    made.restype, made.argtypes = ctypes.c_void_p, [ctypes.c_longlong]
    leaked_at = made((1 << 62) + 12345)
    holders = [id(in_array[1]), id(in_list[1]), leaked_at, id(three[2])]  # (a list: an address in a set is a hash)
    assert [r for r in gc.get_referrers(in_array[1]) if type(r).__name__ != "frame"] == []  # the collector: none
    types = _every_type()
    chunks = [address - 16 for address in holders]  # an untracked object opens its block
    assert [block_name(c, types)[0] for c in chunks] == ["builtins.int"] * 4
    in_numpy, in_python_list, nothing, third, _ = holder_paths([*chunks, stale.ctypes.data], depth=2)
    assert in_numpy[:2] == ["not a Python object, 32 bytes", "numpy.ndarray"], in_numpy  # its data, then the array
    assert in_python_list[0].startswith("not a Python object") and in_python_list[1] == "list", in_python_list
    assert nothing == [], nothing
    assert third == ["not a Python object, 32 bytes", "list"], third  # (its last word: the next block's first)
    # every int in malloc's heaps that nothing points at: the leaked one, not those the array and the list hold
    lost = set(unheld(int))
    assert leaked_at in lost and not lost & {holders[0], holders[1], holders[3]}


def test_a_heap_above_another_heaps_reserve_is_read_and_a_thread_stack_is_not():
    """A thread's stack lies just above its guard page; a thread arena's heap can lie just above the unwritable rest
    of the heap before it. The heap is read (taken for a stack once, its objects' pointers were missed)."""
    from bench.robustness.pointer_holders import pointer_mappings

    mb = 2**20
    rows = [
        [64 * mb, 65 * mb, "rw-p", "", 0],  # a thread arena's heap, in use
        [65 * mb, 128 * mb, "---p", "", 0],  # its reserved rest
        [128 * mb, 130 * mb, "rw-p", "", 0],  # the next heap, just above it
        [130 * mb, 130 * mb + 4096, "---p", "", 0],  # a thread's guard page
        [130 * mb + 4096, 138 * mb, "rw-p", "", 0],  # its stack
        [140 * mb, 141 * mb, "rw-p", "/usr/lib/libQt6Core.so.6", 0],  # a library's data
        [142 * mb, 143 * mb, "rw-p", "/dev/shm/x", 0],  # a device's
    ]
    got = [start for start, _, _ in pointer_mappings(rows, heap_starts={64 * mb, 128 * mb})]
    assert got == [64 * mb, 128 * mb, 140 * mb]
    assert [start for start, _, _ in pointer_mappings(rows, heap_starts=set())] == [64 * mb, 140 * mb]
