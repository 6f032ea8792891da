"""A bench process that ends before its run says where: an exit asked for by ``sys.exit`` or ``os._exit`` prints the
stack that asked, and the interpreter's end before the run's prints every thread's stack; the run's own end says
nothing."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(body: str) -> subprocess.CompletedProcess:
    code = ("import os, sys\n"
            f"sys.path.insert(0, {str(ROOT)!r})\n"
            "from bench.robustness.exit_watch import watch_exits\n"
            "finished = []\n"
            "watch_exits(lambda: bool(finished), 'the bench')\n"
            "def warm_up():\n"
            f"    {body}\n"
            "warm_up()\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("body", ["sys.exit(1)", "os._exit(1)"])
def test_an_early_exit_says_where(body):
    done = _run(body)
    assert done.returncode == 1
    assert f"the bench: {body}, called from:" in done.stderr
    assert "in warm_up" in done.stderr  # the caller's frame


def test_an_early_end_prints_every_threads_stack():
    done = _run("raise SystemExit(1)")
    assert done.returncode == 1
    assert "ending before the run has" in done.stderr and "Current thread" in done.stderr


@pytest.mark.parametrize("body", ["finished.append(True); sys.exit(0)", "finished.append(True); os._exit(0)",
                                  "finished.append(True)"])
def test_the_runs_own_end_says_nothing(body):
    done = _run(body)
    assert done.returncode == 0
    assert done.stderr == ""
