"""One single-flight task slot per panel: a new request supersedes the old, stale results are dropped.

Work runs on a QThreadPool thread; results come back through a Qt signal (queued to the GUI thread).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

log = logging.getLogger(__name__)


class _Relay(QObject):
    done = Signal(int, object)
    failed = Signal(int, str)


class _Job(QRunnable):
    def __init__(self, request: int, fn: Callable[[], Any], relay: _Relay) -> None:
        super().__init__()
        self.request, self.fn, self.relay = request, fn, relay

    def run(self) -> None:
        try:
            result = self.fn()
        except Exception as e:  # every failure becomes a readable message; the log keeps the traceback
            from engine.api import Word2BertError

            if not isinstance(e, Word2BertError):
                log.error("task failed:\n%s", traceback.format_exc())
            self.relay.failed.emit(self.request, str(e) or type(e).__name__)
            return
        self.relay.done.emit(self.request, result)


class _JobRelay(QObject):
    progress = Signal(float, str)
    done = Signal(object)
    failed = Signal(str)


class BackgroundJob(QObject):
    """A long job (``fn(progress, stop)``) with progress events and cooperative cancel.

    ``progress(fraction, message)`` may be called from the worker thread; it arrives as a signal.
    """

    progress = Signal(float, str)
    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, fn: Callable[[Callable[[float, str], None], Any], Any], parent: QObject | None = None,
                 pool: QThreadPool | None = None) -> None:
        import threading

        super().__init__(parent)
        self.stop = threading.Event()
        self.running = True
        relay = self._relay = _JobRelay()
        relay.progress.connect(self.progress)
        relay.done.connect(self._done)
        relay.failed.connect(self._failed)

        def work() -> Any:
            return fn(lambda f, m: relay.progress.emit(float(f), str(m)), self.stop)

        job = _Job(0, work, _Relay())
        job.relay.done.connect(lambda _r, result: relay.done.emit(result))
        job.relay.failed.connect(lambda _r, message: relay.failed.emit(message))
        self._job = job
        (pool or QThreadPool.globalInstance()).start(job)

    def cancel(self) -> None:
        self.stop.set()

    def _done(self, result: object) -> None:
        self.running = False
        self.finished.emit(result)

    def _failed(self, message: str) -> None:
        self.running = False
        self.failed.emit(message)


class TaskRunner(QObject):
    """``submit(fn)`` runs fn in the pool; ``finished``/``failed`` fire only for the latest request."""

    finished = Signal(object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._latest = 0
        self._relay = _Relay()
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)

    def submit(self, fn: Callable[[], Any]) -> int:
        self._latest += 1
        self._pool.start(_Job(self._latest, fn, self._relay))
        return self._latest

    @property
    def latest(self) -> int:
        return self._latest

    def _on_done(self, request: int, result: object) -> None:
        if request == self._latest:
            self.finished.emit(result)

    def _on_failed(self, request: int, message: str) -> None:
        if request == self._latest:
            self.failed.emit(message)


class _TrainRelay(QObject):
    event = Signal(object)
    done = Signal(str)
    failed = Signal(str)


class TrainJob(QObject):
    """Runs ``engine.api.train(spec, stop=...)`` on a pool thread; each event arrives as ``event``
    (the engine already throttles them: one StepMetrics every ``log_every`` steps)."""

    event = Signal(object)
    finished = Signal(str)  # the RunFinished status
    failed = Signal(str)

    def __init__(self, spec: Any, parent: QObject | None = None, pool: QThreadPool | None = None) -> None:
        import threading

        super().__init__(parent)
        self.spec = spec
        self.stop = threading.Event()
        self.running = True
        relay = self._relay = _TrainRelay()
        relay.event.connect(self.event)
        relay.done.connect(self._done)
        relay.failed.connect(self._failed)

        def work() -> str:
            from engine import api

            status = "failed"
            for ev in api.train(spec, stop=self.stop):
                relay.event.emit(ev)
                if isinstance(ev, api.RunFinished):
                    status = ev.status
            return status

        job = _Job(0, work, _Relay())
        job.relay.done.connect(lambda _r, status: relay.done.emit(status))
        job.relay.failed.connect(lambda _r, message: relay.failed.emit(message))
        self._job = job
        (pool or QThreadPool.globalInstance()).start(job)

    def cancel(self) -> None:
        self.stop.set()

    def _done(self, status: str) -> None:
        self.running = False
        self.finished.emit(status)

    def _failed(self, message: str) -> None:
        self.running = False
        self.failed.emit(message)
