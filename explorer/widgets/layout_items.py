"""Emptying a layout without leaking its items. ``QLayout.takeAt`` hands the caller a layout item it must delete:
PySide frees a box layout's widget item with its wrapper, but not a stretch's spacer item, and no item a layout
of Python's (``FlowLayout``) took; each was a C++ object kept for good. The chaos bench's pointer scan found ~2,000
of them a minute, memory no word pointed at (bench/robustness/RESULTS.md, "Chaos in the window")."""

from __future__ import annotations

import shiboken6
from PySide6.QtWidgets import QLayout, QLayoutItem


def delete_item(item: QLayoutItem | None) -> None:
    """Delete a layout item taken from its layout (its widget, if any, is not touched)."""
    if item is not None and shiboken6.isValid(item):
        shiboken6.delete(item)


def empty_layout(layout: QLayout) -> None:
    """Take every item out of ``layout`` and delete it; each item's widget is hidden and deleted later (its
    queued events first), a nested layout's items the same way."""
    while layout.count():
        item = layout.takeAt(0)
        if item is None:
            break
        widget = item.widget()
        if widget is not None:
            widget.hide()
            widget.deleteLater()
        nested = item.layout()
        if nested is not None:
            empty_layout(nested)
        delete_item(item)
