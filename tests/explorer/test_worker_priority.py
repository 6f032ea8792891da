"""Workers run below the window: on a machine with few cores the GUI thread gets a core first when it has a
repaint or a relayout to do, and a model query or an index build takes what is left (explorer.tasks)."""

import os
import sys
import threading

import pytest

from explorer.tasks import WORKER_NICE, TaskRunner

LINUX = sys.platform.startswith("linux")


def _priority_here() -> object:
    if LINUX:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    from PySide6.QtCore import QThread

    return QThread.currentThread().priority()


def test_a_query_runs_below_the_window_and_so_do_the_threads_it_starts(qtbot):
    window_before = _priority_here()
    runner = TaskRunner()
    results = []
    runner.finished.connect(results.append)

    def query():
        started = []  # a thread the query starts (torch's team does so): it inherits the worker's priority
        t = threading.Thread(target=lambda: started.append(_priority_here()))
        t.start()
        t.join()
        return _priority_here(), started[0]

    with qtbot.waitSignal(runner.finished, timeout=10_000):
        runner.submit(query)
    worker, child = results[0]
    if LINUX:
        process = os.getpriority(os.PRIO_PROCESS, os.getpid())
        assert worker == child == process + WORKER_NICE
    else:
        from PySide6.QtCore import QThread

        assert worker == QThread.Priority.LowPriority
    assert _priority_here() == window_before  # the window's own thread is left as it was


@pytest.mark.skipif(not LINUX, reason="thread nice values are Linux's")
def test_a_worker_already_lower_than_asked_is_left_there(qtbot):
    runner = TaskRunner()
    results = []
    runner.finished.connect(results.append)
    process = os.getpriority(os.PRIO_PROCESS, os.getpid())

    def lowered_first():
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, process + WORKER_NICE + 3)  # a user's own choice, say
        from explorer.tasks import below_the_window

        below_the_window()
        return os.getpriority(os.PRIO_PROCESS, tid)

    with qtbot.waitSignal(runner.finished, timeout=10_000):
        runner.submit(lowered_first)
    assert results == [process + WORKER_NICE + 3]


def test_the_main_thread_is_never_lowered():
    """A job run in place on the main thread (the window's) leaves its priority alone: lowered, the window itself
    would wait behind the workers (and a test suite that did so once ran every later test at nice 19)."""
    from explorer.tasks import below_the_window

    before = _priority_here()
    below_the_window()
    assert _priority_here() == before


@pytest.mark.skipif(not LINUX, reason="reads the process's nice value from /proc")
def test_a_training_started_from_the_window_runs_below_it_from_the_moment_python_starts(qtbot):
    import time

    from explorer.training_process import ProcessTrainJob

    python = os.path.realpath(sys.executable)
    window = os.getpriority(os.PRIO_PROCESS, os.getpid())
    job = ProcessTrainJob(["--help"])
    assert job.process.waitForStarted(30_000)
    pid = job.process.processId()
    seen = None
    deadline = time.monotonic() + 30
    while seen is None and time.monotonic() < deadline:  # no sleep: the first look at it once it is Python
        try:
            if os.readlink(f"/proc/{pid}/exe") == python:  # (raises once the process has gone)
                seen = os.getpriority(os.PRIO_PROCESS, pid)
        except OSError:  # it has ended (or not yet begun)
            break
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    # the CLI's own --background lowers it only after its imports: 0.3-0.4 s of a core beside the window first
    assert seen is not None and seen >= window + 10
