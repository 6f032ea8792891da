"""The chaos bench's count of malloc's blocks in use by size (bench/robustness/live_blocks.py): blocks made between
two counts are found at their size, in a thread's arena too, and named by what they hold."""

import platform
import sys

import pytest

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


def in_own_process(check: str) -> None:
    """Run this file's ``check`` in a process of its own, with Python's objects from malloc (as the app's window
    has them): it must print "ok"."""
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = f"import runpy; runpy.run_path({str(Path(__file__).resolve())!r})[{check!r}]()"
    env = {**os.environ, "PYTHONMALLOC": "malloc"}
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ok" in done.stdout


@pytest.mark.skipif(not glibc, reason="reads glibc's arenas")
def test_blocks_made_between_two_counts_are_found_at_their_size_and_named():
    in_own_process("_count_check")


def _count_check() -> None:
    import threading

    from bench.robustness.live_blocks import grown, growth_said, live_sizes, name_sizes

    before = live_sizes()
    kept: list[object] = []

    def work() -> None:  # in a thread's arena: 3,000 buffers of 3,000 bytes (a chunk of 3,008 bytes each)
        kept.extend(bytearray(3000 - 57) for _ in range(3000))  # (a bytearray keeps one byte more than its length)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    kept.extend(frozenset({i, -i}) for i in range(20_000))  # objects of one type, in the main arena
    after = live_sizes()

    rows = {size: more for size, more, _ in grown(before, after, top=50)}
    buffers = [size for size in rows if 2900 < size < 3100]
    assert buffers and sum(rows[s] for s in buffers) >= 3000, rows  # every buffer, at its chunk's size
    many = [size for size in rows if size < 1000 and rows[size] >= 19_000]  # the sets' size, and their ints'
    names = name_sizes(many, after, sample=100)
    assert any(names[size][0][0] == "builtins.frozenset" for size in many), names  # a size read as mostly sets
    said = growth_said(before, after)
    assert "builtins.frozenset" in said and "MB in the arenas' heaps" in said
    assert growth_said({}, after) == "not read"
    print("ok")


@pytest.mark.skipif(not glibc, reason="reads glibc's arenas")
def test_a_large_block_holding_a_tensor_is_named_so():
    in_own_process("_large_check")


def _large_check() -> None:
    import ctypes

    import torch

    from bench.robustness.live_blocks import grown, live_sizes, name_sizes

    ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD: large blocks from the heap, as in the window
    before = live_sizes()
    kept = [torch.ones(700_000) for _ in range(3)]  # 2.8 MB each: above live_blocks.SMALL
    after = live_sizes()
    size = max(grown(before, after), key=lambda row: row[1] if row[0] > 2_000_000 else 0)[0]
    assert after[size] - before.get(size, 0) >= 3
    assert name_sizes([size], after)[size][0][0] == "torch storage", kept
    print("ok")
