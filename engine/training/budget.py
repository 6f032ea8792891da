"""Time budgets for a run (``--max-minutes``): wall time, or the CPU time the process itself spends.

A CPU budget makes recipes comparable on a shared machine: two runs side by side on two cores each get
about one core, and a run slowed by a neighbour still gets its full share of computation.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable


def wall_budget(seconds: float, fn: Callable[[], None]) -> threading.Timer:
    """Call ``fn`` once ``seconds`` of wall time have passed (``start()`` it; ``cancel()`` stops it)."""
    timer = threading.Timer(seconds, fn)
    timer.daemon = True
    return timer


class CpuBudget(threading.Thread):
    """Calls ``fn`` once this process has used ``seconds`` of CPU time (all its threads together).

    It has the interface of ``threading.Timer``: ``start()``, ``cancel()`` and ``finished`` (set when it fired
    or was cancelled).
    """

    def __init__(self, seconds: float, fn: Callable[[], None], poll: float = 2.0) -> None:
        super().__init__(daemon=True, name="cpu-budget")
        self.seconds, self.fn, self.poll = seconds, fn, poll
        self.finished = threading.Event()
        self._start_cpu = time.process_time()

    def used(self) -> float:
        return time.process_time() - self._start_cpu

    def run(self) -> None:
        while not self.finished.wait(min(self.poll, max(0.01, self.seconds - self.used()))):
            if self.used() >= self.seconds:
                self.finished.set()
                self.fn()

    def cancel(self) -> None:
        self.finished.set()
