"""``word2bert --screenshot FILE.png``: the window saved once the view on screen has its results and
nothing newer is on its way (a model still loading, a query not answered, a debounce about to ask)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

POLL_MS = 300


def pending(panel: Any) -> bool:
    """Whether a panel still has work on its way: a query not answered yet, a background job (the polysemy
    lens's occurrences, encoded on demand) still running, or a debounce about to send one."""
    from explorer.tasks import BackgroundJob, TaskRunner
    from explorer.widgets.descendants import descendants

    if any(runner.busy for runner in descendants(panel, TaskRunner)):
        return True
    if any(job.running for job in descendants(panel, BackgroundJob)):
        return True
    return any(timer.isSingleShot() and timer.isActive() for timer in descendants(panel, QTimer))


class WindowShot(QObject):
    """Call ``take_when_ready`` when the view has shown something: the window is saved now if nothing newer
    can come, else it looks again every POLL_MS. (Waiting for the next answer instead hung when the last
    model to load was one the view does not use — all-MiniLM-L6-v2 scores no sentences, so no answer came.)"""

    saved = Signal(str)

    def __init__(self, window: Any, session: Any, path: str) -> None:
        super().__init__(window)
        self.window, self.session, self.path = window, session, path
        self.taken = False

    def take_when_ready(self, *_: object) -> None:
        if self.taken:
            return
        if self.session.loading or pending(self.window.tabs.currentWidget()):
            QTimer.singleShot(POLL_MS, self.take_when_ready)
            return
        self.taken = True
        self.window.grab().save(self.path)
        self.saved.emit(self.path)

    def take_after(self, ms: int) -> None:
        QTimer.singleShot(ms, self.take_when_ready)
