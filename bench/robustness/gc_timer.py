"""How long the garbage collector's passes take, by generation (``chaos.py``): a full collection scans every
object the collector tracks and holds the GIL for it, on the GUI thread (explorer/garbage.py collects there)."""

from __future__ import annotations

import gc
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.robustness.line_log import LineLog

SLOW_MS = 100.0


class CollectionTimer:
    """Counts the collections of each generation, their total time and the ones of ``SLOW_MS`` or more."""

    def __init__(self, log: list[str] | LineLog | None = None) -> None:
        self.began = 0.0
        self.by_generation: dict[int, list[float]] = {}  # generation -> [collections, total ms, longest ms, slow]
        self.off_gui_thread = 0
        self.log = log  # the monkey's log: each slow pass, where it lies among the actions and the stalls
        self.slow_by_caller: dict[str, int] = {}  # who called the slow passes: the app's timer, its freeze, …
        # the app's listings of a generation (gc.get_objects: the collector's looks) and its freezes and thaws,
        # counted by wrapping the gc module's functions (the bench's own census is left out)
        self.listings = [0, 0.0, 0.0]  # [listings, total ms, longest ms]
        self.freezes = self.thaws = 0
        self._originals = {name: getattr(gc, name) for name in ("get_objects", "freeze", "unfreeze")}
        gc.get_objects, gc.freeze, gc.unfreeze = self._listing, self._freeze, self._unfreeze
        gc.callbacks.append(self._callback)

    def _listing(self, *args: Any, **kwargs: Any) -> list[Any]:
        began = time.perf_counter()
        objects = self._originals["get_objects"](*args, **kwargs)
        if _caller().startswith(("garbage.py", "session.py")):
            ms = (time.perf_counter() - began) * 1000
            self.listings[0] += 1
            self.listings[1] += ms
            self.listings[2] = max(self.listings[2], ms)
        return objects

    def _freeze(self) -> None:
        self.freezes += 1
        self._originals["freeze"]()
        if self.log is not None:  # where the window's objects left the collector's scans, among the actions
            self.log.append(f"~~ freeze ({_caller()})")

    def _unfreeze(self) -> None:
        self.thaws += 1
        self._originals["unfreeze"]()
        if self.log is not None:  # from here to the next freeze, a full collection scans every object
            self.log.append(f"~~ thaw ({_caller()})")

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.began = time.perf_counter()
            return
        ms = (time.perf_counter() - self.began) * 1000
        entry = self.by_generation.setdefault(int(info["generation"]), [0, 0.0, 0.0, 0])
        entry[0] += 1
        entry[1] += ms
        entry[2] = max(entry[2], ms)
        entry[3] += ms >= SLOW_MS
        self.off_gui_thread += threading.current_thread() is not threading.main_thread()
        if ms >= SLOW_MS:
            caller = _caller()
            self.slow_by_caller[caller] = self.slow_by_caller.get(caller, 0) + 1
            if self.log is not None:
                self.log.append(f"~~ garbage collection, generation {info['generation']}: {ms:.0f} ms ({caller})")

    def stop(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)
        for name, function in self._originals.items():
            setattr(gc, name, function)

    def report(self) -> str:
        parts = [f"generation {g}: {int(n):,} passes, {total / 1000:.1f} s in all, longest {longest:.0f} ms, "
                 f"{int(slow)} of {SLOW_MS:.0f} ms or more" for g, (n, total, longest, slow) in sorted(self.by_generation.items())]
        callers = ", ".join(f"{k} {v}" for k, v in sorted(self.slow_by_caller.items(), key=lambda kv: -kv[1]))
        n, total, longest = self.listings
        return "; ".join(parts) + f"; off the GUI thread: {self.off_gui_thread}" + \
            (f"; the passes of {SLOW_MS:.0f} ms or more by caller: {callers}" if callers else "") + \
            f"; the app's listings of a generation: {int(n):,}, {total / 1000:.1f} s in all, longest {longest:.0f} ms" \
            f"; freezes {self.freezes:,}, thaws {self.thaws:,}"


def _caller() -> str:
    """The innermost frame of the app's or the bench's code above the collection (who asked for it)."""
    frame: Any = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if "/explorer/" in path or "/engine/" in path or "/bench/" in path:
            return f"{path.rsplit('/', 1)[-1]}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "an allocation (automatic)"
