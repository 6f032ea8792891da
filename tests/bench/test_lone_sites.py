"""bench/robustness/lone_sites.py: the blocks alone on their pages are named by the line that allocated them."""

import platform
import sys
import threading
import tracemalloc

import pytest

glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not glibc, reason="reads glibc's arenas")
def test_lone_blocks_are_named_by_the_line_that_made_them():
    from bench.robustness.glibc_pages import page_account
    from bench.robustness.lone_sites import sites, sites_said
    from engine.api import release_memory

    kept: list[int] = []

    def work() -> None:  # 24,000 ints of ~600 bytes (malloc's blocks) in a thread's arena; 1 in 12 kept
        numbers = [(1 << 4500) + i for i in range(24_000)]
        kept.extend(numbers[::12])
        del numbers

    assert sites_said({"sample": [1], "kept": [1.0]}).startswith("not traced")  # no tracing: nothing to say
    tracemalloc.start(4)
    try:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        release_memory()
        lone = page_account(lone=True)["lone"]
        found = {name: (n, pages) for name, n, pages in sites(lone, top=50)}
    finally:
        tracemalloc.stop()
    ours = [name for name in found if name.startswith("tests/bench/test_lone_sites.py:")]
    line = f"tests/bench/test_lone_sites.py:{work.__code__.co_firstlineno + 1}"
    assert line in ours, found
    assert all(found[other][0] < 10 for other in ours if other != line), found  # (the list that keeps them: one)
    n, pages = found[line]
    assert 1_000 < n < 2_500 and pages > 1_000 * 2_000  # of the 2,000 kept, those alone; each keeps most of a page
    kept.clear()


def test_a_site_is_the_line_that_allocated_with_the_projects_own_line_above_it():
    from bench.robustness.lone_sites import NUMPY_DOMAIN, ROOT, site

    frames = (("/usr/lib/python3.11/site-packages/numpy/_core/numeric.py", 232),
              (str(ROOT / "engine" / "data" / "word_list.py"), 40), (str(ROOT / "explorer" / "app.py"), 9))
    assert site(frames) == "numpy/_core/numeric.py:232 ← engine/data/word_list.py:40"
    assert site(frames[1:]) == "engine/data/word_list.py:40"
    assert site(frames, NUMPY_DOMAIN).startswith("numpy's data: ")
    assert site(None).startswith("not traced")
