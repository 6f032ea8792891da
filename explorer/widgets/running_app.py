"""The running QApplication, typed as one (``QApplication.instance()`` says QCoreApplication or None), for the
widgets that follow application-wide signals such as ``focusChanged``."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication


def running_app() -> QApplication:
    """The running application; RuntimeError where none runs (no widget exists outside one)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        raise RuntimeError("no QApplication is running")
    return app
