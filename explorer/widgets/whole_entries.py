"""A list of entries in one table cell ("banks 0.87, securities 0.80, …") cut after its last entry that fits,
never inside one: Qt's own eliding ends a long list mid-entry ("lender 0.…"), a number cut in half on a slide."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QStyle, QStyledItemDelegate

SEPARATOR = ", "
MORE = "…"


def whole_entries(text: str, metrics: QFontMetrics, width: int) -> str:
    """``text`` if it fits in ``width`` pixels, else its first entries that fit followed by ", …" (just "…" when
    not even the first entry does)."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    entries = text.split(SEPARATOR)
    while len(entries) > 1:
        entries.pop()
        cut = SEPARATOR.join(entries) + SEPARATOR + MORE
        if metrics.horizontalAdvance(cut) <= width:
            return cut
    return MORE


class WholeEntries(QStyledItemDelegate):
    """Draws each cell of its column with ``whole_entries`` for the cell's width (its text is unchanged: a copy
    or a CSV export has the whole list)."""

    def initStyleOption(self, option: Any, index: Any) -> None:  # noqa: N802 - Qt's name
        super().initStyleOption(option, index)
        widget = option.widget
        style = widget.style() if widget is not None else None
        margin = (style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, widget) + 1) if style else 4
        option.text = whole_entries(option.text, option.fontMetrics, option.rect.width() - 2 * margin)
