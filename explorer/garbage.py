"""The window's garbage collection: long-lived objects frozen out of the collector's scans at quiet moments (no
work under way, a pause in the user's input), thawed at such a moment when an unloaded model may sit in a frozen
cycle, and cyclic garbage collected on the GUI thread only, by Python's thresholds (explorer.tasks runs the work whose
objects these are)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, QTimer

from explorer.tasks import query_pool
from explorer.user_input import user_is_idle

FREEZE_AFTER_MS = 3000  # the last model load or unload this long ago, and no work under way: freeze


def freeze_long_lived_objects() -> None:
    """Move every object alive now (modules, widgets, loaded models) out of the garbage collector's
    sight. A full collection otherwise scans them all, holding the GIL for ~100 ms in whichever thread
    triggers it: a worker's collection froze the window (measured by bench/speed/explorer_speed.py).
    Frozen objects are never collected: a reference cycle frozen while a query was under way (its frames,
    its result) stayed for good, with the model it held — one freeze at every model load grew the window
    by 5 GB in 30 minutes of chaos (bench/robustness/CHAOS-HISTORY.md). So the freeze waits for a quiet moment
    (``FREEZE_AFTER_MS`` after the last request, no query or job running) and collects first."""
    _freezer().request()


def thaw() -> None:
    """Give frozen objects back to the collector (a model was unloaded: it may sit in a frozen cycle), collect them
    and freeze them again, all at the next quiet moment: the collection then scans every object of the window
    (0.5-1 s of the GUI thread beside busy workers). Thawed at once, the window waited unfrozen for the freezer's
    quiet moment, which a user acting without pause never gives, and each full collection by the arrivals in
    between scanned them all: the chaos bench's longest stalls (967 and 706 ms; bench/robustness/CHAOS-HISTORY.md, the
    forty-eighth session). The quiet moment waits for a pause in the user's input too (explorer/user_input.py)."""
    _freezer().request(thaw=True)


def _thaw_now() -> None:
    import gc

    objects = gc.get_freeze_count()  # (a walk of every frozen object: here only, at a thaw, which is rare)
    unfreeze()
    if _COLLECTOR:
        _COLLECTOR[0].thawed(objects)


# whether the app froze anything since the last thaw. ``gc.get_freeze_count`` walks the frozen objects' list to
# count them: every object of the window, scattered over its memory, 10 ms on a quiet machine and more beside busy
# workers, and ``thaw_for`` asked it at every unload and at every look after one (in a perf profile of the chaos
# bench, a quarter of the stalls' samples; perf's sampling slowed it: bench/robustness/CHAOS-HISTORY.md, the
# thirty-second session's runs)
_FROZEN = [False]


def freeze_now() -> None:
    """Collect, then freeze every object alive (the freezer's quiet moment; the bench's census)."""
    import gc

    gc.collect()
    gc.freeze()
    _FROZEN[0] = True
    if _COLLECTOR:
        _COLLECTOR[0].frozen()


def unfreeze() -> bool:
    """Unfreeze every frozen object; whether the app had frozen any since the last thaw."""
    import gc

    was, _FROZEN[0] = _FROZEN[0], False
    gc.unfreeze()
    return was


def anything_frozen() -> bool:
    return _FROZEN[0]


def work_under_way() -> bool:
    """Whether a worker thread may be running Python now: a query or a background job.

    The collector's lists of objects (``gc.get_objects``, ``gc.get_referrers``) wait for a moment without: a
    list holds a reference to every object it names, and the GUI thread can lose the GIL while it holds one.
    A tuple that a worker was still filling (``tuple(generator)``: Python tracks it from its start) could then
    not be resized, and the worker's query failed with "SystemError: Objects/tupleobject.c:927: bad argument to
    internal function" (the chaos bench's run Z34: bench/robustness/CHAOS-HISTORY.md; CPython's gh-107137)."""
    return bool(query_pool().activeThreadCount() or QThreadPool.globalInstance().activeThreadCount())


def _listed(generation: int) -> int | None:
    """The objects in ``generation`` (``gc.get_objects``), or None while work is under way (``work_under_way``)."""
    import gc

    return None if work_under_way() else len(gc.get_objects(generation))


UNLOAD_CHECKS = 5  # looks at an unloaded model still alive, each twice as long after the last (46 s in all)


