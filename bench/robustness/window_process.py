"""A bench's process made as the app's window makes its own: Python's objects from malloc (the process started
again), torch's and the BLAS threads sleeping, two malloc arenas, then the QApplication and the lighter imports."""

from __future__ import annotations

import sys
from typing import Any


def window_like_application() -> Any:
    """The QApplication of a process set up as the app's window (call first: it may start the process again)."""
    from explorer.python_allocator import restart_with_malloc

    restart_with_malloc()  # as the app's window does
    from explorer.worker_threads import sleeping_worker_threads

    sleeping_worker_threads()
    from explorer.malloc_arenas import fewer_arenas

    fewer_arenas()
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()
    return app
