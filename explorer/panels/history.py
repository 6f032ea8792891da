"""The run scrubber: a run's kept checkpoints (ours ``checkpoints/step-N``, or a Hugging Face Trainer's
``checkpoint-N``) on a slider drawn over its loss curve. The checkpoint the slider selects becomes the
session's model "RUN (scrubber)", so every panel showing it answers with that step; "Compare with this
step" pins a copy beside it. "Senses emerging" (explorer/panels/senses_emerging.py) scores every checkpoint in
the background and plots the scores as they come. A run still training is followed (explorer/widgets/run_follower.py)."""

from __future__ import annotations

import bisect
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from explorer.panels.run_reading import RunRead, read_run
from explorer.panels.senses_emerging import MARKER, TASKS, SensesEmerging
from explorer.scenes import Scene
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.aligned_axes import share_x
from explorer.widgets.loss_plot import LossPlot
from explorer.widgets.run_follower import RunFollower

CACHED_CHECKPOINTS = 4  # loaded checkpoints kept in memory while scrubbing (the memory cap)
# the slider still this long: the checkpoints kept for quick scrubbing are let go but the one shown (a MiniLM
# checkpoint is ~90 MB; four stayed loaded for the rest of the session after the scrubber was last moved)
SCRUB_REST_MS = 30_000


