""""Senses emerging": every kept checkpoint of a run scored in the background — sense separation (best and last
layer), cloze top-10, and each checkpoint's first and top layers against the run's last (linear CKA) — and
plotted as the scores come, beside what guessing scores. The scores are cached per checkpoint (the cache
folder, never the run's), so a run is scored once."""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from explorer.tasks import BackgroundJob
from explorer.widgets.loss_plot import LossPlot
from explorer.widgets.plot_view import THEMED
from explorer.widgets.progress_bar import ProgressBar

TASKS = ("senses", "cloze")
MARKER = "#ff7f0e"  # the step shown (made readable on the plot's background)
# each checkpoint's layers against the run's last (linear CKA over held-out words): where the first and the top
# layer stand, so that which settles first shows (engine.inspection.history_scores.checkpoint_settling)
SETTLED_FIRST, SETTLED_TOP = "layer 1 ≈ the last checkpoint (CKA)", "top layer ≈ the last checkpoint (CKA)"
SCORE_CURVES = {"senses (best layer)": "#2ca02c", "senses (last layer)": "#98df8a", "cloze top-10": "#9467bd",
                SETTLED_FIRST: "#1f77b4", SETTLED_TOP: "#d62728"}
# the last layer dashed with triangles: where it is the best layer, both curves still show
SCORE_STYLES = {"senses (best layer)": {"symbol": "o"}, "senses (last layer)": {"symbol": "t", "dashed": True},
                "cloze top-10": {"symbol": "s"}, SETTLED_FIRST: {"symbol": "d"},
                SETTLED_TOP: {"symbol": "d", "dashed": True}}


# the run's own evaluations as it trained (read from its metrics at once, no scoring needed): dashed, crosses
OWN_COLOURS = ("#8c564b", "#17becf", "#e377c2", "#bcbd22", "#7f7f7f")


def own_name(key: str) -> str:
    """How a run's logged score is named on the plot: "held-out mlm accuracy", "held-out eval f1"."""
    return "held-out " + key.replace("eval_", "eval ").replace("_", " ")


