"""The curves of training runs, shared by the Pretrain and Fine-tune panels: a list of runs (untick to
hide), the training loss of each (raw and smoothed), a held-out metric chosen from a list, and one more
curve per run (throughput or learning rate) — over steps, or examples seen when the runs say their batch.

The monitor keeps every run's events; a panel passes each event
of a run to ``show_event`` and never touches the plots itself. The latest ``SHOWN_RUNS`` runs are drawn (as many
as the plots have colours); an older one is unticked when a new run comes, and stays in the list to tick again."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from explorer.widgets.aligned_axes import SharedX
from explorer.widgets.choices import narrow_choice
from explorer.widgets.loss_plot import LossPlot

SPEED, LEARNING_RATE = "speed", "learning rate"
# Runs drawn at once: the palette's colours (explorer.widgets.loss_plot.PALETTE). Every drawn curve also costs each
# redraw's autorange: the chaos bench's hundreds of runs put pyqtgraph's bounds updates among the stalls' causes.
SHOWN_RUNS = 8
# Runs listed at most: past this, the oldest run not drawn is forgotten (its list entry, events and points), so that
# hours of trainings started from one window do not grow it without end (432 runs in the chaos bench's 30 minutes).
KEPT_RUNS = 40


def finished_text(ev: Any, metrics: str = "") -> str:
    """What a panel's status line says when a run ends. A stopped run's engine message ends with the CLI's way
    on ("; resume with --resume …"); in the app that is the Resume button, and "stopped at step N" is said once. A
    run stopped before it saved anything (while it read its corpus) says so, not "saved"."""
    if ev.status == "stopped" and "; resume with" in ev.message:
        what = ev.message.split("; resume with", 1)[0]
        return " ".join(t for t in (f"{what}: saved. Resume goes on from here.", metrics) if t)
    if ev.status == "stopped":
        return " ".join(t for t in (f"{ev.message or f'stopped at step {ev.step}'}.", metrics) if t)
    return " ".join(t for t in (f"{ev.status} at step {ev.step}.", ev.message, metrics) if t)


IDLE_NOTE = "Start a run: its training loss grows here"


class RunMonitor(QSplitter):
    """``runs`` (the list) is laid out by the panel; the plots are this splitter's children."""

    def __init__(self, eval_label: str, extra: str, examples_axis: bool, default_metric_skips_loss: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.extra_kind = extra
        self.skip_loss_metric = default_metric_skips_loss
        self.events: dict[str, list[Any]] = {}  # run -> its events (a panel reads a run's start and evaluations)
        self.batch: dict[str, int] = {}  # run -> examples per step
        self.runs = QListWidget()
        self.runs.itemChanged.connect(lambda _: self.apply_visibility())
        self.loss_plot = LossPlot(y_label="training loss", empty_text=IDLE_NOTE)
        self.eval_plot = LossPlot(y_label=eval_label, empty_text=f"its {eval_label} metrics, at each evaluation")
        self.extra_plot = LossPlot(y_label="per second" if extra == SPEED else "learning rate",
                                   empty_text="its speed" if extra == SPEED else "its learning rate")
        # one x for the three, the span of all their curves: a step at one place on each (each autoranged its own
        # curves: an evaluation at step 20 sat at the left edge of its plot, a third of the way into the loss's)
        self.shared_x = SharedX(self.loss_plot, self.eval_plot, self.extra_plot)
        self.metric_choice = QComboBox()
        self.metric_choice.setPlaceholderText("after the first evaluation")  # not an empty box to open
        self.metric_choice.setEnabled(False)
        self.metric_choice.currentTextChanged.connect(lambda _: self.apply_visibility())
        self.x_axis = QComboBox()
        self.x_axis.addItems(["steps", "examples seen"] if examples_axis else ["steps"])
        self.x_axis.currentTextChanged.connect(lambda _: self.replot())
        row_box = QWidget()  # each label beside its choice, one pair a row: narrow enough for a talk's zoom
        row = QGridLayout(row_box)  # Qt's own layout (a layout of Python's ran on the window's thread at each resize)
        row.setContentsMargins(0, 0, 0, 0)
        row.setColumnStretch(1, 1)
        # "Metric:", not "Validation metric:": the plot under it is labelled so, and the longer label made the
        # Fine-tune tab wider than a laptop's window at a talk's zoom
        pairs = [("Metric:", self.metric_choice)]
        if examples_axis:
            pairs.append(("x-axis:", self.x_axis))
        for i, (label, choice) in enumerate(pairs):
            narrow_choice(choice)
            row.addWidget(QLabel(label), i, 0)
            row.addWidget(choice, i, 1)
        eval_box = QWidget()
        layout = QVBoxLayout(eval_box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(row_box)
        layout.addWidget(self.eval_plot, 1)
        self.addWidget(self.loss_plot)
        self.addWidget(eval_box)
        self.addWidget(self.extra_plot)

    # ------------------------------------------------------------ runs

    def add_run(self, name: str) -> str:
        """List a run (ticked) and give it its colour."""
        if name not in self.events:
            self.events[name] = []
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.runs.addItem(item)
            self.runs.setToolTip(f"The {SHOWN_RUNS} latest runs are drawn; tick an older one to draw it too")
            ticked = [self.runs.item(i) for i in range(self.runs.count())
                      if self.runs.item(i).checkState() == Qt.CheckState.Checked]
            for old in ticked[: max(0, len(ticked) - SHOWN_RUNS)]:  # the oldest drawn: unticked (itemChanged hides it)
                old.setCheckState(Qt.CheckState.Unchecked)
            self._forget_oldest()
        return self.loss_plot.run_curves(name)

    def _forget_oldest(self) -> None:
        """Past ``KEPT_RUNS`` listed, forget the oldest runs that are not drawn. (A forgotten run that sends an event
        later is listed again, from that event on.)"""
        excess = self.runs.count() - KEPT_RUNS
        row = 0
        while excess > 0 and row < self.runs.count():
            item = self.runs.item(row)
            if item.checkState() == Qt.CheckState.Checked:
                row += 1
                continue
            self.runs.takeItem(row)
            self._remove_curves(item.text())
            excess -= 1

    def clear_run(self, name: str) -> None:
        """Run ``name`` drawn afresh from its next event (its curves and events dropped; it stays listed)."""
        if name in self.events:
            self._remove_curves(name)
            self.events[name] = []

    def _remove_curves(self, name: str) -> None:
        self.events.pop(name, None)
        self.batch.pop(name, None)
        self.loss_plot.remove_curve(name)
        self.loss_plot.remove_curve(f"{name} smoothed")
        self.extra_plot.remove_curve(name)
        for curve in [c for c in self.eval_plot.styles if c.rpartition(" ")[0] == name]:
            self.eval_plot.remove_curve(curve)

    def starting(self, name: str, doing: str) -> None:
        """What the empty loss plot says while run ``name`` prepares (``doing``: reading its corpus, loading its
        model), before its first loss: until then it said "Start a run", as if nothing had been started."""
        self.loss_plot.set_empty_text(f"{name}: {doing}…\nits training loss grows here from its first steps")

    def idle(self) -> None:
        """The empty loss plot's note once no run is preparing (a run that ends before its first loss)."""
        self.loss_plot.set_empty_text(IDLE_NOTE)

    def tick(self, name: str) -> None:
        """Run ``name`` drawn (ticked in the list; itemChanged shows it)."""
        for i in range(self.runs.count()):
            if self.runs.item(i).text() == name:
                self.runs.item(i).setCheckState(Qt.CheckState.Checked)

    def hidden(self) -> set[str]:
        return {self.runs.item(i).text() for i in range(self.runs.count())
                if self.runs.item(i).checkState() != Qt.CheckState.Checked}

    def _factor(self, name: str) -> float:
        """What a run's steps are multiplied by on the x-axis: its batch for "examples seen", else 1."""
        return float(self.batch.get(name, 1)) if self.x_axis.currentText() == "examples seen" else 1.0

    def _scale_steps(self, name: str) -> None:
        """Run ``name``'s per-step curves (its losses, its speed or learning rate) on the x-axis chosen now."""
        factor = self._factor(name)
        for curve in (name, f"{name} smoothed"):
            self.loss_plot.set_x_scale(curve, factor)
        self.extra_plot.set_x_scale(name, factor)

    def _scale_run(self, name: str) -> None:
        """Every curve of run ``name`` drawn on the x-axis chosen now (the points stay steps)."""
        self._scale_steps(name)
        for curve in [c for c in self.eval_plot.styles if c.rpartition(" ")[0] == name]:
            self.eval_plot.set_x_scale(curve, self._factor(name))

    # ------------------------------------------------------------ events

    def show_event(self, name: str, ev: Any) -> None:
        from engine import api

        colour = self.add_run(name)  # listed (and ticked) first: a run's first event may come before any add_run
        self.events[name].append(ev)
        if isinstance(ev, api.RunStarted):
            self.batch[name] = int(ev.info.get("batch_size", 1))
            self._scale_run(name)
        elif isinstance(ev, api.StepMetrics):
            self.loss_plot.append_loss(name, ev.step, ev.loss)
            if self.extra_kind == LEARNING_RATE:
                self.extra_plot.curve(name, colour=colour)
                self.extra_plot.append(name, ev.step, ev.lr)
            elif ev.throughput == ev.throughput and ev.throughput > 0:
                self.extra_plot.curve(name, colour=colour)
                self.extra_plot.append(name, ev.step, ev.throughput)
                if self.extra_plot.getPlotItem().getAxis("left").labelText != f"{ev.unit}/s":
                    self.extra_plot.setLabel("left", f"{ev.unit}/s")
            self._scale_steps(name)
        elif isinstance(ev, api.EvalMetrics):
            for metric, value in ev.metrics.items():
                if "coverage" in metric:  # word-similarity coverage: a count, not a quality
                    continue
                if self.metric_choice.findText(metric) < 0:
                    self.metric_choice.addItem(metric)
                    self.metric_choice.setEnabled(True)
                    if self.metric_choice.currentIndex() < 0:  # (a placeholder keeps the box unchosen)
                        self.metric_choice.setCurrentIndex(0)
                self.eval_plot.curve(f"{name} {metric}", colour=colour, symbol="o")
                self.eval_plot.append(f"{name} {metric}", ev.step, value)
                self.eval_plot.set_x_scale(f"{name} {metric}", self._factor(name))
            if self.skip_loss_metric and self.metric_choice.currentText() == "loss" and self.metric_choice.count() > 1:
                self.metric_choice.setCurrentIndex(1)  # the task metric, not the loss, by default
            self.apply_visibility()

    def apply_visibility(self) -> None:
        """Ticked runs only, and of the held-out metrics only the chosen one (scales differ)."""
        hidden, metric = self.hidden(), self.metric_choice.currentText()
        for name in self.events:
            self.loss_plot.set_run_visible(name, name not in hidden)
            self.extra_plot.set_visible(name, name not in hidden)
        for curve in self.eval_plot.styles:
            run, _, rest = curve.rpartition(" ")
            self.eval_plot.set_visible(curve, rest == metric and run not in hidden)
        self.eval_plot.setLabel("left", metric or "held-out metric")

    def replot(self) -> None:
        """Draw every run on the chosen x-axis (steps or examples seen): each curve's x scaled, its points and items
        kept. (Replaying every kept run's events made each curve's item again, the hidden runs' too: half a second
        on the window's thread for 40 runs of 30 steps.)"""
        for plot in (self.loss_plot, self.eval_plot, self.extra_plot):
            plot.setLabel("bottom", self.x_axis.currentText())
        for name in self.events:
            self._scale_run(name)
        for plot in (self.loss_plot, self.eval_plot, self.extra_plot):
            plot.redraw_now()
            plot.getPlotItem().vb.enableAutoRange(y=True)  # (autoRange() once left y fixed as the curves went on)
        self.shared_x.follow()  # every curve in sight on the new axis

    def redraw_now(self) -> None:
        """Draw what the plots' timers would (screenshots, exports)."""
        for plot in (self.loss_plot, self.eval_plot, self.extra_plot):
            plot.redraw_now()
