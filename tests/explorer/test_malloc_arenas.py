"""The window's process keeps at most two malloc arenas (explorer/malloc_arenas.py), however many threads allocate;
a limit the user set wins."""

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import sys, threading
sys.path.insert(0, {root!r})
from explorer.malloc_arenas import fewer_arenas
from bench.robustness.glibc_arenas import arenas_mb
print("set", fewer_arenas() if {cap} else None)
kept = []
together = threading.Barrier(6)
def work():
    kept.append([b"x" * (64 << 10) for _ in range(50)])  # from this thread's arena
    together.wait()  # all six alive at once: none can take an arena another thread left
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads: t.start()
for t in threads: t.join()
print("arenas", int(arenas_mb().get("arenas", 1)))
"""


def arenas_in_child(env: dict[str, str], cap: bool = True) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT), cap=cap)], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    return lines["set"], int(lines["arenas"])


@pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"),
                    reason="glibc's arenas")
def test_six_threads_share_two_arenas_unless_the_user_chose_a_limit():
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX" and k != "GLIBC_TUNABLES"}
    assert arenas_in_child(env, cap=False)[1] >= 4  # glibc's default: an arena for each thread, or nearly
    assert arenas_in_child(env) == ("True", 2)
    chosen, arenas = arenas_in_child({**env, "MALLOC_ARENA_MAX": "4"})
    assert chosen == "False" and arenas == 4  # the user's limit, not ours
