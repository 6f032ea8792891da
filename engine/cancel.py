"""Cancelling a long query from another thread. A caller runs a query inside ``cancellable(stop)``; long
loops deep in the engine (a masked LM's pseudo-log-likelihood, chunk by chunk) call
``check_cancelled`` between their steps and raise ``Cancelled`` once ``stop`` is set. The queries'
signatures stay as they are: the stop event travels with the thread. Torch-free."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from engine.errors import Cancelled
from engine.yield_points import yield_point

_local = threading.local()


@contextmanager
def cancellable(stop: threading.Event) -> Iterator[threading.Event]:
    """Queries run inside this block stop (``Cancelled``) soon after ``stop`` is set."""
    previous = getattr(_local, "stop", None)
    _local.stop = stop
    try:
        yield stop
    finally:
        _local.stop = previous


def check_cancelled(what: str) -> None:
    """Raise ``Cancelled`` if this thread's query was cancelled; a yield point as well (``engine.yield_points``:
    a worker waits here while the app's window works)."""
    yield_point()
    stop = getattr(_local, "stop", None)
    if stop is not None and stop.is_set():
        raise Cancelled(f"{what} was cancelled")