class SensesEmerging(QWidget):
    """The score button, its progress and its plot (``plot``, x-linked to the run's loss by the panel)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scores: dict[int, dict[str, Any]] = {}  # step -> scores row
        self.own: dict[str, int] = {}  # the run's own held-out scores: curve -> the last step drawn
        self.settled: dict[int, list[float]] = {}  # step -> its layers' CKA against the last checkpoint
        self.chance_line: Any = None  # drawn with the first scores
        self.job: BackgroundJob | None = None
        self.score = QPushButton("Senses emerging: score every checkpoint")
        self.score.setEnabled(False)
        self.cancel = QPushButton("Cancel")
        self.cancel.setEnabled(False)
        self.cancel.clicked.connect(self.cancel_scores)
        self.progress = ProgressBar(maximum=1000, textVisible=True)
        self.plot = LossPlot(y_label="score (0-1)", empty_text="Score the checkpoints to see word senses "
                                                               "emerge as the run trained")
        # its legend halfway up at the right to begin with (it moves where the curves leave more room, and can be
        # dragged): the layers' CKA against the last checkpoint runs along the top, near 1, the senses' scores below
        # the middle, guessing's line at the bottom
        self.plot.legend.place((1, 0.5))
        self.marker = pg.InfiniteLine(angle=90, movable=False)
        self.plot.add_mark(self.marker, MARKER)
        self.marker.setVisible(False)  # the checkpoint shown: none until a run is open
        row = QHBoxLayout()
        row.addWidget(self.score)
        row.addWidget(self.cancel)
        row.addWidget(self.progress, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.plot, 1)

    def clear(self) -> None:
        """Another run: no scores yet."""
        self.plot.clear_curves()
        self.scores = {}
        self.own = {}
        self.settled = {}

    def show_own(self, scores: list[tuple[int, str, float]]) -> None:
        """The run's own held-out scores, (step, name, value) as its evaluations logged them (MLM, NSP and sense-pair
        accuracy): drawn at once, before any checkpoint is scored; a run followed adds the steps it logs since."""
        for step, key, value in scores:
            name = own_name(key)
            if name not in self.own:
                self.plot.curve(name, dashed=True, symbol="x", colour=OWN_COLOURS[len(self.own) % len(OWN_COLOURS)])
                self.own[name] = -1
            if step > self.own[name]:  # (a resumed run may log a step twice)
                self.plot.append(name, step, value)
                self.own[name] = step
        self.plot.redraw_now()

    def start(self, run_dir: str, last: str) -> None:
        """Score every kept checkpoint of ``run_dir`` (``last``: its last checkpoint, the layers' reference)."""
        if self.job is not None and self.job.running:
            return

        def work(progress: Any, stop: Any) -> list[dict[str, Any]]:
            from engine import api

            rows = []
            scores = api.checkpoint_scores(run_dir, TASKS, stop=stop, progress=lambda f, m: progress(0.7 * f, m))
            for row in scores:
                rows.append(row)
                relay.append(row)
            if stop.is_set():
                return rows
            final = api.load(last)
            if api.Capability.CONTEXTUAL in final.capabilities:  # (a Transformer's or ELMo's layers)
                def load(path: str) -> Any:
                    return final if path == last else api.load(path)  # (the last one loaded once)

                for row in api.checkpoint_settling(run_dir, stop=stop, load=load,
                                                   progress=lambda f, m: progress(0.7 + 0.3 * f, m)):
                    rows.append(row)
                    relay.append(row)
            return rows

        relay: list[dict[str, Any]] = []  # rows as they come (read on each progress event)
        job = BackgroundJob(work, self)
        job.progress.connect(lambda f, m: self._progress(job, relay, f, m))
        job.finished.connect(lambda rows: self._scored(job, rows))
        job.failed.connect(lambda m: self._failed(job, m))
        self.job = job
        self.score.setEnabled(False)
        self.cancel.setEnabled(True)

    def _progress(self, job: BackgroundJob, relay: list[dict[str, Any]], fraction: float, message: str) -> None:
        if job is not self.job:
            return
        self.progress.setValue(int(fraction * 1000))
        self.progress.setFormat(message)
        for row in list(relay):
            self.add_scores(row)

    def _scored(self, job: BackgroundJob, rows: list[dict[str, Any]]) -> None:
        if job is not self.job:
            return
        for row in rows:
            self.add_scores(row)
        self.score.setEnabled(True)
        self.cancel.setEnabled(False)
        errors = [r["error"] for r in rows if "error" in r]
        steps = len({r["step"] for r in rows})
        self.progress.setFormat(f"scored {steps} checkpoints" + (f"; {errors[0]}" if errors else ""))

    def _failed(self, job: BackgroundJob, message: str) -> None:
        if job is self.job:
            self.score.setEnabled(True)
            self.cancel.setEnabled(False)
            self.progress.setFormat(message)

    def cancel_scores(self, can_score: bool | None = None) -> None:
        """Stop scoring; ``can_score``: whether the run shown has checkpoints to score (None: as it was)."""
        if self.job is not None and self.job.running:
            self.job.cancel()
        self.cancel.setEnabled(False)
        if can_score is not None:
            self.score.setEnabled(can_score)

    def add_scores(self, row: dict[str, Any]) -> None:
        """A checkpoint's row (computed now or cached before) on the plot, once."""
        if "settled" in row or "against" in row:
            self._add_settled(row)
            return
        step = int(row["step"])
        if step in self.scores:
            return
        self.scores[step] = row
        senses, cloze = row.get("senses") or {}, row.get("cloze") or {}
        values = {"senses (best layer)": senses.get("best"), "senses (last layer)": senses.get("last"),
                  "cloze top-10": cloze.get("cloze_top10")}
        for name, value in values.items():
            if value is not None:
                self.plot.curve(name, colour=SCORE_CURVES[name], **SCORE_STYLES[name])  # type: ignore[arg-type]
                self._show_chance()
                self.plot.append(name, step, value)
        self.plot.redraw_now()

    def _add_settled(self, row: dict[str, Any]) -> None:
        """A checkpoint's layers against the run's last (linear CKA, depth by depth): its first and top layers."""
        step, settled = int(row["step"]), row.get("settled")
        if not settled or step in self.settled:
            return
        self.settled[step] = settled
        top = len(settled) - 1
        picked = {SETTLED_FIRST: settled[1] if top >= 1 else None, SETTLED_TOP: settled[top] if top >= 2 else None}
        for name, value in picked.items():
            if value is not None:
                self.plot.curve(name, colour=SCORE_CURVES[name], **SCORE_STYLES[name])  # type: ignore[arg-type]
                self.plot.append(name, step, value)
        self.plot.redraw_now()

    def _show_chance(self) -> None:
        """A dashed line at what sense separation scores by guessing: 0.52 at step 300 is not progress."""
        if self.chance_line is not None:
            return
        from engine.api import sense_chance

        chance = sense_chance()
        self.chance_line = pg.InfiniteLine(
            pos=chance, angle=0, movable=False, pen=pg.mkPen("#7f7f7f", width=1.5, style=Qt.PenStyle.DashLine),
            label=f"senses by chance {chance:.2f}",
            labelOpts={"position": 0.05, "color": pg.getConfigOption("foreground"), "anchors": [(0, 1), (0, 1)]})
        setattr(self.chance_line.label, THEMED, True)  # in the theme's text colour (a fixed grey was 2.3:1 on dark)
        self.plot.addItem(self.chance_line)
