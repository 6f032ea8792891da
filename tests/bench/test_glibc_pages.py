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
