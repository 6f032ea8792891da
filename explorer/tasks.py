"""One single-flight task slot per panel: a new request supersedes the old, stale results are dropped.

Work runs on a QThreadPool thread; results come back through a Qt signal (queued to the GUI thread).
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from explorer.failures import explain

log = logging.getLogger(__name__)


FREEZE_AFTER_MS = 3000  # the last model load or unload this long ago, and no work under way: freeze


def freeze_long_lived_objects() -> None:
    """Move every object alive now (modules, widgets, loaded models) out of the garbage collector's
    sight. A full collection otherwise scans them all, holding the GIL for ~100 ms in whichever thread
    triggers it: a worker's collection froze the window (measured by bench/speed/explorer_speed.py).
    Frozen objects are never collected: a reference cycle frozen while a query was under way (its frames,
    its result) stayed for good, with the model it held — one freeze at every model load grew the window
    by 5 GB in 30 minutes of chaos (bench/robustness/RESULTS.md). So the freeze waits for a quiet moment
    (``FREEZE_AFTER_MS`` after the last request, no query or job running) and collects first."""
    _freezer().request()


def thaw() -> None:
    """Give frozen objects back to the collector (a model was unloaded: it may sit in a frozen cycle); they
    are frozen again at the next quiet moment."""
    import gc

    objects = gc.get_freeze_count()
    gc.unfreeze()
    if _COLLECTOR:
        _COLLECTOR[0].thawed(objects)
    _freezer().request()


UNLOAD_CHECKS = 5  # looks at an unloaded model still alive, each twice as long after the last (46 s in all)


def thaw_for(gone: Callable[[], Any], wait_ms: int, checks: int = UNLOAD_CHECKS) -> None:
    """``thaw`` if the unloaded model ``gone()`` (a weak reference) may sit in a frozen cycle: it is still alive,
    something is frozen, and no object the collector sees outside the frozen ones refers to it. One that does
    (a query's closure, an answer on screen) holds it, and a thaw would not free it: looked at again after
    twice the wait, and thawed anyway at the last look. In the chaos bench 10 of 26 unloads were still held
    so 1.5 s after, each thawing every object of the window, so nothing stayed frozen and each full collection
    scanned them all (300-700 ms of the GUI thread: the thirty-first session's perf)."""
    import gc
    import inspect

    handle = gone()
    if handle is None or not gc.get_freeze_count():  # freed, or nothing frozen for it to sit in
        return
    here = inspect.currentframe()
    held = any(referrer is not here for referrer in gc.get_referrers(handle))  # (the unfrozen objects: few)
    del handle, here
    if held and checks > 1:
        QTimer.singleShot(wait_ms * 2, lambda: thaw_for(gone, wait_ms * 2, checks - 1))
        return
    thaw()


class _Freezer(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.timer = QTimer(self, singleShot=True, interval=FREEZE_AFTER_MS)
        self.timer.timeout.connect(self._freeze)

    def request(self) -> None:
        self.timer.start()  # (again: from now)

    def _freeze(self) -> None:
        import gc

        if query_pool().activeThreadCount() or QThreadPool.globalInstance().activeThreadCount():
            self.timer.start()  # work under way holds objects that are not long-lived: later
            return
        gc.collect()
        gc.freeze()
        if _COLLECTOR:
            _COLLECTOR[0].frozen()


_FREEZER: list[_Freezer] = []


def _freezer() -> _Freezer:
    if not _FREEZER:
        _FREEZER.append(_Freezer())
    return _FREEZER[0]


COLLECT_EVERY_MS = 250  # the GUI thread's look at the collector's counts (pyqtgraph's GarbageCollector does the same)
YOUNG_AT_MOST_S = 2.0  # garbage of the youngest generation waits no longer than this, however its count went


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
    at most once per quarter of the long-lived objects. A freeze empties the oldest generation and a thaw gives
    the frozen objects back to it: both move the count of long-lived objects with them."""

    def __init__(self) -> None:
        import gc
        import time

        super().__init__()
        self.threshold = gc.get_threshold()
        gc.disable()
        self.last = time.monotonic()
        self.long_lived = len(gc.get_objects(2))  # the oldest generation after the last full collection
        self.pending = 0  # objects that reached the oldest generation since (Python's "long-lived pending")
        self._young = 0  # the two younger generations' objects when a collection of the middle one started
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
        """Python's callback around every collection: what a collection of the middle generation left went to the
        oldest; after a full one, the oldest generation is what survived it."""
        import gc

        generation = info["generation"]
        if generation == 1 and phase == "start":
            self._young = len(gc.get_objects(0)) + len(gc.get_objects(1))  # (the young: small beside the oldest)
        elif generation == 1:
            self.pending += max(0, self._young - info["collected"] - info["uncollectable"])
        elif generation == 2 and phase == "stop":
            self.long_lived = len(gc.get_objects(2))  # (once per full collection, which scanned them all anyway)
            self.pending = 0

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
        from its net growth, when that is less)."""
        import gc

        if self.pending <= self.long_lived / 4:
            return False
        grown = len(gc.get_objects(2)) - self.long_lived
        self.pending = max(0, grown)
        return grown > self.long_lived / 4


_COLLECTOR: list[_GuiCollector] = []


def collect_on_the_gui_thread() -> None:
    """Turn Python's automatic garbage collection into the GUI thread's (once; call it on that thread)."""
    if not _COLLECTOR:
        _COLLECTOR.append(_GuiCollector())


SWITCH_INTERVAL_S = 0.0001  # CPython's default is 0.005 (bench/speed/RESULTS.md, "the interpreter's switch interval")


def responsive_interpreter() -> None:
    """Let the GUI thread take the GIL back sooner. It gives the GIL up around each call into Qt and asks for it
    again on the way back (PySide asks for it at every virtual call on a widget made from Python, to look for an
    override: hundreds in one repaint of the window), and a worker running Python holds it until the switch
    interval ends. Beside two such workers, a 10 ms timer redrawing four plots ran once in 8 s at CPython's 5 ms,
    4 times at 1 ms, 18 at 0.5 ms, 38 at 0.2 ms and 60 at 0.1 ms on a slow 2-core machine; workers answering model
    queries (torch lets the GIL go) answered no fewer (bench/speed/RESULTS.md, by the rule declared there)."""
    import sys

    sys.setswitchinterval(SWITCH_INTERVAL_S)


TRIM_EVERY_S = 2.0
_last_trim = [0.0]


def release_memory_now_and_then() -> None:
    """After a query, at most every TRIM_EVERY_S: give freed memory back (varied text lengths must not
    grow the app; bench/robustness/memory.py). Not after every query: a keystroke's second query (the attention
    after the masked top-k, on this same thread) would wait for it."""
    import time

    now = time.monotonic()
    if now - _last_trim[0] >= TRIM_EVERY_S:
        from engine.api import release_memory

        release_memory()
        _last_trim[0] = time.monotonic()


class _Relay(QObject):
    done = Signal(int, object)
    failed = Signal(int, object)  # the exception itself: ``explorer.failures.explain`` says it


WORKER_NICE = 5  # how much lower than the window a worker thread runs (the app's trainings run at 10)


def below_the_window() -> None:
    """Run the calling worker thread at a lower CPU priority than the GUI thread, so that on a laptop's few cores
    the window gets a core first when it has work (a repaint, a relayout) and a model query or an index build
    takes what is left; threads this one starts later (torch's team) inherit it. Linux: the thread's own nice
    value, WORKER_NICE above the process's; elsewhere Qt's "low" thread priority. Called at the start of every
    pool job; a no-op where the system refuses, and on the main thread (the window's own, or a job run in place)."""
    import sys

    if threading.current_thread() is threading.main_thread():
        return
    if sys.platform.startswith("linux"):
        tid = threading.get_native_id()
        try:
            target = os.getpriority(os.PRIO_PROCESS, os.getpid()) + WORKER_NICE  # (the process: its main thread)
            if os.getpriority(os.PRIO_PROCESS, tid) < target:
                os.setpriority(os.PRIO_PROCESS, tid, target)
        except OSError:
            pass
        return
    from PySide6.QtCore import QThread

    thread = QThread.currentThread()
    if thread.priority() != QThread.Priority.LowPriority and thread.isRunning():
        thread.setPriority(QThread.Priority.LowPriority)


class _Job(QRunnable):
    def __init__(self, request: int, fn: Callable[[], Any], relay: _Relay, one_thread: bool = False,
                 stop: threading.Event | None = None) -> None:
        super().__init__()
        self.request, self.fn, self.relay, self.one_thread, self.stop = request, fn, relay, one_thread, stop

    def run(self) -> None:
        try:
            self._run()
        finally:
            # what it ran goes with it: PySide's pool can keep a runnable's Python object after it ran (the
            # chaos bench's census found an unloaded GloVe and word2vec held by the query pool through the
            # closure of a finished neighbours query: 500 MB), and a closure holds the model it asked
            self.fn = self.relay = self.stop = None  # type: ignore[assignment]

    def _run(self) -> None:
        if self.stop is not None and self.stop.is_set():
            return  # superseded while it waited its turn: its result would be dropped, so never run it
        below_the_window()
        if self.one_thread:  # a model query: one core is fastest for it (see engine.api.one_thread_here)
            from engine.api import one_thread_here

            one_thread_here()
        try:
            if self.stop is None:
                result = self.fn()
            else:
                from engine.api import cancellable

                with cancellable(self.stop):  # long queries stop between their steps once superseded
                    result = self.fn()
        except Exception as e:  # the exception travels to the GUI thread as itself (explorer.failures)
            self._send(self.relay.failed, e)
            return
        self._send(self.relay.done, result)
        if self.one_thread:
            release_memory_now_and_then()

    def _send(self, signal: Any, value: Any) -> None:
        try:
            signal.emit(self.request, value)
        except RuntimeError:  # the panel that asked was deleted (the app is closing): nobody to tell
            log.debug("a result arrived after its receiver was deleted; dropped")


class _JobRelay(QObject):
    progress = Signal(float, str)
    done = Signal(object)
    failed = Signal(object)


class BackgroundJob(QObject):
    """A long job (``fn(progress, stop)``) with progress events and cooperative cancel.

    ``progress(fraction, message)`` may be called from the worker thread; it arrives as a signal.
    """

    progress = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)  # what went wrong, in the words of ``explorer.failures.explain``
    error = Signal(object)  # the exception itself, just before ``failed``

    def __init__(self, fn: Callable[[Callable[[float, str], None], Any], Any], parent: QObject | None = None,
                 pool: QThreadPool | None = None) -> None:
        import threading

        super().__init__(parent)
        self.stop = threading.Event()
        self.running = True
        self.what = getattr(fn, "__qualname__", type(fn).__name__)  # what it runs (to say what still runs)
        relay = self._relay = _JobRelay()
        relay.progress.connect(self.progress)
        relay.done.connect(self._done)
        relay.failed.connect(self._failed)

        stop = self.stop
        # its owner gone (a closed talk window's panel, say), nobody waits for the result: the work stops at its
        # next step instead of running on with the models it holds (bench/robustness/chaos.py found such jobs
        # still encoding minutes later, keeping unloaded models alive)
        self.destroyed.connect(lambda *_: stop.set())
        _JOBS.add(self)

        def report(fraction: float, message: str) -> None:
            try:
                relay.progress.emit(float(fraction), str(message))
            except RuntimeError:  # its receiver was deleted (the app is closing): nobody waits, so stop
                stop.set()

        def work() -> Any:
            from engine.api import cancellable, long_job_threads_here

            long_job_threads_here()  # every core but one (queries keep to one): the window keeps a core
            with cancellable(stop):  # the engine's own steps stop too, not only the job's loop (engine.cancel)
                return fn(report, stop)

        # the relay lives as long as this object: the pool deletes the runnable itself after run()
        self._inner = _Relay()
        self._inner.done.connect(self._relay_done)
        self._inner.failed.connect(self._relay_failed)
        (pool or QThreadPool.globalInstance()).start(_Job(0, work, self._inner))

    def _relay_done(self, _request: int, result: object) -> None:
        self._relay.done.emit(result)

    def _relay_failed(self, _request: int, error: BaseException) -> None:
        self._relay.failed.emit(error)

    def cancel(self) -> None:
        self.stop.set()

    def _done(self, result: object) -> None:
        self.running = False
        self.finished.emit(result)
        # deleted once its receivers have run: a job is its panel's child, and each one a panel of the main window
        # started stayed for the life of the window, with its relays, its stop event and the closures connected
        # to it (+775 jobs and +2,333 relays in the 30-minute chaos bench, run H). Its owner may keep the Python
        # object (``self.job``): ``running`` and ``cancel`` still answer, as Python's own.
        self.deleteLater()

    def _failed(self, error: BaseException) -> None:
        self.running = False
        self.error.emit(error)
        self.failed.emit(explain(error))
        self.deleteLater()  # (as _done)


_JOBS: weakref.WeakSet[BackgroundJob] = weakref.WeakSet()  # every long job alive, of any window or panel


def background_jobs() -> list[BackgroundJob]:
    """The long jobs still running, whichever panel started them (to stop them all: closing the app)."""
    out = []
    for job in list(_JOBS):
        try:
            if job.running:
                out.append(job)
        except RuntimeError:  # (its Qt object is gone)
            continue
    return out


_QUERY_POOL: QThreadPool | None = None


def query_pool() -> QThreadPool:
    """The one thread that runs model queries, one after another. Two torch calls on two threads at
    once slow each other ~10x here (each brings its OpenMP team onto the same cores): a fill-mask and
    an attention map took 40-90 ms side by side and 3 ms each in turn (bench/speed/attention_predictions_speed.py)."""
    global _QUERY_POOL
    if _QUERY_POOL is None:
        _QUERY_POOL = QThreadPool()
        _QUERY_POOL.setMaxThreadCount(1)
    return _QUERY_POOL


def wait_for_workers(msecs: int) -> bool:
    """Wait for every query and background job to end (tests and shutdown)."""
    return query_pool().waitForDone(msecs) and QThreadPool.globalInstance().waitForDone(msecs)


class TaskRunner(QObject):
    """``submit(fn)`` runs fn in a pool (default: the query pool); ``finished``/``failed`` fire only
    for the latest request."""

    finished = Signal(object)
    failed = Signal(str)  # what went wrong, in the words of ``explorer.failures.explain``
    error = Signal(object)  # the exception itself, just before ``failed``

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or query_pool()
        self._latest = 0
        self._stop: threading.Event | None = None  # the latest request's: set when it is superseded
        self._relay = _Relay()
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        _RUNNERS.add(self)

    def submit(self, fn: Callable[[], Any]) -> int:
        """Run ``fn`` for a new request; an older one still waiting is skipped, one running is asked to
        stop (long queries check between steps, see engine.cancel)."""
        self._latest += 1
        if self._stop is not None:
            self._stop.set()
        self._stop = threading.Event()
        self._pool.start(_Job(self._latest, fn, self._relay, one_thread=self._pool is query_pool(), stop=self._stop))
        return self._latest

    def cancel(self) -> None:
        """Stop the latest request (the user pressed Stop): nothing it returns is delivered."""
        self._latest += 1
        if self._stop is not None:
            self._stop.set()
            self._stop = None

    @property
    def busy(self) -> bool:
        """The latest request has not answered yet."""
        return self._stop is not None

    @property
    def latest(self) -> int:
        return self._latest

    def _on_done(self, request: int, result: object) -> None:
        if request == self._latest:
            self._stop = None
            self.finished.emit(result)

    def _on_failed(self, request: int, error: BaseException) -> None:
        if request == self._latest:
            self._stop = None
            self.error.emit(error)
            self.failed.emit(explain(error))


_RUNNERS: weakref.WeakSet[TaskRunner] = weakref.WeakSet()  # every panel's query runner alive


def stop_queries() -> int:
    """Stop every query still waiting or running, whichever panel asked it (Stop-all, closing the app): a long
    one stops at its next step (engine.cancel), one waiting its turn never runs, and no answer is delivered.
    How many were stopped."""
    stopped = 0
    for runner in list(_RUNNERS):
        try:
            if runner.busy:
                runner.cancel()
                stopped += 1
        except RuntimeError:  # (its Qt object is gone)
            continue
    return stopped
