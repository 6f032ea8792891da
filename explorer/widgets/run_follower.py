"""Runs followed while they go on: each run's metrics.jsonl is looked at every few seconds (one stat on the
window's thread, nothing more); when it has grown since it was last read, ``grew`` names the run, for its panel to
read it again in a worker. A run whose last reading ended with its finish is no longer looked at."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

FOLLOW_MS = 5_000  # how often a run that has not finished is looked at for more


def metrics_size(run_dir: str | Path) -> int:
    """The size of a run's metrics.jsonl now (-1: none)."""
    from engine.api import METRICS

    try:
        return (Path(run_dir) / METRICS).stat().st_size
    except OSError:
        return -1


class RunFollower(QObject):
    grew = Signal(str)  # a followed run's folder: its metrics.jsonl is not the size it was read at

    def __init__(self, parent: QObject | None = None, interval_ms: int = FOLLOW_MS) -> None:
        super().__init__(parent)
        self._sizes: dict[str, int] = {}  # run folder -> its metrics.jsonl's size when last read
        self.timer = QTimer(self, interval=interval_ms)
        self.timer.timeout.connect(self._look)

    def read(self, run_dir: str, size: int, finished: bool) -> None:
        """Run ``run_dir`` was just read, its metrics.jsonl at ``size`` bytes: followed on unless it has finished."""
        if finished:
            self._sizes.pop(run_dir, None)
        else:
            self._sizes[run_dir] = size
        self._timer_as_needed()

    def forget(self, run_dir: str | None = None) -> None:
        """No longer follow ``run_dir`` (None: any run)."""
        if run_dir is None:
            self._sizes.clear()
        else:
            self._sizes.pop(run_dir, None)
        self._timer_as_needed()

    def following(self, run_dir: str | None = None) -> bool:
        return bool(self._sizes) if run_dir is None else run_dir in self._sizes

    def _timer_as_needed(self) -> None:
        if not self._sizes:
            self.timer.stop()
        elif not self.timer.isActive():
            self.timer.start()

    def _look(self) -> None:
        for run_dir, size in list(self._sizes.items()):
            if metrics_size(run_dir) != size:
                self.grew.emit(run_dir)
