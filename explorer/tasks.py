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

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from explorer.failures import explain
from explorer.window_work import window_working

log = logging.getLogger(__name__)


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
        from engine.api import yield_at_modules

        yield_at_modules()  # its models wait while the window works (explorer.window_work)
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
        window_working()  # (what shows the result is drawn with the workers waiting: explorer.window_work)
        self.finished.emit(result)
        # deleted once its receivers have run: a job is its panel's child, and each one a panel of the main window
        # started stayed for the life of the window, with its relays, its stop event and the closures connected
        # to it (+775 jobs and +2,333 relays in the 30-minute chaos bench, run H). Its owner may keep the Python
        # object (``self.job``): ``running`` and ``cancel`` still answer, as Python's own.
        self.deleteLater()

    def _failed(self, error: BaseException) -> None:
        self.running = False
        window_working()
        self.error.emit(error)
        self.failed.emit(explain(error))
        self.deleteLater()  # (as _done)


_JOBS: weakref.WeakSet[BackgroundJob] = weakref.WeakSet()  # every long job alive, of any window or panel


def superseding_job(old: BackgroundJob | None, work: Callable[[Callable[[float, str], None], Any], Any],
                    parent: QObject, asked: Any, progress: Callable[[Any, float, str], None],
                    done: Callable[[Any, Any], None], failed: Callable[[Any, str], None]) -> BackgroundJob:
    """A long job for the question ``asked`` that replaces ``old`` (cancelled if it still runs: its answer would be
    dropped); its progress, answer and failure reach ``progress``, ``done`` and ``failed`` with ``asked`` first, so
    that the owner drops those of a question it no longer shows."""
    if old is not None and old.running:
        old.cancel()
    job = BackgroundJob(work, parent)
    job.progress.connect(lambda f, m: progress(asked, f, m))
    job.finished.connect(lambda r: done(asked, r))
    job.failed.connect(lambda m: failed(asked, m))
    return job


def background_jobs() -> list[BackgroundJob]:
    """The long jobs still running, whichever panel started them (to stop them all: closing the app). A job whose
    Qt object is gone (its owner deleted while it ran) is not one: its work was told to stop then, and it never
    reports; its Python object, kept by a panel's ``job``, still says ``running``."""
    import shiboken6

    return [job for job in list(_JOBS) if shiboken6.isValid(job) and job.running]


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
            window_working()  # (the panel draws its answer with the workers waiting: explorer.window_work)
            self.finished.emit(result)

    def _on_failed(self, request: int, error: BaseException) -> None:
        if request == self._latest:
            self._stop = None
            window_working()
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
