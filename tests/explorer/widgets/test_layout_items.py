"""Layout items taken out of a layout, or left in a FlowLayout that goes, are deleted: each was a C++ object kept for
good (the chaos bench found thousands a minute, the lens's word buttons and the masked LM's)."""

from __future__ import annotations

import shiboken6
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from explorer.widgets.flow_layout import FlowLayout
from explorer.widgets.layout_items import empty_layout


def _filled(layout_cls: type, owner: QWidget) -> tuple[object, list[object]]:
    layout = layout_cls(owner)
    for word in ("bank", "river", "money"):
        layout.addWidget(QToolButton(text=word))
    if layout_cls is QHBoxLayout:
        layout.addStretch(1)  # a spacer item: PySide does not free it with its wrapper
    return layout, [layout.itemAt(i) for i in range(layout.count())]


def test_emptying_a_box_layout_deletes_its_items_and_buttons(qtbot) -> None:
    owner = QWidget()
    qtbot.addWidget(owner)
    layout, items = _filled(QHBoxLayout, owner)
    buttons = [item.widget() for item in items if item.widget() is not None]
    empty_layout(layout)
    assert layout.count() == 0
    assert not any(shiboken6.isValid(item) for item in items)  # the spacer too
    qtbot.waitUntil(lambda: not any(shiboken6.isValid(b) for b in buttons))


def test_emptying_a_flow_layout_deletes_its_items(qtbot) -> None:
    owner = QWidget()
    qtbot.addWidget(owner)
    layout, items = _filled(FlowLayout, owner)
    empty_layout(layout)
    assert layout.count() == 0
    assert not any(shiboken6.isValid(item) for item in items)


def test_a_flow_layout_that_goes_deletes_the_items_it_holds(qtbot) -> None:
    owner = QWidget()
    layout, items = _filled(FlowLayout, owner)
    assert all(shiboken6.isValid(item) for item in items)
    shiboken6.delete(owner)  # its layout with it, as a closed panel's
    assert not shiboken6.isValid(layout)
    assert not any(shiboken6.isValid(item) for item in items)


def test_a_flow_layout_still_lays_out_what_it_holds(qtbot) -> None:
    owner = QWidget()
    qtbot.addWidget(owner)
    layout, items = _filled(FlowLayout, owner)
    owner.resize(60, 200)  # too narrow for one row: the words wrap
    owner.show()
    qtbot.waitExposed(owner)
    rows = {item.geometry().y() for item in items}
    assert len(rows) > 1
