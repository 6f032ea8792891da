"""The lens grid's cells are never cut: each column is as wide as its widest word or token and each row as tall as
its text, when the cells are set, after a zoom while the grid is shown, and after a zoom while it was hidden (on
another tab) once it is shown again. (Written for a grid that sized its sections itself, once, instead of by its
headers: that change was reverted by its bench's rule, bench/robustness/CHAOS-HISTORY.md, the fifty-fourth session; the
test holds for both, and failed for each half of that change removed.)"""

import numpy as np
import pytest
from PySide6.QtGui import QFont, QFontMetrics


def _grid(qtbot):
    from explorer.widgets.lens_grid import LayerTokenTable

    table = LayerTokenTable()
    qtbot.addWidget(table)
    texts = [["the", "bank", "riverside embankment"], ["of", "money", "x"]]
    tokens = ("She", "sat", "by")
    table.show_cells(texts, np.array([[0.1, 0.5, 0.9], [0.2, 0.3, 0.4]]), tokens, [["tip"] * 3] * 2)
    return table


def _cut(table) -> list[str]:
    """The cells whose text is wider or taller than their section (the headers' own labels too)."""
    metrics = QFontMetrics(table.font())
    cut = []
    for column in range(table.columnCount()):
        width = table.columnWidth(column)
        for row in range(table.rowCount()):
            text = table.item(row, column).text()
            if metrics.horizontalAdvance(text) > width or metrics.height() > table.rowHeight(row):
                cut.append(f"{text!r} in {width} × {table.rowHeight(row)}")
        heading = table.horizontalHeaderItem(column).text()
        if metrics.horizontalAdvance(heading) > width:
            cut.append(f"heading {heading!r} in {width}")
    return cut


def test_cells_fit_when_set(qtbot):
    table = _grid(qtbot)
    table.show()
    qtbot.waitExposed(table)
    assert not _cut(table)
    # each column fitted to its own words: the long word's column is the widest
    assert table.columnWidth(2) > table.columnWidth(0)


@pytest.mark.parametrize("shown", [True, False], ids=["shown", "hidden-then-shown"])
def test_cells_fit_after_a_zoom(qtbot, shown):
    table = _grid(qtbot)
    if shown:
        table.show()
        qtbot.waitExposed(table)
    before = table.columnWidth(2), table.rowHeight(0)
    font = QFont(table.font())
    font.setPointSizeF(font.pointSizeF() * 1.15 ** 6)  # a talk's zoom
    table.setFont(font)
    if not shown:
        table.show()
        qtbot.waitExposed(table)
    assert table.columnWidth(2) > before[0] and table.rowHeight(0) > before[1]
    assert not _cut(table)
