"""Attention as images: ``Heatmap`` is one large matrix with token labels and the value under the
mouse; ``HeatmapGrid`` is every layer × head as a small image (one ImageItem each, created once per
shape, fed downsampled matrices), and says which one was clicked."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.widgets.block_spin import block_label
from explorer.widgets.plot_view import without_background_cache

COLOURMAP = pg.colormap.get("viridis")
DIVERGING = pg.ColorMap([0.0, 0.5, 1.0], ["#2166ac", "#f7f7f7", "#b2182b"])  # A − B: blue below 0, red above
MAX_LABELS = {"left": 60, "bottom": 24}  # beyond this many tokens only every n-th is labelled


def fitting_labels(labels: tuple[str, ...], cell: float, widths: list[int], gap: float = 6.0, rows: int = 1,
                   lead: float = 0.0, tail: float = 0.0) -> list[tuple[float, str]]:
    """Key labels side by side under cells ``cell`` pixels wide, each centred on its cell, on up to ``rows``
    staggered lines: a label goes on the first line where it starts after the last kept one ends (a long word
    takes its neighbours' room, not their place), else it is left out. A label may reach ``lead`` pixels left
    of the first cell (the query labels' margin) and ``tail`` right of the last; one that would reach further
    is left out (drawn, it would be cut by the window's edge). Line n's labels begin with n newlines."""
    ticks: list[tuple[float, str]] = []
    rights = [float("-inf")] * rows
    end = len(labels) * cell + tail
    for i, (label, width) in enumerate(zip(labels, widths, strict=True)):
        centre = (i + 0.5) * cell
        start, stop = centre - width / 2, centre + width / 2
        if start < -lead or stop > end:
            continue
        for row in range(rows):
            if start >= rights[row] + gap:
                ticks.append((i + 0.5, "\n" * row + label))
                rights[row] = stop
                break
    return ticks


def fitting_title(title: str, metrics: QFontMetrics, width: int) -> str:
    """A map's title as HTML lines within ``width`` pixels: its parts (split at ": ") on lines of their own
    where the whole is too wide, each line elided with "…" if still too wide. (pyqtgraph makes a plot at
    least as wide as its title: a long one pushed the map's right columns out of its pane.)"""
    if metrics.horizontalAdvance(title) <= width:
        lines = [title]
    else:
        lines = [part + (":" if n < title.count(": ") else "") for n, part in enumerate(title.split(": "))]
    return "<br>".join(html.escape(metrics.elidedText(line, Qt.TextElideMode.ElideRight, max(1, width)))
                       for line in lines)


class Heatmap(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # no context menu, and none built: pyqtgraph builds a view's menu (two forms of axis controls) unless told
        # at construction, a quarter of a plot's making (a talk step's panel is built in one turn of the event loop)
        # (the theme's background, pyqtgraph's default: a heat map made after a switch to the dark theme was white)
        self.plot = without_background_cache(pg.PlotWidget(enableMenu=False))
        self.plot.setAspectLocked(False)
        self.plot.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(COLOURMAP)
        self.plot.addItem(self.image)
        self.plot.setLabel("left", "query")
        self.plot.setLabel("bottom", "key")
        for axis in ("left", "bottom"):  # token labels only; never "(x0.001)" on an empty map's placeholder range
            self.plot.getAxis(axis).enableAutoSIPrefix(False)
        self.readout = QLabel("hover the map for a value")
        self.matrix = np.zeros((0, 0))
        self.rows: tuple[str, ...] = ()
        self.cols: tuple[str, ...] = ()
        self.title = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.readout)
        self.plot.scene().sigMouseMoved.connect(self._hover)
        self.clear_matrix()  # empty until a sentence is read: no numbers of a placeholder range on its axes

    def show_matrix(self, matrix: np.ndarray, rows: tuple[str, ...], cols: tuple[str, ...], title: str = "",
                    signed: bool = False) -> None:
        """A map of probabilities (0 to its maximum), or with ``signed`` a difference (symmetric around 0,
        blue below, red above)."""
        self.matrix, self.rows, self.cols = np.asarray(matrix, np.float32), rows, cols
        if signed:
            bound = max(1e-6, float(np.abs(self.matrix).max()) if self.matrix.size else 1.0)
            self.image.setColorMap(DIVERGING)
            self.image.setImage(self.matrix, levels=(-bound, bound))
        else:
            self.image.setColorMap(COLOURMAP)
            self.image.setImage(self.matrix, levels=(0.0, max(1e-6, float(self.matrix.max()) if self.matrix.size else 1.0)))
        self.image.setRect(0, 0, self.matrix.shape[1], self.matrix.shape[0])
        self.title = title
        self._label_axes()
        self._show_title()
        self.plot.autoRange(padding=0)

    def _show_title(self) -> None:
        label = self.plot.getPlotItem().titleLabel
        if not self.title:
            self.plot.setTitle("")
            return
        # the title stands over the map's column only (the query labels' left of it), less its margins
        room = int(self.plot.width() - self.plot.getAxis("left").width() - 24)
        font = QFont(label.item.font())  # the title's size is pyqtgraph's ("11pt"), set in its HTML
        size = str(label.opts.get("size") or "")
        if size.endswith("pt"):
            font.setPointSizeF(float(size[:-2]))
        self.plot.setTitle(fitting_title(self.title, QFontMetrics(font), room))

    def _label_axes(self) -> None:
        """Token labels on both axes; where they would overlap (the keys, side by side along the bottom),
        only every n-th, so that each stays readable whatever the width and zoom."""
        metrics = QFontMetrics(self.plot.getAxis("bottom").style.get("tickFont") or self.font())
        for axis, labels in (("left", self.rows), ("bottom", self.cols)):
            if axis == "bottom" and labels:
                room = max(1.0, self.plot.getPlotItem().vb.width() or self.width() * 0.8)
                lead = float(self.plot.getAxis("left").width())  # the query labels' margin, empty below them
                ticks = fitting_labels(labels, room / len(labels), [metrics.horizontalAdvance(t) for t in labels],
                                       rows=2, lead=lead)
                # pyqtgraph hides a label reaching past the axis's ends, "[CLS]" under a narrow first cell too
                self.plot.getAxis(axis).setStyle(hideOverlappingLabels=int(lead) + 1)
            else:
                step = max(1, -(-len(labels) // MAX_LABELS[axis]))
                ticks = [(i + 0.5, t) for i, t in enumerate(labels) if i % step == 0]
            self.plot.getAxis(axis).setTicks([ticks])

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.matrix.size:
            self._label_axes()
            self._show_title()

    def clear_matrix(self) -> None:
        """Show nothing (the sentence was cleared): no stale map of an earlier text."""
        self.matrix, self.rows, self.cols = np.zeros((0, 0), np.float32), (), ()
        self.image.clear()
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setTicks([[]])
        self.title = ""
        self.plot.setTitle("")
        self.readout.setText("hover the map for a value")

    def _hover(self, pos: Any) -> None:
        if not self.matrix.size:
            return
        point = self.plot.getPlotItem().vb.mapSceneToView(pos)
        q, k = int(point.y()), int(point.x())
        if 0 <= q < self.matrix.shape[0] and 0 <= k < self.matrix.shape[1]:
            row = self.rows[q] if q < len(self.rows) else str(q)
            col = self.cols[k] if k < len(self.cols) else str(k)
            self.readout.setText(f"{row} → {col}: {self.matrix[q, k]:.3f}")


class MosaicAxis(pg.AxisItem):
    """An axis whose line runs along the mosaic only (``extent``: its first and last view coordinates along the
    axis), not down the whole view: the model view's view is taller than its mosaic, and the layer axis's line went
    on below the last layer's heads."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.extent: tuple[float, float] | None = None

    def generateDrawSpecs(self, p: Any) -> Any:  # noqa: N802 - pyqtgraph's name
        specs = super().generateDrawSpecs(p)
        view = self.linkedView()
        if specs is None or self.extent is None or view is None:
            return specs
        (pen, start, end), *rest = specs
        vertical = self.orientation in ("left", "right")
        ends = [self.mapFromScene(view.mapViewToScene(QPointF(0.0, e) if vertical else QPointF(e, 0.0)))
                for e in self.extent]
        lo, hi = sorted(e.y() if vertical else e.x() for e in ends)
        if vertical:
            top, bottom = sorted((start.y(), end.y()))
            start, end = QPointF(start.x(), max(top, lo)), QPointF(end.x(), min(bottom, hi))
        else:
            left, right = sorted((start.x(), end.x()))
            start, end = QPointF(max(left, lo), start.y()), QPointF(min(right, hi), end.y())
        return ((pen, start, end), *rest)


class HeatmapGrid(pg.GraphicsLayoutWidget):
    """Every layer × head as one mosaic image: each head's small map coloured on its own scale (or, for a
    difference, on one scale shared by every head), laid out with a gap between cells, in one ImageItem.
    (One ImageItem and ViewBox per head took 1.2 s to build for 6 × 12 heads, 2.3 s for 12 × 12, on the
    GUI thread; the mosaic takes milliseconds.) ``clicked(layer, head)`` names the cell clicked."""

    clicked = Signal(int, int)  # layer, head
    GAP = 2  # pixels of the mosaic between two cells

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackground(pg.getConfigOption("background"))  # the theme's (apply_theme updates it)
        self.shape = (0, 0)
        self.cell = (0, 0)  # (q, k) of one head's map in the mosaic
        self.signed = False
        self.axes = {side: MosaicAxis(side) for side in ("left", "top")}
        self.plot = self.addPlot(row=0, col=0, enableMenu=False, axisItems=self.axes)  # (no menu built: see Heatmap)
        without_background_cache(self)  # (with its axes: they get the zoom)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.plot.invertY(True)
        self.plot.setAspectLocked(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.image.mouseClickEvent = self._clicked  # type: ignore[method-assign]
        self.plot.getViewBox().sigResized.connect(self._fit_top)
        self.clear_all()

    def _show_axes(self, on: bool) -> None:
        """Head labels above, layer labels at the left, once there is a mosaic; an empty grid shows no axes
        (pyqtgraph's default ones numbered a placeholder range)."""
        self.plot.hideAxis("bottom")
        for axis in ("left", "top"):
            (self.plot.showAxis if on else self.plot.hideAxis)(axis)

    def _fit_top(self) -> None:
        """The whole mosaic in view, at the top left: locked to square pixels, a view taller than the mosaic
        centred it, with an empty band between the head labels above and the first layer."""
        box = self.plot.getViewBox()
        rect = box.boundingRect()
        if not self.shape[0] or rect.width() <= 0 or rect.height() <= 0:
            return
        pad = 0.01 * max(self.image.width(), self.image.height())
        width, height = self.image.width() + 2 * pad, self.image.height() + 2 * pad
        if height / width < rect.height() / rect.width():
            height = width * rect.height() / rect.width()
        else:
            width = height * rect.width() / rect.height()
        box.setRange(xRange=(-pad, width - pad), yRange=(-pad, height - pad), padding=0)

    def clear_all(self) -> None:
        self.image.clear()
        for axis in ("left", "top"):
            self.plot.getAxis(axis).setTicks([[]])
            self.axes[axis].extent = None
        self._show_axes(False)
        self.shape, self.cell = (0, 0), (0, 0)

    def show_all(self, thumbnails: np.ndarray, signed: bool = False) -> None:
        """``thumbnails``: (layers, heads, q, k), already downsampled for small images. Probabilities are
        scaled per head (0 to its maximum); with ``signed`` (a difference of two models' heads) every head
        shares one scale symmetric around 0, so the heads that changed most stand out."""
        layers, heads, q, k = thumbnails.shape
        bound = max(1e-6, float(np.abs(thumbnails).max())) if signed and thumbnails.size else 1.0
        t = np.asarray(thumbnails, np.float64)
        if signed:
            scaled = 0.5 + t / (2 * bound)
        else:
            top = np.maximum(t.max(axis=(2, 3), keepdims=True), 1e-6)
            scaled = t / top
        rgba = (DIVERGING if signed else COLOURMAP).map(np.clip(scaled, 0, 1).ravel(), mode="byte")
        cells = np.asarray(rgba, np.uint8).reshape(layers, heads, q, k, 4)
        g = self.GAP
        mosaic = np.zeros((layers * (q + g) - g, heads * (k + g) - g, 4), np.uint8)  # gaps: transparent
        for layer in range(layers):
            for head in range(heads):
                mosaic[layer * (q + g) : layer * (q + g) + q, head * (k + g) : head * (k + g) + k] = cells[layer, head]
        self.image.setImage(mosaic, levels=None)
        self.image.setRect(0, 0, mosaic.shape[1], mosaic.shape[0])
        self.axes["left"].extent, self.axes["top"].extent = (0.0, mosaic.shape[0]), (0.0, mosaic.shape[1])
        if (layers, heads) != self.shape or (q, k) != self.cell:
            self.shape, self.cell = (layers, heads), (q, k)
            step = max(1, -(-heads // 8))  # at most 8 labels: 12 "head N" overlapped in a laptop's window
            self._show_axes(True)
            # "head 0" centred over the first column reaches past the axis's left end, over the layer labels'
            # margin: pyqtgraph hid it (it hides a label past an axis's ends)
            self.plot.getAxis("top").setStyle(hideOverlappingLabels=max(20, self.plot.getAxis("left").width()))
            self.plot.getAxis("top").setTicks([[(h * (k + g) + k / 2, f"head {h}") for h in range(0, heads, step)]])
            self.plot.getAxis("left").setTicks([[(layer * (q + g) + q / 2, block_label(layer)) for layer in range(layers)]])
            self._fit_top()
        self.signed = signed

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        """The (layer, head) under a point of the mosaic, None in a gap or outside."""
        q, k = self.cell
        g = self.GAP
        if not q or not k or x < 0 or y < 0:
            return None
        head, layer = int(x // (k + g)), int(y // (q + g))
        if head >= self.shape[1] or layer >= self.shape[0] or x % (k + g) >= k or y % (q + g) >= q:
            return None
        return layer, head

    def _clicked(self, event: Any) -> None:
        where = self.cell_at(event.pos().x(), event.pos().y())
        if where is not None:
            self.clicked.emit(*where)
