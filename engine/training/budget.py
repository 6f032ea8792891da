"""Time budgets for a run (``--max-minutes``): wall time, or the CPU time the process itself spends.

A CPU budget makes recipes comparable on a shared machine: two runs side by side on two cores each get
about one core, and a run slowed by a neighbour still gets its full share of computation. A budget also
tells the gradient loop how much of it is spent (``fraction``), so that the learning rate can decay to 0
when the budget ends rather than at a step count guessed in advance (``--budget-schedule``, as Cramming).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Budget(threading.Thread):
    """Calls ``fn`` once ``seconds`` have passed on ``clock`` (``time.monotonic``: wall time;
    ``time.process_time``: this process's CPU time, all its threads together).

    It has the interface of ``threading.Timer`` (``start()``, ``cancel()``, ``finished``: set when it
    fired or was cancelled) and says how much of it is used (``fraction()``).
    """

    def __init__(self, seconds: float, fn: Callable[[], None], clock: Callable[[], float] = time.monotonic,
                 poll: float = 2.0, spent_before: float = 0.0) -> None:
        super().__init__(daemon=True, name="run-budget")
        self.seconds, self.fn, self.clock, self.poll = seconds, fn, clock, poll
        self.spent_before = spent_before  # what earlier sessions of a resumed run used of the same budget
        self.finished = threading.Event()
        self._start = clock()

    def used(self) -> float:
        return self.spent_before + self.clock() - self._start

    def fraction(self) -> float:
        return min(1.0, self.used() / self.seconds) if self.seconds > 0 else 1.0

    def run(self) -> None:
        while not self.finished.wait(min(self.poll, max(0.01, self.seconds - self.used()))):
            if self.used() >= self.seconds:
                self.finished.set()
                self.fn()

    def cancel(self) -> None:
        self.finished.set()


def wall_budget(seconds: float, fn: Callable[[], None], spent_before: float = 0.0) -> Budget:
    return Budget(seconds, fn, time.monotonic, spent_before=spent_before)


def cpu_budget(seconds: float, fn: Callable[[], None], spent_before: float = 0.0) -> Budget:
    return Budget(seconds, fn, time.process_time, spent_before=spent_before)
