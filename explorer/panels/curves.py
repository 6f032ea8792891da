"""Fine-tuning curves: what pre-training buys, drawn — the validation metric against examples seen for a
pretrained model fine-tuned whole, the same model frozen, and the same network from scratch. It shows a
curves file shipped with the app (recorded by bench/quality/finetune_quality.py), any other curves file, or
fine-tuning run folders (made in the Fine-tune tab). A talk's last step uses it."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.scenes import Scene
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.choices import narrow_choice
from explorer.widgets.legend_corner import add_corner_legend, place_legend
from explorer.widgets.plot_grid import opaque_grid
from explorer.widgets.plot_view import MenuOnDemand, RecolouredPlot, without_background_cache
from explorer.widgets.readable import MARKS, TALK_TEXT, TEXT, readable

# one colour per strategy, readable on white and on a projector's black
COLOURS = {"full": "#1f77b4", "frozen": "#2ca02c", "scratch": "#d62728"}
TALK_COLOURS = {"full": "#4fb3ff", "frozen": "#7be07b", "scratch": "#ff6b6b"}
OTHER = ["#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]
WIDTH, TALK_WIDTH = 3, 7
TALK_AXIS_PX = 26
LEGEND_MIN_HEIGHT = 360  # px of plot: below it the legend would lie over the curves


def source_text(source: str | list[str]) -> str:
    if isinstance(source, list):
        return ", ".join(Path(s).name for s in source)
    return source


class CurvesPanel(QWidget):
    shown = Signal()  # curves are on screen (talk decks and screenshots wait for it)
    failed = Signal(str)  # they cannot be read: why
    _restyle = False  # a zoom came while hidden: the axes are styled when shown

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from engine.api import shipped_curves

        self.session = session
        self.presenting = False
        # recoloured for a new palette at the next turn of the event loop (a timer of its own: see the polysemy
        # panel's _rewrite_soon for what QTimer.singleShot with a context kept)
        self._recolour_soon = QTimer(self, singleShot=True, interval=0)
        self._recolour_soon.timeout.connect(self.recolour)
        self.source: str | list[str] = ""
        self.curves: Any = None
        self.choice = QComboBox()
        self.choice.addItems(shipped_curves())
        self.open_button = QPushButton("Open curves file…")
        self.open_runs = QPushButton("Open fine-tuning runs…")
        self.heading = QLabel("Choose recorded curves, or open fine-tuning run folders.")
        self.heading.setWordWrap(True)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.plot = without_background_cache(RecolouredPlot(viewBox=MenuOnDemand()))
        self.plot.background_changed.connect(self.recolour)  # (the curves' colours chosen for the new background)
        opaque_grid(self.plot.getPlotItem())
        for axis in ("left", "bottom"):
            self.plot.getPlotItem().getAxis(axis).enableAutoSIPrefix(False)
        self.plot.setLabel("bottom", "examples seen")
        # bottom right to begin with (validation curves rise); moved where the curves leave more room once drawn,
        # zoomed or resized (explorer.widgets.legend_corner)
        self.legend = add_corner_legend(self.plot.getPlotItem())
        self.legend.place((1, 1))
        self._place_soon = QTimer(self, singleShot=True, interval=0)
        self._place_soon.timeout.connect(self._place_legend)
        view = self.plot.getPlotItem().vb
        view.sigRangeChanged.connect(self._place_soon.start)
        view.sigResized.connect(self._place_soon.start)
        self.controls = QWidget()
        # the choice on one row, each button on a row of its own: side by side they made the Fine-tune tab wider
        # than a laptop's window at a talk's zoom; the choice as narrow as a short name, and as wide as the row
        narrow_choice(self.choice)
        rows = QVBoxLayout(self.controls)
        rows.setContentsMargins(0, 0, 0, 0)
        first = QHBoxLayout()
        first.addWidget(QLabel("Recorded:"))
        first.addWidget(self.choice, 1)
        rows.addLayout(first)
        for button in (self.open_button, self.open_runs):
            rows.addWidget(button, 0, Qt.AlignmentFlag.AlignLeft)
        self.column = layout = QVBoxLayout(self)
        layout.addWidget(self.controls)
        layout.addWidget(self.heading)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.summary)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._fail)
        self.choice.activated.connect(lambda _: self.show_curves(self.choice.currentText()))
        self.open_button.clicked.connect(self._open_file)
        self.open_runs.clicked.connect(self._open_runs)
        if self.choice.count():
            self.show_curves(self.choice.currentText())

    # ------------------------------------------------------------ sources

    def show_curves(self, source: str | list[str]) -> None:
        """Read (in a worker) and draw a shipped curves name, a curves file, or a list of run folders."""
        from engine import api

        if not source:
            return
        self.source = source
        self.heading.setText(f"reading {source_text(source)}…")
        self._fit_wrapped()
        if isinstance(source, list):
            self.runner.submit(lambda: api.curves_from_runs(list(source)))
        else:
            self.runner.submit(lambda: api.read_curves(source))

    def _open_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a curves file", "", "Curves (*.json)")
        if path:
            self.show_curves(path)

    def _open_runs(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "A folder of fine-tuning runs (or one run)")
        if not folder:
            return
        runs = [str(p) for p in sorted(Path(folder).iterdir()) if (p / "metrics.jsonl").is_file()]
        self.show_curves(runs or [folder])

    def apply_scene(self, scene: Scene) -> None:
        source = scene.curves or ""
        if isinstance(source, str) and self.choice.findText(source) >= 0:
            self.choice.setCurrentText(source)
        self.show_curves(source)

    def current_scene(self) -> Scene:
        return Scene("curves", curves=self.source, view="curves")

    # ------------------------------------------------------------ drawing

    def _fail(self, message: str) -> None:
        self.curves = None
        self.plot.clear()
        self.heading.setText(message)
        self.summary.setText("")
        self._fit_wrapped()
        self.failed.emit(message)
        self.shown.emit()  # the message is what this view shows (a talk waits for its steps to show)

    def _show(self, curves: Any) -> None:
        self.curves = curves
        self.draw()
        self.shown.emit()

    def _colours(self) -> list[str]:
        """Each run's colour, as the strategy's (a talk's brighter set on a projector's black), else the next other."""
        colours = TALK_COLOURS if self.presenting else COLOURS
        others = iter(OTHER * 4)
        return [colours.get(c.strategy) or next(others) for c in self.curves.runs]

    def draw(self) -> None:
        curves = self.curves
        if curves is None:
            return
        self.plot.clear()
        self.legend.clear()
        width = TALK_WIDTH if self.presenting else WIDTH
        for curve in curves.runs:
            self.plot.plot(curve.examples, curve.values, name=curve.label, symbol="o", symbolSize=width * 3)
        metric = curves.metric or "validation metric"
        self.plot.setLabel("left", f"validation {metric}")
        task = curves.task.replace("-", " ")
        self.heading.setText(f"Fine-tuning {curves.model} on {task}: validation {metric} as it learns")
        self.recolour()
        self._fit_wrapped()
        self._style_axes()
        self._fit_legend()

    def recolour(self) -> None:
        """The curves and their key in colours readable on the backgrounds they are on now (explorer.widgets.readable):
        a change of theme recolours what is drawn (drawing it all again, symbols and legend, made a theme's change
        one of the chaos bench's longest stalls)."""
        curves = self.curves
        if curves is None:
            return
        width = TALK_WIDTH if self.presenting else WIDTH
        background = self.plot.backgroundBrush().color()
        for item, colour in zip(self.plot.getPlotItem().listDataItems(), self._colours(), strict=False):
            shown = readable(colour, background, MARKS)
            item.setPen(pg.mkPen(shown, width=width))
            item.setSymbolBrush(shown)
            item.setSymbolPen(shown)
        best = {c.strategy: c.best for c in curves.runs}
        text = self.summary.palette().color(QPalette.ColorRole.Window)
        ratio = TALK_TEXT if self.presenting else TEXT
        parts = [f"<span style='color:{readable(colour, text, ratio)}'>■ {html.escape(c.label)}</span>: "
                 f"best {c.best:.3f}" for c, colour in zip(curves.runs, self._colours(), strict=True)]
        # (the key when the plot is too small for its legend)
        if "full" in best and "scratch" in best:
            parts.append(f"<b>pre-training buys {100 * (best['full'] - best['scratch']):+.1f} points</b>")
        made_by = f"<br><small>(recorded by {html.escape(curves.made_by)})</small>" if curves.made_by and not self.presenting else ""
        self.summary.setText(" · ".join(parts) + made_by)

    def _style_axes(self) -> None:
        item = self.plot.getPlotItem()
        font = QFont(self.font())
        if self.presenting:
            font.setPixelSize(TALK_AXIS_PX)
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.label.setFont(font)  # first: setStyle sizes the axis for its numbers and its label
            axis.setStyle(tickFont=font)
        # tall enough for the rotated y label and the axis under it, or the plot is squeezed to a strip under the
        # fine-tuning plots (the tab scrolls instead); the legend still shows only where it has its own room
        metrics = QFontMetrics(font)
        # the y axis as wide as its numbers (0 to 1: "0.00" at most) and its label: pyqtgraph sized it for the
        # numbers it drew before the talk's font, and the label lay over "0.6"
        item.getAxis("left").setWidth(metrics.horizontalAdvance("0.00") + metrics.height() + 24 if self.presenting else None)
        item.getAxis("bottom").setHeight(2 * metrics.height() + 16 if self.presenting else None)
        label = metrics.horizontalAdvance(item.getAxis("left").labelText or "") + 2 * metrics.lineSpacing() + 40
        self.plot.setMinimumHeight(max(160, label))
        if self.presenting:
            for _, label in self.legend.items:
                label.setText(label.text, size=f"{TALK_AXIS_PX}px", color="#ffffff")

    def _fit_legend(self) -> None:
        """The legend only where there is room for it beside the curves (the summary names them too)."""
        self.legend.setVisible(self.plot.height() >= LEGEND_MIN_HEIGHT)
        self._place_soon.start()

    def _place_legend(self) -> None:
        if self.legend.isVisible() and self.isVisible():
            place_legend(self.legend, self.plot.getPlotItem().vb,
                         [item.getData() for item in self.plot.getPlotItem().listDataItems()])

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_legend()
        self._fit_wrapped()

    def _fit_wrapped(self) -> None:
        """The wrapped heading and summary as tall as their lines at this width: a wrapped label's own minimum
        assumes a wider one, and under the fine-tuning plots the panel's layout then laid them over the plot."""
        margins = self.column.contentsMargins()  # the width they will get: the panel's, less its margins
        width = max(1, self.width() - margins.left() - margins.right())
        for label in (self.heading, self.summary):
            label.setMinimumHeight(max(0, label.heightForWidth(width)))

    def changeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_recolour_soon"):
            self._recolour_soon.start()  # the key's colours chosen for the new theme, once every widget has it
        if event.type() == QEvent.Type.FontChange:  # a presentation zoom: the axes' font and the plot's height,
            self._restyle = not self.isVisible()  # now if shown, else when shown (each zoom reaches every panel)
            if not self._restyle:
                self._style_axes()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._place_soon.start()  # (the legend's place was not looked for while hidden)
        if self._restyle:
            self._restyle = False
            self._style_axes()

    def set_presenting(self, on: bool) -> None:
        """A talk's layout: no controls, thick lines, big axis labels on black."""
        self.presenting = on
        self.controls.setVisible(not on)
        if on:
            self.plot.setBackground("#000000")
            for name in ("left", "bottom"):
                axis = self.plot.getPlotItem().getAxis(name)
                axis.setPen("#ffffff")
                axis.setTextPen("#ffffff")
            opaque_grid(self.plot.getPlotItem(), "#ffffff", "#000000")
            self.legend.setLabelTextColor("#ffffff")
        self._style_axes()
        self.draw()