def thaw_for(gone: Callable[[], Any], wait_ms: int, checks: int = UNLOAD_CHECKS) -> None:
    """``thaw`` if the unloaded model ``gone()`` (a weak reference) is still alive at the last of ``checks`` looks,
    each twice as long after the one before, and something is frozen: it may sit in a frozen cycle, which only a
    collection after a thaw frees. A thaw gives every object of the window back to the collector, and the next
    full collection scans them all (0.5-1 s of the GUI thread beside busy work), so it waits for the last look.
    Models hold no cycle of their own, and what holds one after an unload is most often alive and lets go soon:
    a query's or a job's closure still queued or running, an answer on screen, frozen with the window at its last
    quiet moment. The model then goes by its reference count, with no thaw. Thawed at the first look that found
    no holder among the unfrozen objects (as before), none of 6 thaws checked in the chaos monkey's runs (with a
    freeze every minute) was for a model in a garbage cycle: all were held by live objects, frozen, and 4 of 5 were
    still alive after the collection (bench/robustness/thaw_holders.py; bench/robustness/CHAOS-HISTORY.md). So no search
    for referrers either: it told a frozen holder from a frozen cycle no better."""
    handle = gone()
    if handle is None or not anything_frozen():  # freed, or nothing frozen for it to sit in
        return
    del handle
    if checks > 1:
        QTimer.singleShot(wait_ms * 2, lambda: thaw_for(gone, wait_ms * 2, checks - 1))
        return
    thaw()


class _Freezer(QObject):
    """Freezes (and first thaws, when one is asked for) at a quiet moment: ``FREEZE_AFTER_MS`` after the last
    request, no work under way (it holds objects that are not long-lived) and the user not acting (the collection
    before the freeze scans every unfrozen object: after a thaw, all of the window's)."""

    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer(self, singleShot=True, interval=FREEZE_AFTER_MS)
        self.timer.timeout.connect(self._freeze)
        self.thaw_asked = False

    def request(self, thaw: bool = False) -> None:
        self.thaw_asked = self.thaw_asked or thaw
        self.timer.start()  # (again: from now)

    def _freeze(self) -> None:
        if work_under_way() or not user_is_idle():
            self.timer.start()  # later
            return
        if self.thaw_asked:
            self.thaw_asked = False
            _thaw_now()
        freeze_now()


_FREEZER: list[_Freezer] = []


def _freezer() -> _Freezer:
    if not _FREEZER:
        _FREEZER.append(_Freezer())
    return _FREEZER[0]


COLLECT_EVERY_MS = 250  # the GUI thread's look at the collector's counts (pyqtgraph's GarbageCollector does the same)
YOUNG_AT_MOST_S = 2.0  # garbage of the youngest generation waits no longer than this, however its count went
FULL_WAITS_AT_MOST_S = 60.0  # a full collection due by the arrivals waits this long at most for work to end


