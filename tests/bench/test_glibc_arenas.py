"""The chaos bench's look inside glibc's arenas (bench/robustness/glibc_arenas.py): the free memory a thread's arena
keeps resident is counted, the trim the window calls gives it back, and the free bytes agree with glibc's own count."""

import platform
import sys
import threading

import pytest

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not glibc, reason="reads glibc's arenas")
def test_free_memory_a_thread_arena_keeps_is_counted_and_a_trim_gives_it_back():
    from bench.robustness.glibc_arenas import arenas_mb
    from bench.robustness.memory import mallinfo_mb
    from engine.api import release_memory

    release_memory()
    before = arenas_mb()
    kept: list[bytes] = []

    def work() -> None:
        blocks = [b"x" * (64 << 10) for _ in range(400)]  # 25 MB written, from this thread's arena
        kept.append(blocks[-1])  # the last stays: the others, freed, are one free chunk, not the arena's top
        del blocks

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    after = arenas_mb()
    assert after["arenas"] >= 2  # the main arena and a thread's
    assert after["arena_free_resident"] - before.get("arena_free_resident", 0.0) > 20  # MB, freed but still in memory

    release_memory()
    trimmed, glibc_says = arenas_mb(), mallinfo_mb()
    assert trimmed["arena_free"] == pytest.approx(glibc_says["heap_free"], rel=0.02, abs=1.0)  # glibc's own count
    assert after["arena_free_resident"] - trimmed["arena_free_resident"] > 20  # given back
    kept.clear()
