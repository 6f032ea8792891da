"""The head view (after bertviz): the tokens in two columns, a line from each query token (left) to
each key token (right) it attends to, its weight the attention probability, one colour per head.
Hovering a token shows only its lines; lines below the threshold are not drawn. Painted directly
(lines batched by head and weight step, no item per line), so long inputs stay responsive."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QLineF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontInfo, QFontMetrics, QImage, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.widgets.readable import MARKS, mix, readable_all

HEAD_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
                "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"]
SEGMENT_BACKGROUNDS = ["#e8f0fe", "#fdecea"]  # sentence A, sentence B
BUCKETS = 16  # line weights are drawn in this many steps of width and opacity
SMOOTH_FROM = 4  # buckets below this (weights under 1/4: the many faint lines) are drawn without antialiasing
MAX_LINES = 3000  # long inputs: only the strongest lines (Qt draws ~20k lines a second here)


class HeadView(QWidget):
    hovered = Signal(int)  # the query token under the mouse (-1: none)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tokens: tuple[str, ...] = ()
        self.segments: tuple[int, ...] = ()
        self.weights = np.zeros((0, 0, 0))  # (heads, q, k) of the shown layer
        self.heads: list[int] = []
        self.threshold = 0.0  # 0: automatic, lines above uniform attention (1/n) only
        self.focus = -1  # hovered query token
        self._picture: tuple[tuple[int, int, int, str], QImage] | None = None
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumHeight(200)

    def show_layer(self, tokens: tuple[str, ...], segments: tuple[int, ...], weights: np.ndarray,
                   heads: list[int]) -> None:
        self.tokens, self.segments, self.weights, self.heads = tokens, segments, weights, heads
        self.update()

    def set_heads(self, heads: list[int]) -> None:
        self.heads = heads
        self.update()

    def set_threshold(self, value: float) -> None:
        self.threshold = value
        self.update()

    def cutoff(self) -> float:
        """The weakest weight drawn: the threshold, or automatically anything above an even spread (1/n):
        the faint lines of a diffuse head are barely visible and cost as much to draw as strong ones."""
        if self.threshold > 0:
            return self.threshold
        n = self.weights.shape[-1] if self.weights.ndim == 3 else 0
        return 1.0 / n if n else 0.0

    def _row_height(self) -> float:
        n = max(1, len(self.tokens))
        most = max(22.0, 1.35 * QFontInfo(self.font()).pixelSize())  # big type (a talk) gets taller rows
        return max(0.5, min(most, (self.height() - 20) / n))

    def _columns(self) -> tuple[float, float]:
        width = self.width()
        return width * 0.3, width * 0.7

    def lines(self) -> list[tuple[int, int, int, float]]:
        """(head, query, key, weight) of every line drawn now (threshold and hover applied; on long
        inputs only the MAX_LINES strongest)."""
        head_of, q, k, weight = self._line_arrays()
        return list(zip(head_of.tolist(), q.tolist(), k.tolist(), weight.tolist(), strict=True))

    def _line_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        heads = [h for h in self.heads if h < self.weights.shape[0]] if self.weights.ndim == 3 else []
        if not heads or self.weights.size == 0:
            empty = np.zeros(0, dtype=int)
            return empty, empty, empty, np.zeros(0)
        w = self.weights[heads]  # (heads, q, k)
        if 0 <= self.focus < w.shape[1]:
            w = np.where(np.arange(w.shape[1])[None, :, None] == self.focus, w, 0.0)
        which, q, k = np.nonzero(w >= max(self.cutoff(), 1e-9))
        weight = w[which, q, k]
        if len(weight) > MAX_LINES:
            keep = np.argpartition(-weight, MAX_LINES)[:MAX_LINES]
            which, q, k, weight = which[keep], q[keep], k[keep], weight[keep]
        return np.asarray(heads)[which], q, k, weight

    def update(self) -> None:  # type: ignore[override]
        self._picture = None  # something shown changed: draw it again
        super().update()

    def paintEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        """Draw into an image once per change; a repaint for another reason (a relayout, an expose)
        only copies it."""
        key = (self.width(), self.height(), self.palette().base().color().rgb(), self.font().key())
        if self._picture is None or self._picture[0] != key:
            ratio = self.devicePixelRatioF()
            image = QImage(int(self.width() * ratio), int(self.height() * ratio),
                           QImage.Format.Format_ARGB32_Premultiplied)
            image.setDevicePixelRatio(ratio)
            painter = QPainter(image)
            self._draw(painter)
            painter.end()
            self._picture = (key, image)
        QPainter(self).drawImage(0, 0, self._picture[1])

    def _draw(self, painter: QPainter) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), self.palette().base())
        if not self.tokens:
            painter.setPen(self.palette().text().color())
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "type a sentence")
            return
        row = self._row_height()
        left, right = self._columns()
        font = QFont(self.font())  # the widget's (zoomed, or a talk's big) font, smaller only if rows are tight
        font.setPixelSize(int(max(7.0, min(QFontInfo(self.font()).pixelSize(), row * 0.8))))
        painter.setFont(font)
        metrics = QFontMetrics(font)
        top = 10.0
        every = max(1, int(np.ceil(9 / row)))  # long inputs: a label every few rows, all lines
        for i, token in enumerate(self.tokens):
            if i % every and i != self.focus:
                continue
            y = top + i * row
            segment = self.segments[i] if i < len(self.segments) else 0
            for x, align in ((left - 8, Qt.AlignmentFlag.AlignRight), (right + 8, Qt.AlignmentFlag.AlignLeft)):
                w = metrics.horizontalAdvance(token) + 6
                rect = QRectF(x - w if align == Qt.AlignmentFlag.AlignRight else x, y, w, max(row, 9.0))
                painter.fillRect(rect, QColor(SEGMENT_BACKGROUNDS[segment % 2]))
                if i == self.focus and align == Qt.AlignmentFlag.AlignRight:
                    painter.fillRect(rect, QColor(255, 215, 0, 120))
                painter.setPen(QColor("#111111"))  # dark on the light segment colours, in either theme
                painter.drawText(rect, align | Qt.AlignmentFlag.AlignVCenter, token)
        # lines share a pen per (head, weight step): a few drawLines calls instead of one call per line,
        # grouped with numpy (a keystroke's ~1,000 lines grouped one by one in Python took ~5 ms)
        head_of, q, k, weight = self._line_arrays()
        bucket = np.minimum(BUCKETS - 1, (weight * BUCKETS).astype(int))
        y_q, y_k = top + (q + 0.5) * row, top + (k + 0.5) * row
        order = np.lexsort((head_of, bucket))  # the strong lines are drawn last, on top
        groups = np.flatnonzero(np.diff(bucket[order] * 1024 + head_of[order])) + 1
        thick = max(1.0, QFontInfo(self.font()).pixelSize() / 14)  # big type, thick lines (a talk)
        # opaque pens, their colour mixed with the background by weight: translucent lines cost 5-10x more
        # to draw (~30 ms a redraw at a few hundred lines)
        base = self.palette().base().color()
        heads = readable_all(HEAD_COLOURS, base, MARKS)  # (a navy head's lines faded into a dark background)
        x0, x1 = left - 4, right + 4
        for group in np.split(order, groups) if len(order) else []:
            head, step = int(head_of[group[0]]), int(bucket[group[0]])
            level = (step + 0.5) / BUCKETS
            # (the strongest step in the head's own colour: the readable one, explorer.widgets.readable)
            colour = mix(QColor(heads[head % len(heads)]), base, min(1.0, 0.15 + 0.85 * (step + 1) / BUCKETS))
            painter.setPen(QPen(colour, max(0.5, 4 * level) * thick))
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, step >= SMOOTH_FROM)  # faint ones: plain
            painter.drawLines([QLineF(x0, a, x1, b) for a, b in zip(y_q[group].tolist(), y_k[group].tolist(), strict=True)])

    def mouseMoveEvent(self, event: object) -> None:  # noqa: N802
        pos = event.position()  # type: ignore[attr-defined]
        left, _ = self._columns()
        index = int((pos.y() - 10) // self._row_height()) if pos.x() < left else -1
        index = index if 0 <= index < len(self.tokens) else -1
        if index != self.focus:
            self.focus = index
            self.hovered.emit(index)
            self.update()

    def leaveEvent(self, event: object) -> None:  # noqa: N802
        self.focus = -1
        self.hovered.emit(-1)
        self.update()
