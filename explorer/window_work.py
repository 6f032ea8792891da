"""The window's work that cannot be split into turns of the event loop (a zoom, a change of theme, a talk window
opened or one of its steps built, a tab switched, a query's or long job's answer drawn, a training started): while it
lasts, the worker threads' model work waits at its next yield point
(``engine.api.hold_workers``), so that each of the window's many calls into Python gets the GIL at once instead of
waiting for a worker to hand it back (in the chaos bench's stalls the window's thread slept as long as it worked:
bench/robustness/CHAOS-HISTORY.md, Z55). The workers go on once the event loop has had ``TURNS`` turns after the call
(the relayout's, the repaint's) and after ``HOLD_S`` at most, whatever happens."""

from __future__ import annotations

from PySide6.QtCore import QTimer

HOLD_S = 0.3  # the longest the workers wait for one piece of the window's work
TURNS = 3  # turns of the event loop after the call: the paints let go (explorer.theme), then the repaint itself

_PENDING = [0]  # turns still to go before the workers are let go (0: none held by the window)


def window_working() -> None:
    """Called as the window begins such work: the workers wait until it is done."""
    from engine.api import hold_workers

    hold_workers(HOLD_S)
    starting = _PENDING[0] == 0
    _PENDING[0] = TURNS  # (a second piece of work while the first's turns run: counted again from now)
    if starting:
        QTimer.singleShot(0, _a_turn)


def _a_turn() -> None:
    _PENDING[0] -= 1
    if _PENDING[0] > 0:
        QTimer.singleShot(0, _a_turn)
        return
    from engine.api import release_workers

    release_workers()
