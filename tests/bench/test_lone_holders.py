"""bench/robustness/lone_holders.py: the objects alone on their pages are traced to what keeps them, by path."""

import platform
import sys
import threading

import pytest

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


class Keeper:
    def __init__(self) -> None:
        self.kept: list[int] = []
        self.notes: dict[int, str] = {}


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
        texts = [f"{i:>600}" + ("é" if i % 2 else "") for i in range(12_000)]  # and strs, ASCII and not
        keeper.notes.update(enumerate(texts[::12]))
        del texts

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    release_memory()
    lone = page_account(lone=True)["lone"]
    paths = {path: (n, kept) for path, n, kept in holders(lone, top=50)}
    ours = [path for path in paths if path.startswith("int ← list ← Keeper.kept")]  # (then the test's closure)
    assert len(ours) == 1, paths
    n, kept = paths[ours[0]]
    assert 1_000 < n < 2_500  # of the 2,000 kept, those alone on their page (the strs fill some holes between)
    assert kept > 1_000 * 2_000  # each keeps most of a page
    notes = [path for path in paths if path.startswith("str ← dict ← Keeper.notes")]
    assert len(notes) == 1, paths
    assert 400 < paths[notes[0]][0] < 1_300  # of the 1,000 kept (a dict of strs: one the collector does not track)
    keeper.kept.clear()
    keeper.notes.clear()


def test_an_object_nobody_holds_is_said_with_what_it_holds():
    import ctypes

    from bench.robustness.object_headers import peek

    number, text = (1 << 40) + 12_345, "a lone note" * 3
    assert peek(int, id(number)).startswith(f"{number:,} (count ")
    assert peek(int, id(-(1 << 100))).startswith("-an int of up to 120 bits")
    assert peek(int, id(-(1 << 60) - 7)).startswith(f"{-(1 << 60) - 7:,} (count ")
    assert peek(str, id(text)) == f"{text!r} (count {ctypes.c_ssize_t.from_address(id(text)).value})"
    assert peek(str, id("é" * 50)).startswith("a str of 50 characters")
