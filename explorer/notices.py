"""The engine's one-line notices (a damaged cache entry built again, a cache folder that cannot be
written) on the window's status bar, from whichever thread logged them."""

from __future__ import annotations

import contextlib
import logging

from PySide6.QtCore import QObject, Signal

NOTICE_MS = 15_000  # long enough to read before the next status replaces it
LOGGERS = ("word2bert.cache",)


class Notices(QObject):
    """Forwards records of the engine's notice loggers as ``said`` (queued to the GUI thread by Qt)."""

    said = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        notices = self

        class Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                with contextlib.suppress(RuntimeError):  # the window is gone (the app is closing)
                    notices.said.emit(record.getMessage())

        self.handler = Handler(level=logging.WARNING)
        for name in LOGGERS:
            logging.getLogger(name).addHandler(self.handler)
        self.destroyed.connect(self._detach)

    def _detach(self) -> None:
        for name in LOGGERS:
            logging.getLogger(name).removeHandler(self.handler)

    def close(self) -> None:
        self._detach()
