"""The chaos bench's page-by-page account of the anonymous memory (bench/robustness/glibc_pages.py): blocks in use
agree with glibc's own count, a page kept by one live block among freed ones is told from a free page, a block
malloc maps on its own is malloc's, and a mapping made without malloc is not."""

import mmap
import platform
import sys
import threading

import pytest

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
MB = 2**20


@pytest.mark.skipif(not glibc, reason="reads glibc's arenas")
def test_the_account_tells_sparse_pages_malloc_mappings_and_foreign_mappings_apart():
    """In a process of its own: after other tests, the arenas can hold a free block big enough for the 40 MB array,
    which malloc then takes from there instead of mapping it on its own (seen after a training test)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = f"import runpy; runpy.run_path({str(Path(__file__).resolve())!r})['_account_check']()"
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def _account_check() -> None:
    import numpy as np

    from bench.robustness.glibc_pages import mapping_growth, page_account
    from bench.robustness.memory import mallinfo_mb
    from engine.api import release_memory

    release_memory()
    before = page_account()
    assert before["walk_ok"] == 1
    assert before["arena_in_use"] / MB == pytest.approx(mallinfo_mb()["heap_used"], rel=0.05, abs=2.0)
    kept: list[bytes] = []

    def work() -> None:  # 20 MB of 2 kB blocks in a thread's arena; one block in every four kept
        blocks = [bytes(2000) + bytes([i % 251]) for i in range(10_000)]
        kept.extend(blocks[::4])
        del blocks

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    big = np.ones(40 * MB // 8)  # mapped by malloc on its own (over its threshold)
    foreign = mmap.mmap(-1, 24 * MB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # not malloc's
    foreign.write(b"x" * (24 * MB))
    release_memory()
    after = page_account()

    assert after["walk_ok"] == 1
    in_use = after["arena_in_use"] - before["arena_in_use"]
    assert 4 * MB < in_use < 8 * MB  # the kept quarter: 2,500 blocks of ~2 kB
    # each kept block holds its page: about twice its bytes resident (two blocks a page), none of it freeable
    assert after["arena_live"] - after["arena_in_use"] - (before["arena_live"] - before["arena_in_use"]) > 6 * MB
    assert after["mmapped_resident"] - before["mmapped_resident"] == pytest.approx(40 * MB, abs=MB)
    # and nothing the kernel counts is missed, or counted twice (the rest: a file's private pages written to)
    accounted = after["arena_resident"] + after["mmapped_resident"] + after["other_anon"]
    assert 0.9 * after["smaps_anon"] < accounted <= after["smaps_anon"]
    grew = after["other_anon"] - before["other_anon"]
    assert 23 * MB < grew < 27 * MB
    assert "24.0 MB, new): 0.0 → 24.0 MB" in mapping_growth(before["other_mappings"], after["other_mappings"])
    del big
    foreign.close()
    kept.clear()


@pytest.mark.skipif(not glibc, reason="reads glibc's arenas")
def test_blocks_alone_on_their_pages_are_counted_and_named():
    from bench.robustness.glibc_pages import lone_said, name_blocks, page_account
    from engine.api import release_memory

    def named(account: dict) -> dict[str, int]:
        return {name: n for name, n, _ in name_blocks(account["lone"], top=1000)}

    release_memory()
    before = page_account(lone=True)
    kept: list[object] = []

    def work() -> None:  # in a thread's arena: 600-byte blocks (malloc's, not pymalloc's), one in twelve kept
        blocks = [bytes(600) if i % 2 else tuple([None] * 70) for i in range(24_000)]
        kept.extend(blocks[::12])  # (12 is even: every kept one is a tuple)
        kept.extend(blocks[7::12])  # and a bytes
        del blocks

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    release_memory()
    after = page_account(lone=True)
    lone, was = after["lone"], before["lone"]
    # 4,000 blocks of ~620 bytes, one or two on each of ~2,000-4,000 pages that hold nothing else in use
    assert 3_000 < lone["blocks"] - was["blocks"] < 5_000
    assert 6 * MB < lone["pages"] - was["pages"] < 18 * MB
    sizes = {bound: n for bound, n, _ in lone["by_size"]}
    assert sizes[1024] - dict((b, n) for b, n, _ in was["by_size"]).get(1024, 0) > 3_000  # the 513-1024 bytes bucket
    names, names_before = named(after), named(before)
    for kind in ("builtins.tuple", "builtins.bytes"):  # a tracked object after its collector header, and one not
        grew = names.get(kind, 0) - names_before.get(kind, 0)
        assert 1_000 < grew < 3_000, (kind, grew, lone_said(lone))
    kept.clear()


@pytest.mark.skipif(not glibc, reason="reads glibc's arenas")
def test_a_census_leaves_no_class_behind():
    """Reading a mapping of a new length once made a ctypes array class that ctypes keeps for good: a census of a
    few hundred mappings left a few hundred behind, in the memory it measured."""
    import ctypes

    from bench.robustness.glibc_pages import _words, page_account

    page_account(lone=True)
    classes = len(ctypes._pointer_type_cache)
    page_account(lone=True)
    buffer = (ctypes.c_uint64 * 64)(*range(64))
    for length in range(8, 512, 8):
        assert _words(ctypes.addressof(buffer), length)[-1] == length // 8 - 1
    assert len(ctypes._pointer_type_cache) == classes
