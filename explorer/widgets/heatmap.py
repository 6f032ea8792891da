"""Attention as images: ``Heatmap`` is one large matrix with token labels and the value under the
mouse; ``HeatmapGrid`` is every layer × head as a small image (one ImageItem each, created once per
shape, fed downsampled matrices), and says which one was clicked."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

COLOURMAP = pg.colormap.get("viridis")
DIVERGING = pg.ColorMap([0.0, 0.5, 1.0], ["#2166ac", "#f7f7f7", "#b2182b"])  # A − B: blue below 0, red above
MAX_LABELS = {"left": 60, "bottom": 24}  # beyond this many tokens only every n-th is labelled


def fitting_labels(labels: tuple[str, ...], cell: float, widths: list[int], gap: float = 6.0) -> list[tuple[float, str]]:
    """Key labels side by side under cells ``cell`` pixels wide, each centred on its cell: a label is kept
    when it starts after the last kept one ends (a long word takes its neighbours' room, not their place)."""
    ticks: list[tuple[float, str]] = []
    right = float("-inf")
    for i, (label, width) in enumerate(zip(labels, widths, strict=True)):
        centre = (i + 0.5) * cell
        if centre - width / 2 >= right + gap:
            ticks.append((i + 0.5, label))
            right = centre + width / 2
    return ticks


class Heatmap(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setAspectLocked(False)
        self.plot.invertY(True)
        self.plot.setMenuEnabled(False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(COLOURMAP)
        self.plot.addItem(self.image)
        self.plot.setLabel("left", "query")
        self.plot.setLabel("bottom", "key")
        self.readout = QLabel("hover the map for a value")
        self.matrix = np.zeros((0, 0))
        self.rows: tuple[str, ...] = ()
        self.cols: tuple[str, ...] = ()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.readout)
        self.plot.scene().sigMouseMoved.connect(self._hover)

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
        self._label_axes()
        self.plot.setTitle(title)
        self.plot.autoRange(padding=0)

    def _label_axes(self) -> None:
        """Token labels on both axes; where they would overlap (the keys, side by side along the bottom),
        only every n-th, so that each stays readable whatever the width and zoom."""
        metrics = QFontMetrics(self.plot.getAxis("bottom").style.get("tickFont") or self.font())
        for axis, labels in (("left", self.rows), ("bottom", self.cols)):
            if axis == "bottom" and labels:
                room = max(1.0, self.plot.getPlotItem().vb.width() or self.width() * 0.8)
                ticks = fitting_labels(labels, room / len(labels), [metrics.horizontalAdvance(t) for t in labels])
            else:
                step = max(1, -(-len(labels) // MAX_LABELS[axis]))
                ticks = [(i + 0.5, t) for i, t in enumerate(labels) if i % step == 0]
            self.plot.getAxis(axis).setTicks([ticks])

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.matrix.size:
            self._label_axes()

    def clear_matrix(self) -> None:
        """Show nothing (the sentence was cleared): no stale map of an earlier text."""
        self.matrix, self.rows, self.cols = np.zeros((0, 0), np.float32), (), ()
        self.image.clear()
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setTicks([[]])
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


class HeatmapGrid(pg.GraphicsLayoutWidget):
    clicked = Signal(int, int)  # layer, head

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setBackground(pg.getConfigOption("background"))  # the theme's (apply_theme updates it)
        self.shape = (0, 0)
        self.images: list[list[pg.ImageItem]] = []
        self.boxes: list[list[pg.ViewBox]] = []

    def _build(self, layers: int, heads: int) -> None:
        self.clear()
        self.images, self.boxes = [], []
        size = f"{max(8, self.font().pointSize())}pt"  # follows the presentation zoom
        for head in range(heads):
            self.addLabel(f"head {head}", row=0, col=head + 1, size=size)
        for layer in range(layers):
            self.addLabel(f"layer {layer}", row=layer + 1, col=0, angle=-90, size=size)
            row_images, row_boxes = [], []
            for head in range(heads):
                box = self.addViewBox(row=layer + 1, col=head + 1, lockAspect=True, enableMouse=False, invertY=True)
                box.setMenuEnabled(False)
                image = pg.ImageItem(axisOrder="row-major")
                image.setColorMap(COLOURMAP)
                box.addItem(image)
                image.mouseClickEvent = lambda ev, lh=(layer, head): self.clicked.emit(*lh)  # type: ignore[method-assign]
                row_images.append(image)
                row_boxes.append(box)
            self.images.append(row_images)
            self.boxes.append(row_boxes)
        self.ci.layout.setSpacing(2)
        self.shape = (layers, heads)

    def clear_all(self) -> None:
        self.clear()
        self.images, self.boxes, self.shape = [], [], (0, 0)

    def show_all(self, thumbnails: np.ndarray, signed: bool = False) -> None:
        """``thumbnails``: (layers, heads, q, k), already downsampled for small images. Probabilities are
        scaled per head (0 to its maximum); with ``signed`` (a difference of two models' heads) every head
        shares one scale symmetric around 0, so the heads that changed most stand out."""
        layers, heads = thumbnails.shape[:2]
        if self.shape != (layers, heads):
            self._build(layers, heads)  # only when the model changes
        bound = max(1e-6, float(np.abs(thumbnails).max())) if signed and thumbnails.size else 1.0
        for layer in range(layers):
            for head in range(heads):
                m = thumbnails[layer, head]
                image = self.images[layer][head]
                image.setColorMap(DIVERGING if signed else COLOURMAP)
                image.setImage(m, levels=(-bound, bound) if signed else (0.0, max(1e-6, float(m.max()))))
                self.boxes[layer][head].autoRange(padding=0)
