"""What the main window keeps between runs: its layout, theme, zoom, recent models, the lens's sentences and how
often a word must be seen to be listed."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMainWindow, QPlainTextEdit

from explorer.session import Session
from explorer.theme import apply_theme, apply_zoom


def _bounded_zoom(step: int) -> int:
    return max(-3, min(8, step))


class KeptSettings:
    """``remember=False``: a run that only makes pictures (``--screenshot``, ``--export``) starts from the
    defaults and writes nothing back."""

    def __init__(self, remember: bool) -> None:
        self.remember = remember
        self.store = QSettings("word2bert", "word2bert")
        self.zoom_level = 0

    def restore(self, window: QMainWindow, session: Session, sentences: QPlainTextEdit) -> None:
        s = self.store
        if self.remember and s.value("geometry") is not None:
            window.restoreGeometry(s.value("geometry"))
        if self.remember and s.value("state") is not None:
            window.restoreState(s.value("state"))
        recent = s.value("recent", [])
        session.recent = [str(r) for r in (recent if isinstance(recent, list) else [recent]) if r]
        kept = s.value("sentences") if self.remember else None  # (a picture: the defaults, then its scene's)
        if kept:
            sentences.setPlainText(str(kept))
        seen = str(s.value("seen_at_least", ""))
        if self.remember and seen.isdigit() and int(seen) >= 1:  # (pictures and scenes: the default)
            session.set_seen_at_least(int(seen))
        theme = str(s.value("theme", "light")) if self.remember else "light"
        zoom = str(s.value("zoom", 0)) if self.remember else "0"
        self.zoom_level = _bounded_zoom(int(zoom)) if zoom.lstrip("-").isdigit() else 0  # (a hand-edited file: 0)
        apply_theme(QApplication.instance(), theme if theme in ("light", "dark") else "light")
        apply_zoom(QApplication.instance(), self.zoom_level)

    def keep(self, window: QMainWindow, session: Session, sentences: QPlainTextEdit) -> None:
        if not self.remember:
            return
        s = self.store
        s.setValue("geometry", window.saveGeometry())
        s.setValue("state", window.saveState())
        s.setValue("recent", session.recent)
        s.setValue("sentences", sentences.toPlainText())
        s.setValue("seen_at_least", session.seen_at_least())
        s.sync()

    def zoom(self, step: int) -> None:
        """``step`` steps bigger (or smaller); 0: back to the default size."""
        self.zoom_level = 0 if step == 0 else _bounded_zoom(self.zoom_level + step)
        if self.remember:
            self.store.setValue("zoom", self.zoom_level)
        apply_zoom(QApplication.instance(), self.zoom_level)

    def theme(self, name: str) -> None:
        if self.remember:
            self.store.setValue("theme", name)
        apply_theme(QApplication.instance(), name)
