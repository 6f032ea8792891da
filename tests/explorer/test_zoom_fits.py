"""A talk's zoom never makes a tab scroll sideways: at zoom 4 in a laptop's 1400 × 900 window and at zoom 6 on a
1920 × 1080 projector, with the model library docked beside the tabs, every tab's panel fits the width it is given.
Rows of controls wrap, long prompts wrap, titles are short; before, the lens at zoom 4 in a laptop's window scrolled
sideways with its right column cut."""

import pytest

from tests.conftest import settle_layout

DOCK_WIDTH = 400  # the model library beside the tabs


@pytest.mark.parametrize(("size", "zoom"), [((1400, 900), 4), ((1920, 1080), 6)])
def test_no_tab_scrolls_sideways_at_a_talks_zoom(qtbot, size, zoom):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QDockWidget, QScrollArea

    from explorer.main_window import MainWindow
    from explorer.session import Session
    from explorer.theme import apply_zoom

    win = MainWindow(Session())
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    dock = win.findChild(QDockWidget)
    assert dock.isVisible()  # the library takes its share of the width
    try:
        apply_zoom(QApplication.instance(), zoom)
        # as wide as its longest model name at these zooms (the window restores the width a user left it at)
        win.resizeDocks([dock], [DOCK_WIDTH], Qt.Orientation.Horizontal)
        settle_layout()
        assert abs(dock.width() - DOCK_WIDTH) <= 20
        cut = {}
        for i in range(win.tabs.count()):
            win.tabs.setCurrentIndex(i)
            settle_layout()
            area = win.tabs.widget(i).parentWidget().parentWidget()  # the panel's scroll area (its viewport's parent)
            assert isinstance(area, QScrollArea)
            if area.horizontalScrollBar().maximum() > 0:
                cut[win.tabs.tabText(i)] = (win.tabs.widget(i).minimumSizeHint().width(), area.viewport().width())
        assert not cut, f"tabs wider than their room at zoom {zoom} (needed, given): {cut}"
    finally:
        apply_zoom(QApplication.instance(), 0)
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(20_000)


def test_a_row_of_controls_stays_one_row_where_it_fits_and_wraps_where_it_does_not(qtbot):
    from PySide6.QtWidgets import QProgressBar, QPushButton, QWidget

    from explorer.widgets.flow_layout import FlowLayout

    box = QWidget()
    qtbot.addWidget(box)
    row = FlowLayout(box, spacing=6)
    buttons = [QPushButton(text) for text in ("Build corpus index", "Index all models", "Cancel")]
    for button in buttons:
        row.addWidget(button)
    bar = QProgressBar()
    row.add_stretching(bar)
    box.show()
    wide = sum(b.sizeHint().width() + 6 for b in buttons) + bar.sizeHint().width() + 200
    box.resize(wide, row.heightForWidth(wide))
    settle_layout()
    assert bar.y() == buttons[0].y()  # one row
    assert bar.geometry().right() == box.width() - 1  # the bar takes the rest of it, as a box layout's stretch would
    narrow = buttons[0].sizeHint().width() + 10
    assert box.minimumSizeHint().width() <= max(b.sizeHint().width() for b in [*buttons, bar])
    box.resize(narrow, row.heightForWidth(narrow))
    settle_layout()
    assert len({b.y() for b in buttons}) == 3 and bar.y() > buttons[-1].y()  # each on a line of its own
    assert bar.width() >= bar.sizeHint().width()


def test_the_lens_progress_bar_shows_its_whole_text_under_the_buttons_at_a_talks_zoom(qtbot):
    from PySide6.QtWidgets import QApplication

    from explorer.panels.polysemy.index import CorpusIndexer
    from explorer.session import Session
    from explorer.theme import apply_zoom

    indexer = CorpusIndexer(Session(), "default")
    qtbot.addWidget(indexer)
    indexer.show()
    bar = indexer.progress
    bar.setValue(1000)
    bar.setFormat("✓ 291 sentences sampled")
    try:
        apply_zoom(QApplication.instance(), 4)
        # as narrow as the lens's column may be: its three buttons
        indexer.resize(indexer.minimumSizeHint().width(), indexer.sizeHint().height())
        settle_layout()
        assert indexer.minimumSizeHint().width() <= sum(b.sizeHint().width() for b in
                                                        (indexer.build, indexer.build_all, indexer.cancel)) + 40
        assert bar.y() > indexer.build.y() and bar.width() == indexer.width()  # under them, across the column
        assert bar.width() > bar.fontMetrics().horizontalAdvance("✓ 291 sentences sampled")  # its words whole
    finally:
        apply_zoom(QApplication.instance(), 0)
