"""Runs shown on a run monitor from their folders: a run's metrics.jsonl is read in a worker and re-plotted beside
the runs of the window; one still training (started with ``word2bert-train … &`` or ``word2bert-finetune … &``) is
followed and its curves grow. The Pretrain and Fine-tune tabs each have one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from explorer.panels.run_reading import CurvesRead, read_curves
from explorer.tasks import TaskRunner
from explorer.widgets.run_follower import RunFollower
from explorer.widgets.run_monitor import RunMonitor


class ShownRuns(QObject):
    message = Signal(str)  # what happened, for the panel's status line
    ended = Signal(str)  # a followed run finished with a saved model: its folder (the library lists it)
    drawn = Signal(str, str)  # a run was drawn afresh from its metrics.jsonl: its folder, its name in the plots

    def __init__(self, monitor: RunMonitor, parent: QObject, own_names: Callable[[], set[str]],
                 refuse: Callable[[str, str], str | None] = lambda name, kind: None) -> None:
        """``own_names``: the names the panel's own runs have in the plots (a shown run is not drawn into one);
        ``refuse(name, kind)``: why a run of that kind (its started event's: "bert", "finetune", …) is not drawn
        here, or None."""
        super().__init__(parent)
        self.monitor = monitor
        self._own_names = own_names
        self._refuse = refuse
        self.names: dict[str, str] = {}  # a shown run's folder -> its name in the plots
        self.runner = TaskRunner(self)  # a run's metrics.jsonl, read off the window's thread
        self.runner.finished.connect(self._read)
        self.runner.failed.connect(lambda message: self.message.emit(f"cannot read the run's metrics: {message}"))
        self.follower = RunFollower(self)  # shown runs still training: their curves grow as they go on
        self.follower.grew.connect(self._read_more)

    def show(self, run_dir: str) -> None:
        """Re-plot a run from its metrics.jsonl (finished runs keep every logged step and evaluation)."""
        run_dir = str(run_dir)
        self.message.emit(f"reading {Path(run_dir).name}'s metrics.jsonl…")
        self.runner.submit(lambda: read_curves(run_dir, whole=True))

    def forget(self) -> None:
        """No run is followed any more (the app closes, or every job stops)."""
        self.follower.forget()

    def _read_more(self, run_dir: str) -> None:
        """A followed run's metrics.jsonl grew: read it again (none while a reading is under way: the next look
        finds it grown still)."""
        if not self.runner.busy:
            self.runner.submit(lambda: read_curves(run_dir, whole=False))

    def name_for(self, run_dir: str) -> str:
        """A shown run's name in the plots: its folder's, or with its parent's where another shown run has it."""
        if run_dir in self.names:
            return self.names[run_dir]
        path = Path(run_dir)
        taken = set(self.names.values()) | self._own_names()
        name = path.name if path.name not in taken else f"{path.parent.name}/{path.name}"
        self.names[run_dir] = name
        return name

    def _read(self, read: CurvesRead) -> None:
        from engine.api import RunStarted

        # (a run is refused when first read: one refused is not followed, so later readings are of runs drawn here)
        kind = next((ev.kind for ev in read.events if isinstance(ev, RunStarted)), "") if read.whole else ""
        why = self._refuse(Path(read.run_dir).name, kind) if kind else None
        if why is not None:
            self.follower.forget(read.run_dir)
            self.message.emit(why)
            return
        name = self.name_for(read.run_dir)
        drawn = len(self.monitor.events.get(name, []))
        whole = read.whole or drawn > len(read.events)  # (its metrics.jsonl written afresh since: drawn afresh)
        if whole:
            self.monitor.add_run(name)
            self.monitor.clear_run(name)
            drawn = 0
        for ev in read.events[drawn:]:
            self.monitor.show_event(name, ev)
        self.monitor.apply_visibility()
        watched = self.follower.following(read.run_dir)
        self.follower.read(read.run_dir, read.progress, read.finished)
        if watched and read.finished and (Path(read.run_dir) / "config.json").is_file():
            self.ended.emit(read.run_dir)  # it ended while followed: in the library, one double-click away
            self.message.emit(f"{name} has finished: it is in the model library")
        if read.whole:
            self.drawn.emit(read.run_dir, name)
            self.message.emit(
                f"{name}: {len(read.events)} events re-plotted from metrics.jsonl"
                + (" — still training: its curves follow it" if read.recent else
                   " — it has not finished (its curves follow it if it goes on)" if not read.finished else ""))
