"""The window's process: numpy no longer marks the arrays a query makes and drops for huge pages
(explorer/huge_pages.py); a choice the user made with numpy's own variable wins."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import sys
sys.path.insert(0, {root!r})
import numpy as np
from explorer.huge_pages import passing_arrays_without_huge_pages
print("off", passing_arrays_without_huge_pages() if {call} else None)
array = np.empty(40 * 2**20 // 8)  # (np.zeros and np.ones take calloc, which numpy does not mark) over glibc's largest mmap threshold: a mapping of its own
address = array.ctypes.data + array.nbytes // 2  # (numpy marks the whole pages inside it: not its first)
inside = False
for line in open("/proc/self/smaps").read().splitlines():
    head = line.split(" ", 1)[0]
    if "-" in head and ":" not in head:
        low, high = (int(x, 16) for x in head.split("-"))
        inside = low <= address < high
    elif inside and line.startswith("VmFlags:"):
        print("marked", "hg" in line.split())
"""


def in_child(env: dict[str, str], call: bool) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), call=call)], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


@pytest.mark.skipif(not (sys.platform.startswith("linux") and Path("/sys/kernel/mm/transparent_hugepage").exists()),
                    reason="Linux's transparent huge pages")
def test_numpy_marks_no_passing_array_in_the_window_unless_the_user_chose():
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    assert in_child(env, call=False) == {"off": "None", "marked": "True"}  # numpy's default: marked
    assert in_child(env, call=True) == {"off": "True", "marked": "False"}
    assert in_child({**env, "NUMPY_MADVISE_HUGEPAGE": "1"}, call=True) == {"off": "False", "marked": "True"}
