"""The window's process allocates Python's objects with malloc (explorer/python_allocator.py): on Linux its entry
point starts the process again with PYTHONMALLOC=malloc, leaves a user's own setting alone, and the processes it
starts (trainings) get Python's default allocator back."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# what a process reports after the window's restart: its allocator, the variable and the mark as its children see
# them, and what a child process it starts allocates with
PROBE = """
import os, subprocess, sys
from explorer.python_allocator import MARK, VARIABLE, python_allocator, restart_with_malloc
restart_with_malloc()
child = subprocess.run([sys.executable, "-c", "from explorer.python_allocator import python_allocator; "
                        "print(python_allocator())"], capture_output=True, text=True, check=True).stdout.strip()
print(python_allocator(), os.environ.get(VARIABLE, "-"), os.environ.get(MARK, "-"), child, sys.argv[1:])
"""


def probe(**env: str) -> list[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONMALLOC", "WORD2BERT_SET_PYTHONMALLOC")}
    done = subprocess.run([sys.executable, "-c", PROBE, "--scene", "bank"], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split(None, 4)


def test_the_window_s_process_runs_on_malloc_and_its_children_on_python_s_default():
    allocator, variable, mark, child, args = probe()
    if sys.platform == "linux":
        assert allocator == "malloc"
    else:  # elsewhere the process is not started again
        assert allocator == "pymalloc"
    assert (variable, mark) == ("-", "-")  # taken out again: a training started from the window gets the default
    assert child == "pymalloc"
    assert args.strip() == "['--scene', 'bank']"  # started again with the same arguments


def test_a_user_s_own_setting_is_left_alone():
    allocator, variable, mark, child, _ = probe(PYTHONMALLOC="pymalloc")
    assert (allocator, variable, mark, child) == ("pymalloc", "pymalloc", "-", "pymalloc")
    allocator, variable, _, child, _ = probe(PYTHONMALLOC="malloc")
    assert (allocator, variable, child) == ("malloc", "malloc", "malloc")


def test_the_app_s_entry_point_starts_again_but_not_its_training_processes(monkeypatch):
    import explorer.app
    import explorer.python_allocator
    from explorer.__main__ import main

    calls: list[str] = []
    monkeypatch.setattr(explorer.python_allocator, "restart_with_malloc", lambda: calls.append("restart"))
    monkeypatch.setattr("explorer.worker_threads.sleeping_worker_threads", lambda: None)  # (this process's env)
    monkeypatch.setattr(explorer.app, "run", lambda argv: calls.append(f"run {argv[1:]}") or 0)
    monkeypatch.setattr(sys, "argv", ["word2bert", "--scene", "bank"])
    assert main() == 0
    assert calls == ["restart", "run ['--scene', 'bank']"]
    calls.clear()
    monkeypatch.setattr("engine.api.train_cli", lambda argv: calls.append(f"train {argv}") or 0)
    monkeypatch.setattr(sys, "argv", ["word2bert", "--train-cli", "bert"])
    assert main() == 0
    assert calls == ["train ['bert']"]  # a training process keeps Python's default allocator
