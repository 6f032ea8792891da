"""A layout that places its widgets left to right and wraps them onto the next line when the row is full
(Qt's Flow Layout example): a sentence's word buttons stay all on screen at any width or zoom, where a
row of them was cut off or had to be scrolled. It is a layout of Python's: each pass of it runs on the
window's thread, so rows of controls stay in Qt's own layouts (with the lens's controls flowing, a zoom of the lens
made twice the Python calls; bench/robustness/RESULTS.md).

Its items are Python's list, not a C++ layout's: Qt's ``QLayout`` leaves deleting them to the subclass, so the layout
deletes those it still holds when it is destroyed, and the caller of ``takeAt`` deletes what it took
(``layout_items.empty_layout``)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QWidget

from explorer.widgets.layout_items import delete_item


class FlowLayout(QLayout):
    def __init__(self, parent: QWidget | None = None, spacing: int = 2) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        items = self._items  # (not self: the slot runs as the layout is destroyed, and must not keep it alive)
        self.destroyed.connect(lambda *_: _delete_all(items))
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 (Qt's names)
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # type: ignore[override]  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # type: ignore[override]  # noqa: N802
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _place(self, rect: QRect, move: bool) -> int:
        """Lay the items out in ``rect`` (only measure when not ``move``); returns the height used."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        gap = self.spacing()
        x, y, line = area.x(), area.y(), 0
        for item in self._items:
            if item.isEmpty():  # a hidden widget takes no room
                continue
            hint = item.sizeHint()
            if line and x + hint.width() > area.right() + 1:  # the row is full: the next line
                x, y, line = area.x(), y + line + gap, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + gap
            line = max(line, hint.height())
        return y + line - rect.y() + m.bottom()


def _delete_all(items: list[QLayoutItem]) -> None:
    """A destroyed FlowLayout's items: deleted, as a C++ layout's destructor deletes its own."""
    while items:
        delete_item(items.pop())