class HistoryPanel(QWidget):
    shown = Signal()  # a scene's checkpoint is the scrubber's model (a screenshot or a talk step may be taken)
    failed = Signal(str)  # the scene's run or checkpoint cannot be shown: why

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.run_dir = ""
        self.history: list[Any] = []  # KeptCheckpoint, oldest first
        self.loaded: OrderedDict[str, Any] = OrderedDict()  # checkpoint path -> handle (LRU)
        self._rest = QTimer(self, singleShot=True, interval=SCRUB_REST_MS)
        self._rest.timeout.connect(self.keep_only_the_shown)
        self.open_button = QPushButton("Open run…")
        self.open_button.clicked.connect(self.choose_run)
        self.title = QLabel("Open a run folder (ours, trained with --keep-every, or a Hugging Face Trainer "
                            "output with checkpoint-N folders) to walk through its checkpoints; one still training "
                            "is followed as it goes on.")
        self.title.setWordWrap(True)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setMinimum(0)
        self.slider.setMaximum(0)
        self.slider.setEnabled(False)
        self.slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.step_label = QLabel("")
        self.compare = QPushButton("Compare with this step")
        self.compare.setEnabled(False)
        self.compare.setToolTip("keep this checkpoint loaded as its own model, to compare the next steps with it")
        self.compare.clicked.connect(self.pin_current)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.loss = LossPlot(y_label="training loss", empty_text="Open a run: its training loss, with a tick at "
                                                                "each checkpoint it kept")
        self.marker = pg.InfiniteLine(angle=90, movable=False)
        self.loss.add_mark(self.marker, MARKER)
        self.checkpoint_ticks = pg.ScatterPlotItem(size=9, pen=None)
        self.loss.add_mark(self.checkpoint_ticks, MARKER)
        self.loss.scene().sigMouseClicked.connect(self._plot_clicked)
        self.emerging = SensesEmerging()
        self.emerging.score.clicked.connect(self.score_checkpoints)
        self.quality = self.emerging.plot
        share_x(self.loss, self.quality)  # one step at one place on both
        self.quality_marker = self.emerging.marker
        self.marker.setVisible(False)  # the checkpoint shown: none until a run is open
        self.quality.scene().sigMouseClicked.connect(lambda e: self._plot_clicked(e, self.quality))

        top = QHBoxLayout()
        top.addWidget(self.open_button)
        top.addWidget(self.title, 1)
        row = QHBoxLayout()
        row.addWidget(QLabel("Checkpoint:"))
        row.addWidget(self.slider, 1)
        row.addWidget(self.step_label)
        row.addWidget(self.compare)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(row)
        layout.addWidget(self.message)
        layout.addWidget(self.loss, 3)
        layout.addWidget(self.emerging, 2)
        self.loader = TaskRunner(self)  # the latest slider position wins; earlier loads are dropped
        self.loader.finished.connect(self._loaded)
        self.loader.failed.connect(self._load_failed)
        self.history_runner = TaskRunner(self)
        self.history_runner.finished.connect(self._history_read)
        self.history_runner.finished.connect(self._watch)
        self.history_runner.failed.connect(self._history_failed)
        self.follower = RunFollower(self)  # a run that has not finished: its metrics.jsonl looked at for more
        self.follower.grew.connect(self._look_again)
        self.follow_runner = TaskRunner(self)
        self.follow_runner.finished.connect(self._followed)
        self.slider.valueChanged.connect(self._slid)
        self._wanted_step: int | None = None  # a scene's step, until its checkpoint is shown
        session.modelsChanged.connect(self._alias_unloaded)

    # ------------------------------------------------------------ the run

    @property
    def alias(self) -> str:
        return f"{Path(self.run_dir).name} (scrubber)" if self.run_dir else ""

    def choose_run(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a run folder: its checkpoints and loss curve")
        if path:
            self.open_run(path)

    def open_run(self, run_dir: str) -> None:
        """Read the run's checkpoints and loss curve (in the background), then select its last checkpoint; a run
        still training is followed: its curve and checkpoints grow as it goes on."""
        self.cancel_scores()
        self.follower.forget()
        self.follow_runner.cancel()
        self.run_dir = str(run_dir)
        self.title.setText(f"{run_dir}: reading its checkpoints…")
        self.history_runner.submit(lambda: read_run(str(run_dir), TASKS))

    def _history_read(self, read: RunRead) -> None:
        if read.run_dir != self.run_dir:
            return
        self.history = read.history
        self.emerging.clear()
        self._draw_run(read, whole=True)
        if not read.history:  # still before its first save: the loss so far, nothing to scrub
            self._history_failed(None)
            return
        for row in read.cached:
            self.emerging.add_scores(row)
        self.slider.blockSignals(True)
        self.slider.setMaximum(len(read.history) - 1)
        self.slider.setValue(len(read.history) - 1)
        self.slider.blockSignals(False)
        for control in (self.slider, self.emerging.score, self.compare):
            control.setEnabled(True)
        self._show_step(self._wanted_step)

    def _draw_run(self, read: RunRead, whole: bool) -> None:
        """The run's loss curves, its checkpoints on them, and the title; ``whole``: the plot shows every step
        (else it widens only where it showed the end before: a user's zoom stays)."""
        run_dir, history, losses = read.run_dir, read.history, read.losses
        ends: Any = self.loss.points("loss")[0] if "loss" in self.loss.buffers else []
        showing_end = len(ends) > 0 and self.loss.getPlotItem().viewRange()[0][1] >= float(max(ends))
        self.loss.clear_curves()
        for step, loss in losses:
            self.loss.append_loss("loss", step, loss)
        for step, key, value in read.held_out:  # the run's own evaluations: held-out loss beside the training loss
            name = f"held-out {key.replace('_', ' ')}"
            self.loss.curve(name, dashed=True, symbol="o", colour="#9467bd", width=2)
            self.loss.append(name, step, value)
        self.emerging.show_own(read.held_out_scores)  # and their accuracies where the checkpoints' scores go
        self.loss.set_empty_text(f"{Path(run_dir).name} logged no training loss (a folder of checkpoints "
                                 "without word2bert's metrics.jsonl or a Trainer's trainer_state.json)")
        self.loss.redraw_now()
        ordered = sorted(losses)  # (a resumed run may have logged a step twice)
        on_curve = [(k.step, y) for k in history if (y := self._loss_at(k.step, ordered)) is not None]
        # each kept checkpoint on the curve where a loss was logged around it (none at a made-up loss, none at the
        # loss of a step far from it; the slider's ticks show them all)
        self.checkpoint_ticks.setData([x for x, _ in on_curve], [y for _, y in on_curve])
        steps = [k.step for k in history] + ([ordered[0][0], ordered[-1][0]] if ordered else [])
        # every checkpoint in sight, the marker too, with no loss logged there (a continued run's step 0)
        if steps and (whole or showing_end):
            self.loss.getPlotItem().setXRange(min(steps), max(steps), padding=0.02)
        following = (" — still training: its curve and checkpoints follow it" if read.recent else
                     " — it has not finished (the curve follows it if it goes on)" if not read.finished else "")
        if not history:
            self.title.setText(f"{run_dir}: no checkpoint kept yet, its training loss to step {ordered[-1][0]:,} "
                               "(ours keep checkpoints with --keep-every, and a run's folder is a save of its own "
                               "when it stops or ends)" + following)
            return
        began = history[0].began_from  # (where a continued run began: before any loss it logged, said apart)
        off_curve = len(history) - len(on_curve) - (1 if began and all(x != 0 for x, _ in on_curve) else 0)
        own = len(history) - (1 if began else 0)
        self.title.setText(f"{run_dir}: "
                           + (("1 checkpoint, step " + f"{history[0].step:,}" if len(history) == 1 else
                               f"{len(history)} checkpoints, steps {history[0].step:,}–{history[-1].step:,}") if own
                              else f"no checkpoint of its own yet (its training loss to step {ordered[-1][0]:,})"
                              if ordered else "no checkpoint of its own yet")
                           + ("" if losses else " (no loss curve: neither our metrics.jsonl nor a Trainer's trainer_state.json)")
                           + (f" (step 0: {began}, the run it went on from)" if began else "")
                           + (f" ({off_curve} outside the steps {ordered[0][0]:,}–{ordered[-1][0]:,} whose training loss"
                              " was logged)" if losses and off_curve else "") + following)

    # ------------------------------------------------------------ a run still training

    def _watch(self, read: RunRead) -> None:
        """Follow the run while it has not finished (its metrics.jsonl is looked at every few seconds)."""
        if read.run_dir == self.run_dir:
            self.follower.read(read.run_dir, read.progress, read.finished)

    def _look_again(self, run_dir: str) -> None:
        """The run's metrics grew: read it again in the background (one read at a time: a tick during it is
        skipped, and the next looks again)."""
        if run_dir == self.run_dir and not self.follow_runner.busy:
            self.follow_runner.submit(lambda: read_run(run_dir, TASKS, cached_scores=False))

    def _followed(self, read: RunRead) -> None:
        """More of the run: its curves grow, new checkpoints join the slider, the checkpoint shown stays shown."""
        if read.run_dir != self.run_dir:
            return
        if not self.history:  # its first checkpoints: as if opened now (the last one shown)
            self._history_read(read)
            self._watch(read)
            return
        shown = self.current()
        self._draw_run(read, whole=False)
        self._watch(read)
        if not read.history:
            return
        steps = {k.path: k.step for k in read.history}
        for path in [p for p in self.loaded if any(k.path == p and steps.get(p) != k.step for k in self.history)]:
            del self.loaded[path]  # (the run's folder saved again since: another step's weights there now)
        self.history = read.history
        kept = [(k.path, k.step) for k in read.history]
        still = shown is not None and (shown.path, shown.step) in kept
        self.slider.blockSignals(True)
        self.slider.setMaximum(len(kept) - 1)
        # a kept checkpoint stays shown; where the run's folder was shown and has saved a later step since, the
        # latest is (a live view)
        self.slider.setValue(kept.index((shown.path, shown.step)) if still else len(kept) - 1)
        self.slider.blockSignals(False)
        if not still:
            self._slid(self.slider.value())

    def _history_failed(self, message: str | None) -> None:
        """The run has no checkpoint to scrub: ``message`` says why (None: the title said it already)."""
        if message is not None:
            self.title.setText(message)
            if self._wanted_step is not None or self.run_dir:
                self.failed.emit(message)
        self.history = []
        for control in (self.slider, self.emerging.score, self.compare):
            control.setEnabled(False)

    @staticmethod
    def _loss_at(step: int, losses: list[tuple[int, float]]) -> float | None:
        """The training loss at ``step`` read off the curve (losses in step order; a long run logs thousands):
        a logged step's own, between two logged steps the line joining them, and None before the first or
        after the last (a run that logs every 50 steps may keep a checkpoint at step 10)."""
        if not losses or not losses[0][0] <= step <= losses[-1][0]:
            return None
        i = bisect.bisect_left(losses, (step,))
        if losses[i][0] == step:
            return losses[i][1]
        (s0, y0), (s1, y1) = losses[i - 1], losses[i]
        return y0 + (y1 - y0) * (step - s0) / (s1 - s0)

    # ------------------------------------------------------------ the slider

    def current(self) -> Any:
        return self.history[self.slider.value()] if self.history else None

    def _slid(self, index: int) -> None:
        kept = self.current()
        if kept is None:
            return
        for marker in (self.marker, self.quality_marker):
            marker.setValue(kept.step)
            marker.setVisible(True)
        self.step_label.setText(f"step {kept.step:,}" + (f": {kept.began_from}" if kept.began_from else ""))
        self._rest.start()  # (again: from now)
        if kept.path in self.loaded:
            self.loaded.move_to_end(kept.path)
            self._use(kept, self.loaded[kept.path])
            return
        self.message.setText(f"loading step {kept.step:,}…")
        path = kept.path

        def work() -> tuple[Any, Any]:
            from engine import api

            return kept, api.load(path)

        self.loader.submit(work)

    def _loaded(self, result: tuple[Any, Any]) -> None:
        kept, handle = result
        self.loaded[kept.path] = handle
        while len(self.loaded) > CACHED_CHECKPOINTS:
            self.loaded.popitem(last=False)
        if kept is self.current():
            self._use(kept, handle)

    def rest_left_ms(self) -> int:
        """How long until the scrubber counts as rested and lets go of its kept checkpoints (0: not waiting)."""
        return max(0, self._rest.remainingTime()) if self._rest.isActive() else 0

    def _alias_unloaded(self) -> None:
        """The scrubber's model was unloaded (the library's Unload): its checkpoints go with it, the one shown
        too (the chaos bench's census found it held here after the user let go of it). Moving the slider loads
        again."""
        if self.alias and self.loaded and self.alias not in self.session.models:
            self.loaded.clear()

    def keep_only_the_shown(self) -> None:
        """The scrubber has rested: let go of the checkpoints kept for scrubbing, but the one shown."""
        kept = self.current()
        for path in [p for p in self.loaded if kept is None or p != kept.path]:
            del self.loaded[path]

    def _load_failed(self, message: str) -> None:
        self.message.setText(f"this checkpoint cannot be loaded: {message}")
        self.failed.emit(f"this checkpoint cannot be loaded: {message}")

    def _use(self, kept: Any, handle: Any) -> None:
        """The selected checkpoint answers in every panel showing the scrubber's model."""
        tokens = kept.tokens()
        self.message.setText(f"“{self.alias}” is step {kept.step:,}" + (f" ({tokens:,} tokens seen)" if tokens else "")
                             + (f" — {kept.began_from}, as this run went on from it" if kept.began_from else "")
                             + ": choose it in any panel; moving the slider re-runs what is on screen.")
        self.session.set_model(self.alias, handle)
        wanted = self._wanted_step
        if wanted is None or kept is min(self.history, key=lambda k: abs(k.step - wanted)):
            self._wanted_step = None
            self.shown.emit()

    # ------------------------------------------------------------ scenes

    def apply_scene(self, scene: Scene) -> None:
        """Open the scene's run at the kept checkpoint nearest its step (the last one when it names none)."""
        self._wanted_step = scene.step
        run = str(Path(scene.run or "").expanduser())
        if run != self.run_dir or not self.history:
            self.open_run(run)
        else:
            self._show_step(scene.step)

    def current_scene(self) -> Scene:
        kept = self.current()
        return Scene("history", run=self.run_dir or None, step=kept.step if kept is not None else None,
                     title=f"{Path(self.run_dir).name}, step {kept.step:,}" if kept is not None else None)

    def set_presenting(self, on: bool) -> None:
        """A talk's step: the run stays the scene's (no Open run… button on the slide)."""
        self.open_button.setVisible(not on)

    def _show_step(self, step: int | None) -> None:
        """Show the kept checkpoint nearest ``step`` (None: the one selected), moved to or not."""
        before = self.slider.value()
        if step is not None:
            self.select_step(step)  # moving the slider shows that checkpoint
        if self.slider.value() == before:
            self._slid(before)

    def select_step(self, step: int) -> None:
        """Jump to the kept checkpoint nearest ``step``."""
        if self.history:
            nearest = min(range(len(self.history)), key=lambda i: abs(self.history[i].step - step))
            self.slider.setValue(nearest)

    def _plot_clicked(self, event: Any, plot: Any = None) -> None:
        plot = plot or self.loss
        point = plot.getPlotItem().vb.mapSceneToView(event.scenePos())
        self.select_step(int(round(point.x())))

    def pin_current(self) -> None:
        kept = self.current()
        handle = self.loaded.get(kept.path) if kept is not None else None
        if handle is None:
            self.message.setText("the checkpoint is still loading")
            return
        name = f"{Path(self.run_dir).name} @ step {kept.step:,}"
        self.session.set_model(name, handle)
        self.message.setText(f"“{name}” stays loaded: pick it as the model to compare with (masked LM: "
                             "“compare with”; sentence probability lists every model)")

    # ------------------------------------------------------------ senses emerging

    def score_checkpoints(self) -> None:
        if self.run_dir and self.history:
            self.emerging.start(self.run_dir, self.history[-1].path)

    def cancel_scores(self) -> None:
        self.emerging.cancel_scores(can_score=bool(self.history))

    def shutdown(self) -> None:
        self.cancel_scores()
        self.follower.forget()

