"""Which Qt events the GUI thread spends its stalls in (``chaos.py --events``): a QApplication whose ``notify``
times every event it delivers, nested ones too (a window's repaint sends a paint event to each widget under it).

The chaos bench's stall sampler sees only Python frames; most of the stalls' time had none of ours above Qt's
own C++ work ("?" in its culprits). Timing each event names that work by the widget's class and the event
(``Paint`` on a ``QTabWidget``, ``LayoutRequest`` on a panel). Diagnostic only: a Python call per event slows
the app, and looking at each receiver makes a Python wrapper for Qt's own objects, so memory figures of a run
with it are not comparable."""

from __future__ import annotations

import time
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QApplication, QWidget

SLOW_MS = 20.0  # events that took at least this long are kept
STALL_MS = 250.0  # the chaos bench's stall: such events are also counted apart


def _schedstat() -> tuple[float, float]:
    """This thread's time on a core and waiting for one so far, in ms (Linux; zeros elsewhere)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            on_core, queued, _ = f.read().split()
        return int(on_core) / 1e6, int(queued) / 1e6
    except (OSError, ValueError):
        return 0.0, 0.0


def as_a(obj: Any, cls: type) -> Any:
    """``obj`` as a wrapper of ``cls``. PySide finds the Python wrapper of an object Qt hands it by the object's
    address, and a wrapper can outlive its object: Qt deletes a layout's items without PySide knowing, and the next
    object made at that address comes back in the old wrapper (a ``QWidgetItem`` given as ``notify``'s receiver, a
    ``QResizeEvent`` for a paint event: PySide6 6.11). Such a wrapper is let go and the object wrapped again as
    ``cls``, whose methods then reach it."""
    if isinstance(obj, cls):
        return obj
    address = shiboken6.getCppPointer(obj)[0]
    shiboken6.invalidate(obj)  # (the object it stood for is gone; wrapInstance would hand it back otherwise)
    return shiboken6.wrapInstance(address, cls)


def class_name(receiver: Any) -> str:
    """The receiver's class: its Python class, or Qt's own name for it when it was wrapped again as a plain
    ``QObject`` (``as_a``)."""
    if type(receiver) is QObject:
        return str(receiver.metaObject().className())
    return type(receiver).__name__


class TimedApplication(QApplication):
    """Keeps, for each (nesting depth, receiver class, event type), how many events took ``SLOW_MS`` or more,
    their total and their longest, in milliseconds, and how many took ``STALL_MS`` or more."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv)
        self.depth = 0
        self.slow: dict[tuple[int, str, str], list[float]] = {}
        self.paints: dict[str, list[float]] = {}  # receiver class -> [paint events, pixels painted, ms]
        self.inside: dict[str, list[float]] = {}  # during the current outermost event: class: event -> [n, ms]
        self.worst: list[tuple[float, str, list[str]]] = []  # the slowest outermost events, with what they sent

    def notify(self, receiver: Any, event: Any) -> bool:  # type: ignore[override]
        receiver, event = as_a(receiver, QObject), as_a(event, QEvent)
        kind, depth = event.type(), self.depth
        receiver_name = class_name(receiver)
        name = ""
        if kind == QEvent.Type.MetaCall:  # a queued call: to a helper object (a panel's TaskRunner), named by its owner
            parent = receiver.parent()
            if parent is not None and not isinstance(receiver, QWidget):
                name = f"{receiver_name} of {class_name(parent)}"
        self.depth += 1
        if not depth:
            sched = _schedstat()
        began = time.perf_counter()
        try:
            return super().notify(receiver, event)
        finally:
            self.depth -= 1
            ms = (time.perf_counter() - began) * 1000
            if depth:
                inner = self.inside.setdefault(f"{receiver_name}: {getattr(kind, 'name', kind)}", [0, 0.0])
                inner[0] += 1
                inner[1] += ms
            else:
                if ms >= STALL_MS:
                    parts = sorted(self.inside.items(), key=lambda kv: -kv[1][1])[:6]
                    on_core, queued = (b - a for a, b in zip(sched, _schedstat()))
                    self.worst.append((ms, f"{name or receiver_name}: {getattr(kind, 'name', kind)} "
                                           f"[on a core {on_core:.0f} ms, waiting for one {queued:.0f} ms, "
                                           f"asleep {ms - on_core - queued:.0f} ms]",
                                       [f"{k} ×{n} {t:.0f} ms" for k, (n, t) in parts]))
                    self.worst = sorted(self.worst, key=lambda w: -w[0])[:40]
                self.inside = {}
            if kind == QEvent.Type.Paint:
                rect = as_a(event, QPaintEvent).rect()
                entry = self.paints.setdefault(receiver_name, [0, 0.0, 0.0])
                entry[0] += 1
                entry[1] += rect.width() * rect.height()
                entry[2] += ms
            if ms >= SLOW_MS:
                key = (depth, name or receiver_name, getattr(kind, "name", str(kind)))
                entry = self.slow.setdefault(key, [0, 0.0, 0.0, 0])
                entry[0] += 1
                entry[1] += ms
                entry[2] = max(entry[2], ms)
                entry[3] += ms >= STALL_MS

    def report(self, top: int = 30) -> list[str]:
        """The slow events by total time, deepest last within a tie: one line each."""
        rows = sorted(self.slow.items(), key=lambda kv: -kv[1][1])[:top]
        return [f"{total / 1000:7.1f} s in {n:5d} events (longest {longest:6.0f} ms, {stalls} of {STALL_MS:.0f} ms "
                f"or more)  depth {depth}  {cls}: {kind}" for (depth, cls, kind), (n, total, longest, stalls) in rows]

    def stall_report(self, top: int = 20) -> list[str]:
        """The events of ``STALL_MS`` or more, by how many: the outermost (depth 0, the stalls themselves) and
        the ones they sent (depth 1)."""
        rows = sorted(((k, v) for k, v in self.slow.items() if v[3] and k[0] <= 1), key=lambda kv: (-kv[1][3], kv[0]))
        return [f"{stalls:5d} of {STALL_MS:.0f} ms or more (longest {longest:6.0f} ms)  depth {depth}  {cls}: {kind}"
                for (depth, cls, kind), (_n, _total, longest, stalls) in rows[:top]]

    def paint_report(self, top: int = 25) -> list[str]:
        """Paint events by receiver class, most pixels first: how often each kind of widget is painted, how much
        of it, and the time (a parent's paint time includes none of its children's: Qt paints them apart)."""
        rows = sorted(self.paints.items(), key=lambda kv: -kv[1][1])[:top]
        return [f"{n:7d} paints, {px / 1e6:8.1f} Mpx, {ms / 1000:6.1f} s  {cls}" for cls, (n, px, ms) in rows]

    def worst_report(self) -> list[str]:
        """The slowest outermost events, each with the nested events that took most of its time (their times
        overlap when they nest)."""
        return [f"{ms:6.0f} ms  {what}  <- {'; '.join(parts)}" for ms, what, parts in self.worst]
