"""An attention head's toggle: its number, on the head's colour while the head is shown (the colour of its lines
in the head view, explorer.widgets.head_view), in the font of the window around it.

A style sheet on the button (``QToolButton:checked { background: … }``) coloured it before, and a widget with a
style sheet of its own keeps the font it had when the sheet was set: in a talk the chips stayed in the
application's 9-point font beside 28-pixel type, and a presentation zoom did not reach them."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyleOptionToolButton, QToolButton, QWidget

from explorer.widgets.readable import MARKS, readable, text_on


class HeadChip(QToolButton):
    def __init__(self, head: int, colour: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colour = colour
        self.setText(str(head))
        self.setCheckable(True)

    def shown_colour(self) -> str:
        """The head's colour as its lines have it on this background (explorer.widgets.readable)."""
        return readable(self.colour, self.palette().color(QPalette.ColorRole.Base), MARKS)

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        if not self.isChecked():
            super().paintEvent(event)
            return
        colour = QColor(self.shown_colour())
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(self.rect().adjusted(1, 1, -1, -1), 3, 3)
        painter.setPen(QColor(text_on(colour)))
        painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.text())
        if self.hasFocus():
            option = QStyleOptionToolButton()
            self.initStyleOption(option)
            self.style().drawPrimitive(QStyle.PrimitiveElement.PE_FrameFocusRect, option, painter, self)
        painter.end()