class _GuiCollector(QObject):
    """Cyclic garbage collected on the GUI thread only. Python collects in whichever thread allocates past the
    threshold; a worker's collection that met a widget's Python-owned Qt objects in a cycle destroyed them on
    that thread, holding Qt's connection lock while it waited for the GIL that the GUI thread held, itself
    waiting for that lock: the window hung for good (tests/explorer/test_chaos.py, after a closed talk window's
    panels became garbage). So automatic collection is off, and this timer collects as Python would have, by
    generation and the same thresholds. Python collects the moment an allocation takes the youngest count past
    its threshold; a look every 250 ms can miss that moment, when objects freed in between (a closed window's
    widgets) brought the count back down, and the garbage made before would wait for the next burst of
    allocations. So the youngest generation is also collected when it holds anything and
    ``YOUNG_AT_MOST_S`` passed since the last collection (cheap: only the young objects are scanned).

    A full collection scans every object the collector tracks and was not frozen: 230 ms for the window's
    440,000 with the default models, idle, 300-350 ms beside busy workers (8 in 5 minutes of the chaos bench,
    its census's own among them: bench/robustness/gc_timer.py). Python runs one only when the objects that
    reached the oldest generation since the last full one are a quarter of those that survived it
    (``gc_collect_main``'s "long-lived pending" rule). This one waits until the oldest generation has grown by a
    quarter, net: objects that reached it and were freed since do not count (the window makes and drops many: a
    closed talk window's widgets, answers replaced). Python's own count of arrivals ran a full collection of 500 ms
    every minute or so in the chaos bench (the thirty-first session's runs B and B2: 7-8 in 10 minutes against 1).
    Knowing the net growth means listing the generation: after a thaw it holds every object of the window, 50-100 ms
    beside busy workers, and listing it at every look took 15% of the stalls' time in the chaos bench (perf, the
    same session). So the arrivals are counted as Python counts them (the survivors of each collection of the
    middle generation, whoever ran it: a callback), and the generation is listed only once they reach a quarter:
    at most once per quarter of the long-lived objects, and only while no work is under way (``work_under_way``:
    the young generations are counted, never listed). A freeze empties the oldest generation and a thaw gives
    the frozen objects back to it: both move the count of long-lived objects with them."""

    def __init__(self) -> None:
        import gc
        import time

        super().__init__()
        self.threshold = gc.get_threshold()
        gc.disable()
        self.last = time.monotonic()
        listed = _listed(2)  # the oldest generation after the last full collection (counted later if work is under way)
        self.long_lived = listed if listed is not None else 0
        self.pending = 0  # objects that reached the oldest generation since (Python's "long-lived pending")
        self._middle = 0  # objects that reached the middle generation since its last collection (arrivals)
        self._young = 0  # the two younger generations' objects when a collection of the middle one started
        self._started = 0  # the youngest generation's objects when the collection under way started
        self._all = 0  # every unfrozen object when the full collection under way started (counted, not listed)
        self._due_since: float | None = None  # a full collection due by the arrivals, waiting to list the oldest
        gc.callbacks.append(self._count)
        self.timer = QTimer(self, interval=COLLECT_EVERY_MS)
        self.timer.timeout.connect(self.collect)
        self.timer.start()

    def close(self) -> None:
        """Stop looking and counting (a test's collector; the window's lives as long as the process)."""
        import gc

        self.timer.stop()
        if self._count in gc.callbacks:
            gc.callbacks.remove(self._count)

    def _count(self, phase: str, info: dict[str, int]) -> None:
        """Python's callback around every collection: what a collection left went one generation up; after a full
        one, the oldest generation is what survived it. Counted, not listed (``work_under_way``): the youngest
        generation's objects are Python's own count of it (allocations less deallocations since its last
        collection), the middle one's are the survivors of the youngest's collections since its own."""
        import gc

        generation = info["generation"]
        if phase == "start":
            self._started = max(0, gc.get_count()[0])  # (Python resets the counts after the start's callbacks)
            if generation == 1:
                self._young = self._started + self._middle
            elif generation == 2:
                self._all = self.long_lived + self.pending + self._middle + self._started
            return
        dead = info["collected"] + info["uncollectable"]  # (found unreachable: what is left went up)
        if generation == 0:
            self._middle += max(0, self._started - dead)
        elif generation == 1:
            self.pending += max(0, self._young - dead)
            self._middle = 0
        else:
            listed = _listed(2)  # (once per full collection, which scanned them all anyway)
            self.long_lived = listed if listed is not None else max(0, self._all - dead)
            self.pending = self._middle = 0
            self._due_since = None

    def collect(self) -> None:
        import gc
        import time

        count = gc.get_count()
        now = time.monotonic()
        if count[0] <= self.threshold[0] and (count[0] <= 0 or now - self.last < YOUNG_AT_MOST_S):
            return
        self.last = now
        generation = 0
        if count[1] > self.threshold[1]:
            generation = 2 if count[2] > self.threshold[2] and self.full_is_due() else 1
        gc.collect(generation)  # (counted by ``_count``)

    def frozen(self) -> None:
        """``gc.freeze`` emptied the oldest generation (after a full collection): count from nothing."""
        self.long_lived = self.pending = 0

    def thawed(self, objects: int) -> None:
        """``gc.unfreeze`` gave ``objects`` back to the oldest generation: long-lived, not growth."""
        self.long_lived += objects

    def full_is_due(self) -> bool:
        """The oldest generation grew by more than a quarter since the last full collection, net. The arrivals
        bound the growth: only once they are a quarter is the generation listed (and the arrivals counted again
        from its net growth, when that is less). While work is under way it is not listed (``work_under_way``):
        the full collection waits for a moment without, and after ``FULL_WAITS_AT_MOST_S`` runs by the arrivals."""
        import time

        if self.pending <= self.long_lived / 4:
            return False
        listed = _listed(2)
        if listed is None:
            now = time.monotonic()
            if self._due_since is None:
                self._due_since = now
            return now - self._due_since > FULL_WAITS_AT_MOST_S
        self._due_since = None
        grown = listed - self.long_lived
        self.pending = max(0, grown)
        return grown > self.long_lived / 4


_COLLECTOR: list[_GuiCollector] = []


def collect_on_the_gui_thread() -> None:
    """Turn Python's automatic garbage collection into the GUI thread's (once; call it on that thread)."""
    if not _COLLECTOR:
        _COLLECTOR.append(_GuiCollector())
