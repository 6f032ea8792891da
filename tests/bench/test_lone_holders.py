"""bench/robustness/lone_holders.py: the objects alone on their pages are traced to what keeps them, by path."""

import platform
import sys
import threading

import pytest

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


class Keeper:
    def __init__(self) -> None:
        self.kept: list[int] = []


@pytest.mark.skipif(not glibc, reason="reads glibc's arenas")
def test_lone_objects_are_traced_to_the_attribute_that_keeps_them():
    from bench.robustness.glibc_pages import page_account
    from bench.robustness.lone_holders import holders
    from engine.api import release_memory

    keeper = Keeper()

    def work() -> None:  # 24,000 ints of ~600 bytes (malloc's blocks, not pymalloc's) in a thread's arena; 1 in 12 kept
        numbers = [(1 << 4500) + i for i in range(24_000)]
        keeper.kept.extend(numbers[::12])
        del numbers

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    release_memory()
    lone = page_account(lone=True)["lone"]
    paths = {path: (n, kept) for path, n, kept in holders(lone, top=50)}
    ours = [path for path in paths if path.startswith("int ← list ← Keeper.kept")]  # (then the test's closure)
    assert len(ours) == 1, paths
    n, kept = paths[ours[0]]
    assert 1_500 < n < 2_500  # the 2,000 kept, each alone on its page
    assert kept > 1_500 * 2_000  # each keeps most of a page
    keeper.kept.clear()
