"""The main window's status bar: what the app says (loads, notices, cleared caches), the device it found, its
memory, and the long jobs under way."""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import QThreadPool, QTimer
from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from explorer.session import Session
from explorer.tasks import TaskRunner


def device_summary() -> tuple[str, str]:
    """The device in words, and its type ("cuda", "mps", "cpu")."""
    from engine import api

    return api.device_summary(), api.device_type()


def _clear_cache() -> str:
    from engine import api

    entries, size = api.clear_cache()
    return f"cache cleared: {entries:,} {'entry' if entries == 1 else 'entries'}, {size / 2**20:,.1f} MB freed ({api.cache_folder()})"


def process_memory_mb() -> float:
    try:
        with open(f"/proc/{os.getpid()}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class StatusLine:
    """``jobs``: the long jobs under way, in words ("indexing 40%"), asked every second; ``device_type``: told
    the device type once torch has been asked (off the GUI thread)."""

    def __init__(self, owner: QWidget, bar: QStatusBar, session: Session, jobs: Callable[[], list[str]],
                 device_type: Callable[[str], None]) -> None:
        self.bar, self.session, self.jobs, self.device_type = bar, session, jobs, device_type
        self.device_label = QLabel("device: …")
        self.memory_label = QLabel("")
        # as wide as five digits from the start: a label that grows at 1,000 MB overlapped the device's until the
        # bar was laid out again
        self.memory_label.setMinimumWidth(self.memory_label.fontMetrics().horizontalAdvance("memory 88,888 MB"))
        self.jobs_label = QLabel("")
        for w in (self.jobs_label, self.memory_label, self.device_label):
            bar.addPermanentWidget(w)
        bar.showMessage("starting…")
        session.status.connect(bar.showMessage)
        from explorer.notices import NOTICE_MS, Notices

        self.notices = Notices(owner)  # the engine's notices: a damaged cache entry rebuilt, a cache not writable
        self.notices.said.connect(lambda text: bar.showMessage(text, NOTICE_MS))
        self._cache_runner = TaskRunner(owner, QThreadPool.globalInstance())
        self._cache_runner.finished.connect(lambda text: bar.showMessage(text, 15_000))
        self._cache_runner.failed.connect(bar.showMessage)
        self._device = TaskRunner(owner, QThreadPool.globalInstance())
        self._device.finished.connect(self._device_found)
        self._device.submit(device_summary)
        self._ticker = QTimer(owner, interval=1000)
        self._ticker.timeout.connect(self.tick)
        self._ticker.start()
        session.modelsChanged.connect(self.tick)  # "loading N" goes the moment the last model arrives

    def clear_cache(self) -> None:
        """Remove what the app built once to answer fast, off the GUI thread; the bar says what was freed."""
        self._cache_runner.submit(_clear_cache)

    def _device_found(self, found: tuple[str, str]) -> None:
        name, kind = found
        self.device_label.setText(f"device: {name}")
        self.device_type(kind)
        if self.bar.currentMessage() == "starting…":  # nothing is loading: say what to do
            self.bar.showMessage("ready: double-click a model in the library, or File → Open")

    def tick(self) -> None:
        self.memory_label.setText(f"memory {process_memory_mb():,.0f} MB")
        loading = [f"loading {self.session.loading}"] if self.session.loading else []
        self.jobs_label.setText(" · ".join(loading + self.jobs()))
