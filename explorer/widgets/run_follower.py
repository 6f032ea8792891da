"""Runs followed while they go on: each run's metrics.jsonl is looked at every few seconds (one stat on the
window's thread, nothing more; a Hugging Face Trainer's folder: a listing of its checkpoint-N folders); when it has
grown since it was last read, ``grew`` names the run, for its panel to read it again in a worker. A run whose last
reading ended with its finish is no longer looked at."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

FOLLOW_MS = 5_000  # how often a run that has not finished is looked at for more


def progress_mark(run_dir: str | Path) -> int:
    """What grows as a run goes on: the size of its metrics.jsonl; for a Hugging Face Trainer's folder, which has
    none, the step of its newest checkpoint whose trainer_state.json is written (-1: neither)."""
    from engine.api import METRICS, trainer_saved_step

    try:
        return (Path(run_dir) / METRICS).stat().st_size
    except OSError:
        return trainer_saved_step(run_dir)  # (a listing: no state file read on the window's thread)


class RunFollower(QObject):
    grew = Signal(str)  # a followed run's folder: its progress_mark is not the one it was read at

    def __init__(self, parent: QObject | None = None, interval_ms: int = FOLLOW_MS) -> None:
        super().__init__(parent)
        self._marks: dict[str, int] = {}  # run folder -> its progress_mark when last read
        self.timer = QTimer(self, interval=interval_ms)
        self.timer.timeout.connect(self._look)

    def read(self, run_dir: str, mark: int, finished: bool) -> None:
        """Run ``run_dir`` was just read at progress mark ``mark``: followed on unless it has finished."""
        if finished:
            self._marks.pop(run_dir, None)
        else:
            self._marks[run_dir] = mark
        self._timer_as_needed()

    def forget(self, run_dir: str | None = None) -> None:
        """No longer follow ``run_dir`` (None: any run)."""
        if run_dir is None:
            self._marks.clear()
        else:
            self._marks.pop(run_dir, None)
        self._timer_as_needed()

    def following(self, run_dir: str | None = None) -> bool:
        return bool(self._marks) if run_dir is None else run_dir in self._marks

    def _timer_as_needed(self) -> None:
        if not self._marks:
            self.timer.stop()
        elif not self.timer.isActive():
            self.timer.start()

    def _look(self) -> None:
        for run_dir, mark in list(self._marks.items()):
            if progress_mark(run_dir) != mark:
                self.grew.emit(run_dir)
