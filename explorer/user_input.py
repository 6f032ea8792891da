"""When the user last gave a window input (a key, a click, the wheel, a drag): the window's own background work waits
for a pause in it, as browsers do theirs in the idle time between a user's actions: a full garbage collection of
every object after a thaw (explorer/garbage.py) for a long one, a talk's preparation of its later steps
(explorer/talk/window.py) for a short one.

Input reaches a widget through its window's ``QWindow`` (the platform delivers it there, and Qt passes it on to the
widget under the mouse or with the focus), so one filter on each window that takes the focus sees all of it, and
none of the window's other traffic (timers, paints of each widget, queued answers) passes through Python for it."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt

USER_IDLE_S = 2.0  # no input for this long: the user is reading, not acting (a full collection may run now)
INPUT_PAUSE_S = 0.5  # no input for this long: a pause between actions (a keystroke follows the last within 0.2 s)

_INPUT = frozenset({
    QEvent.Type.KeyPress, QEvent.Type.KeyRelease, QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease,
    QEvent.Type.MouseButtonDblClick, QEvent.Type.Wheel, QEvent.Type.TouchBegin, QEvent.Type.TouchUpdate,
    QEvent.Type.TouchEnd, QEvent.Type.TabletPress, QEvent.Type.TabletRelease,
})

_LAST = [float("-inf")]  # time.monotonic() of the last input


def note_input() -> None:
    """The user acted now (the windows' filter calls it; so does a bench that acts as a user without input events,
    calling the widgets' slots as a click would)."""
    _LAST[0] = time.monotonic()


def idle_for() -> float:
    """Seconds since the user's last input (infinite before any)."""
    return time.monotonic() - _LAST[0]


def user_is_idle() -> bool:
    return idle_for() >= USER_IDLE_S


def until_a_pause() -> float:
    """Seconds until the user's input has paused for INPUT_PAUSE_S, if no more comes (0: it has)."""
    return max(0.0, INPUT_PAUSE_S - idle_for())


class _InputWatch(QObject):
    def eventFilter(self, watched: Any, event: Any) -> bool:  # noqa: N802 (Qt's name)
        kind = event.type()
        if kind in _INPUT or (kind == QEvent.Type.MouseMove and event.buttons() != Qt.MouseButton.NoButton):
            note_input()  # (a mouse only passing over the window is not an action: a drag is)
        return False


_WATCH: list[_InputWatch] = []


def watch_input(app: Any) -> None:
    """Note the user's input in every window of ``app`` that takes the focus (the main window, a talk, a dialog:
    each is watched from its first focus on; installed twice, a filter is still called once)."""
    if _WATCH:
        return
    watch = _InputWatch()
    _WATCH.append(watch)

    def focused(window: Any) -> None:
        if window is not None:
            window.installEventFilter(watch)

    app.focusWindowChanged.connect(focused)
    for window in app.topLevelWindows():
        window.installEventFilter(watch)
