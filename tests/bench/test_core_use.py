"""bench/robustness/core_use.py: a stall's ledger says the window's thread slept while others had the cores, and
names them — a thread of the process by the code it ran, a child process by its command."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from bench.robustness.core_use import CoreLedger, stall_lines, totals_line

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads Linux's /proc")


def _spin_until(stop: threading.Event) -> None:
    while not stop.is_set():
        sum(range(2000))


def test_a_stall_spent_asleep_while_a_thread_and_a_child_ran_is_told_so():
    ledger = CoreLedger(threading.get_native_id())  # this thread stands in for the window's
    stop, done = threading.Event(), threading.Event()

    def sampler() -> None:
        while not done.wait(0.05):
            ledger.sample(in_stall=True)

    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    spinner = threading.Thread(target=_spin_until, args=(stop,))
    watcher = threading.Thread(target=sampler)
    try:
        spinner.start()
        watcher.start()
        time.sleep(0.2)
        begin = time.monotonic()
        time.sleep(0.5)  # the "stall": the window's thread asleep, as if waiting for the GIL
        end = time.monotonic()
        ledger.stall(begin, end, (end - begin) * 1000, "zoom")
        deadline = time.monotonic() + 5
        while not ledger.stalls and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        done.set()
        child.kill()
        child.wait()
        spinner.join()
        watcher.join()
    assert len(ledger.stalls) == 1
    stall = ledger.stalls[0]
    assert stall.kind == "zoom" and stall.span_ms >= 500
    assert stall.gui_on_ms < 50 and stall.gui_asleep_ms > 400
    spun = sum(ms for name, ms in stall.others.items() if "_spin_until" in name)
    assert spun > 100, stall.others
    child_ms = sum(ms for name, ms in stall.others.items() if name.startswith("child") and "python" in name)
    assert child_ms > 100, stall.others
    line = stall_lines(ledger.stalls)[0]
    assert line.startswith(f"{stall.gap_ms:,.0f} ms after zoom") and "_spin_until" in line
    assert totals_line(ledger.stalls).startswith("1 stalls settled")


def test_a_stall_whose_end_was_never_sampled_waits_and_then_is_dropped():
    ledger = CoreLedger(threading.get_native_id())
    ledger.sample(in_stall=False)
    now = time.monotonic()
    ledger.stall(now + 0.5, now + 1.0, 500, "talk")  # ends after every snapshot so far: not settled yet
    ledger.sample(in_stall=False)
    assert ledger.stalls == [] and len(ledger.pending) == 1
    ledger.pending[0] = (now - 20, now - 10, 500, "talk")  # long past and never bracketed: given up
    ledger.sample(in_stall=False)
    assert ledger.stalls == [] and ledger.pending == []
