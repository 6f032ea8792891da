"""A layers × tokens table of colours and words: the lens grid (what every layer predicts at every
position, coloured by a measure) and the causal-tracing map (how much of a prediction each restored
state brings back). The final layer is the top row; a cell's colour says the measure, its text the word."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem

from explorer.widgets.heatmap import COLOURMAP, DIVERGING
from explorer.widgets.readable import text_on

REVERSED = {"entropy", "kl", "rank"}  # measures where less is "more decided": drawn light-to-dark the other way


def layer_label(layer: int, last: int) -> str:
    return "output" if layer == last else ("embeddings" if layer == 0 else f"layer {layer}")


def cell_colours(values: np.ndarray, *, signed: bool = False, reverse: bool = False, log: bool = False,
                 value_range: tuple[float, float] | None = None) -> list[list[QColor | None]]:
    """One colour per value (None where the value is missing): viridis over ``value_range`` (default: the
    finite values' own range), or a diverging map symmetric around 0 for a difference; ``log`` for ranks
    (1 to thousands)."""
    v = np.asarray(values, np.float64)
    finite = np.isfinite(v)
    shown = np.where(finite, np.log10(np.maximum(v, 1.0)) if log else v, 0.0)
    if signed:
        span = float(np.abs(shown[finite]).max()) if finite.any() else 1.0
        scaled = 0.5 + shown / (2 * span if span > 0 else 1.0)
        cmap = DIVERGING
    else:
        lo = float(shown[finite].min()) if finite.any() else 0.0
        hi = float(shown[finite].max()) if finite.any() else 1.0
        if value_range is not None:  # an absolute scale: a probability of 5% is dark whatever its neighbours
            lo, hi = value_range
        scaled = (shown - lo) / (hi - lo) if hi > lo else np.full_like(shown, 0.5)
        if reverse:
            scaled = 1.0 - scaled
        cmap = COLOURMAP
    table = cmap.map(np.clip(scaled, 0.0, 1.0).ravel(), mode="qcolor")
    out: list[list[QColor | None]] = []
    for r in range(v.shape[0]):
        out.append([table[r * v.shape[1] + c] if finite[r, c] else None for c in range(v.shape[1])])
    return out


class LayerTokenTable(QTableWidget):
    """Rows: layers, the output on top; columns: tokens. ``cell_clicked(layer, position)``."""

    cell_clicked = Signal(int, int)

    def __init__(self) -> None:
        super().__init__(0, 0)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.layers = 0
        self.values = np.zeros((0, 0))
        self.words: list[list[str]] = []  # [layer][position]: the word a cell names ("" for none)
        self.tokens: tuple[str, ...] = ()
        self.labels: list[str] = []  # each row's name, bottom first
        self.cellClicked.connect(lambda row, col: self.cell_clicked.emit(self.layers - 1 - row, col))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """No taller than its rows (Qt's table asks for 192 pixels whatever it holds), and never taller than Qt's:
        a page of the lab has a height for its width, which a vertical layout gives it as its *smallest* height, so
        the empty room under a six-row attribution took the masked view's bars down to two rows."""
        hint = super().sizeHint()
        if self.rowCount() == 0:
            return hint
        frame = 2 * self.frameWidth()
        bar = self.horizontalScrollBar().sizeHint().height() if self.horizontalHeader().length() > self.viewport(
            ).width() else 0
        rows = self.horizontalHeader().sizeHint().height() + self.verticalHeader().length() + bar + frame
        return QSize(hint.width(), min(hint.height(), rows))

    def export_rows(self) -> list[list[str]]:
        """The numbers behind the colours (CSV): a row per layer, the output first; "word value" per cell."""
        rows = [["layer", *self.tokens]]
        for layer in range(self.layers - 1, -1, -1):
            cells = [f"{self.words[layer][t]} {v:.6g}".strip() if self.words else f"{v:.6g}"
                     for t, v in enumerate(self.values[layer])]
            rows.append([self.labels[layer], *cells])
        return rows

    def show_cells(self, texts: list[list[str]], values: np.ndarray, tokens: tuple[str, ...], tips: list[list[str]],
                   *, signed: bool = False, reverse: bool = False, log: bool = False,
                   value_range: tuple[float, float] | None = None, words: list[list[str]] | None = None,
                   labels: list[str] | None = None) -> None:
        """``texts``/``values``/``tips``: [layer][position], layer 0 = embeddings (drawn at the bottom);
        ``words``: the word each cell names, for the export beside its value; ``labels``: each row's name,
        bottom first (default: embeddings, layer 1, …, output)."""
        layers, n = values.shape
        self.layers, self.values, self.tokens, self.words = layers, np.asarray(values), tuple(tokens), words or []
        self.labels = labels or [layer_label(layer, layers - 1) for layer in range(layers)]
        colours = cell_colours(values, signed=signed, reverse=reverse, log=log, value_range=value_range)
        self.clear()
        self.setRowCount(layers)
        self.setColumnCount(n)
        self.setHorizontalHeaderLabels([t.strip() or "␣" for t in tokens])
        self.setVerticalHeaderLabels(self.labels[::-1])
        for layer in range(layers):
            row = layers - 1 - layer
            for t in range(n):
                item = QTableWidgetItem(texts[layer][t])
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                colour = colours[layer][t]
                if colour is not None:
                    item.setBackground(QBrush(colour))
                    item.setForeground(QBrush(QColor(text_on(colour))))
                item.setToolTip(tips[layer][t])
                self.setItem(row, t, item)
        self.updateGeometry()  # (its size hint is its rows': the page's layout asks again)


def fit_one_row(table: LayerTokenTable) -> None:
    """A one-row table as tall as its header and its row (and a scroll bar where its cells are wider than it)."""
    header = table.horizontalHeader()
    rows = header.height() + table.rowHeight(0) + 2 * table.frameWidth()
    wide = header.length() + table.verticalHeader().width() > table.width()  # a scroll bar under it
    table.setFixedHeight(rows + (table.horizontalScrollBar().sizeHint().height() if wide else 0))


def value_text(value: float, measure: str) -> str:
    if not math.isfinite(value):
        return "–"
    if measure == "probability":
        return f"{value:.1%}" if value < 0.095 else f"{value:.0%}"
    if measure == "rank":
        return f"#{value:,.0f}"
    return f"{value:.2f}"
