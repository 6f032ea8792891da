"""Predictions drawn as a real widget, readable on a projector: for each section (a [MASK], or the next
token), the likeliest words with a bar as long as the probability and the probability beside it. The
top word is large. Fonts and bar thickness follow the widget's font, so the presentation zoom and a
talk's big type scale everything; the colours come from the palette (light, dark or high contrast)."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QScrollArea, QSizePolicy, QWidget

BAR = "#4c78a8"
TOP_SCALE = 1.45  # the likeliest word's type, relative to the body
MIN_FULL_SCALE = 0.1  # a full-width bar means this probability or the section's highest, whichever is more


def percent(p: float) -> str:
    """A probability as a percentage a reader can compare: one decimal from 0.1% up, two significant digits
    below (a flat prediction over 30,000 tokens reads "0.0033%", not "0.0%" against "0.0%")."""
    if p >= 0.001 or p <= 0:
        return f"{p:.1%}"
    return f"{100 * p:.2g}%" if p >= 1e-6 else "<0.0001%"


class ProbabilityBars(QWidget):
    clicked = Signal(int, int)  # (section, row): a prediction was clicked
    resized = Signal()  # its height changed (new results): the scroll area ends its view at a whole row again

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = ""
        self.message = ""
        self.sections: list[tuple[str, list[tuple[str, float]]]] = []
        self._rows: list[tuple[QRectF, int, int]] = []  # clickable row rectangles
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        self.setMouseTracking(True)

    # ------------------------------------------------------------ content

    def set_results(self, heading: str, sections: list[tuple[str, list[tuple[str, float]]]]) -> None:
        self.heading, self.sections, self.message = heading, sections, ""
        self._changed()

    def show_message(self, heading: str, message: str) -> None:
        self.heading, self.sections, self.message = heading, [], message
        self._changed()

    def clear(self) -> None:
        self.heading, self.sections, self.message = "", [], ""
        self._changed()

    def toPlainText(self) -> str:  # noqa: N802 - reads like the text views it replaced
        lines = [self.heading] if self.heading else []
        if self.message:
            lines.append(self.message)
        for title, rows in self.sections:
            lines.append(title)
            lines += [f"{token}\t{percent(p)}" for token, p in rows]
        return "\n".join(lines)

    def _changed(self) -> None:
        height = int(self._height())
        if height != self.minimumHeight():
            self.setMinimumHeight(height)
            self.resized.emit()
        self.updateGeometry()
        self.update()

    # ------------------------------------------------------------ geometry

    def _fonts(self) -> tuple[QFont, QFont, QFont]:
        body = QFont(self.font())
        bold = QFont(body)
        bold.setBold(True)
        top = QFont(bold)
        if body.pixelSize() > 0:
            top.setPixelSize(int(body.pixelSize() * TOP_SCALE))
        else:
            top.setPointSizeF(body.pointSizeF() * TOP_SCALE)
        return body, bold, top

    def _lines(self) -> tuple[float, float]:
        """A row's height and the top row's (its word in bigger type)."""
        body, _, top = self._fonts()
        return QFontMetricsF(body).height() * 1.3, QFontMetricsF(top).height() * 1.25

    def row_ends(self) -> list[float]:
        """Where each row of bars (or the message) ends, from the widget's top, as ``paintEvent`` lays them out."""
        return self._walk()[0]

    def _height(self) -> float:
        return self._walk()[1] + 4.0

    def _walk(self) -> tuple[list[float], float]:
        """The rows' ends and where the last section's space ends."""
        line, top_line = self._lines()
        y, ends = 4.0, []
        if self.heading:
            y += line
        if self.message:
            y += line * max(1, len(self.message) // 60 + 1)
            ends.append(y)
        for title, rows in self.sections:
            y += line if title else 0
            for r in range(len(rows)):
                y += top_line if r == 0 else line
                ends.append(y)
            y += line * 0.4
        return ends, y

    def changeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        """A new font (the presentation zoom, a talk's type): the rows' heights change with it."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._changed()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(320, int(self._height()))

    # ------------------------------------------------------------ drawing

    def paintEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), self.palette().base())
        text_colour = self.palette().text().color()
        body, bold, top = self._fonts()
        fm, fm_top = QFontMetricsF(body), QFontMetricsF(top)
        line, top_line = fm.height() * 1.3, fm_top.height() * 1.25
        width = float(self.width())
        y = 4.0
        painter.setPen(text_colour)
        if self.heading:
            painter.setFont(bold)
            painter.drawText(QRectF(6, y, width - 12, line), Qt.AlignmentFlag.AlignVCenter, self.heading)
            y += line
        if self.message:
            painter.setFont(body)
            rect = QRectF(6, y, width - 12, self.height() - y)
            painter.drawText(rect, Qt.TextFlag.TextWordWrap, self.message)
        self._rows = []
        label_w = max([fm_top.horizontalAdvance(rows[0][0]) for _, rows in self.sections if rows]
                      + [fm.horizontalAdvance(t) for _, rows in self.sections for t, _ in rows[1:]] + [40.0]) + 16
        label_w = min(label_w, width * 0.45)
        number_w = fm.horizontalAdvance("<0.0001%") + 12
        bar_max = max(30.0, width - label_w - number_w - 12)
        for s, (title, rows) in enumerate(self.sections):
            scale = bar_max / max([p for _, p in rows] + [MIN_FULL_SCALE])  # flat predictions still show bars
            if title:
                painter.setFont(body)
                painter.setPen(text_colour)
                painter.drawText(QRectF(6, y, width - 12, line), Qt.AlignmentFlag.AlignVCenter, title)
                y += line
            for r, (token, p) in enumerate(rows):
                h = top_line if r == 0 else line
                painter.setFont(top if r == 0 else body)
                painter.setPen(text_colour)
                label = QRectF(6, y, label_w - 12, h)
                painter.drawText(label, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                                 (QFontMetricsF(top if r == 0 else body)).elidedText(token, Qt.TextElideMode.ElideRight,
                                                                                      label_w - 12))
                thickness = h * (0.62 if r == 0 else 0.55)
                bar_w = max(2.0, scale * max(0.0, min(1.0, p)))
                painter.fillRect(QRectF(label_w, y + (h - thickness) / 2, bar_w, thickness), QColor(BAR))
                painter.setFont(bold if r == 0 else body)
                painter.drawText(QRectF(label_w + bar_w + 8, y, number_w, h), Qt.AlignmentFlag.AlignVCenter, percent(p))
                self._rows.append((QRectF(0, y, width, h), s, r))
                y += h
            y += line * 0.4
        painter.end()

    def mousePressEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        pos = event.position()  # type: ignore[attr-defined]
        for rect, section, row in self._rows:
            if rect.contains(pos):
                self.clicked.emit(section, row)
                return

    def mouseMoveEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        pos = event.position()  # type: ignore[attr-defined]
        over = any(rect.contains(pos) for rect, _, _ in self._rows)
        self.setCursor(Qt.CursorShape.PointingHandCursor if over else Qt.CursorShape.ArrowCursor)


class _WholeRows(QScrollArea):
    """A scroll area for bars that ends its view at a whole row: a box shorter than its bars showed the last row
    cut in half (on a talk's slide, "london 0.5%" as a line of half letters above the lab)."""

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.fit_rows()

    def fit_rows(self) -> None:
        bars = self.widget()
        if not isinstance(bars, ProbabilityBars):
            return
        room = self.height() - 2 * self.frameWidth()
        ends = bars.row_ends()
        if not ends or bars.minimumHeight() <= room:
            self.setViewportMargins(0, 0, 0, 0)
            return
        shown = max([end for end in ends if end <= room] + [0.0])
        self.setViewportMargins(0, 0, 0, math.ceil(room - shown) if shown > 0 else 0)


def scrolling(widget: QWidget) -> QScrollArea:
    """The bars in a scroll area (many [MASK]s scroll instead of squeezing), its view ending at a whole row."""
    area = _WholeRows()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.StyledPanel)
    if isinstance(widget, ProbabilityBars):
        widget.resized.connect(area.fit_rows)
    return area
