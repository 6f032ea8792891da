"""numpy asks for no huge pages in the window's process (explorer/huge_pages.py), and a training started from the
window gets numpy's default back."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import sys
sys.path.insert(0, {root!r})
if {window}:
    from explorer.huge_pages import no_numpy_huge_pages
    no_numpy_huge_pages()
import numpy as np
a = np.ones(16 << 20)  # 128 MB: marked for huge pages by numpy's default
address = a.ctypes.data
flags = ""
for line in open("/proc/self/smaps"):
    head = line.split()
    if "-" in head[0] and not head[0].endswith(":"):
        first, last = (int(x, 16) for x in head[0].split("-"))
        inside = first <= address + (64 << 20) < last
    elif head[0] == "VmFlags:" and inside:
        flags = " ".join(head[1:])
print("hg" in flags.split())
"""


def marked(window: bool) -> bool:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMPY_MADVISE", "WORD2BERT_SET_NUMPY"))}
    done = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), window=window)], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip() == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's huge pages")
def test_the_windows_big_arrays_are_not_marked_for_huge_pages_and_a_training_gets_numpys_default_back():
    from explorer.huge_pages import MARK, VARIABLE
    from explorer.worker_threads import training_environment

    if not marked(window=False):
        pytest.skip("this kernel marks nothing for huge pages (no transparent huge pages)")
    assert not marked(window=True)
    assert training_environment({"PATH": "/bin", VARIABLE: "0", MARK: "1"}) == {"PATH": "/bin"}
    assert training_environment({"PATH": "/bin", VARIABLE: "1"}) == {"PATH": "/bin", VARIABLE: "1"}  # the user's
