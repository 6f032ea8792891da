"""A talk's zoom never makes a tab scroll sideways: at zoom 4 and 6 in a laptop's 1400 × 900 window and at zoom 6
on a 1920 × 1080 projector, with the model library docked beside the tabs, every tab's panel fits the width it is given.
Rows of controls too wide for a talk's zoom are split in two, long prompts wrap, titles are short; before, the lens
at zoom 4 in a laptop's window scrolled sideways with its right column cut."""

import pytest

from tests.conftest import settle_layout

DOCK_WIDTH = 400  # the model library beside the tabs


@pytest.mark.parametrize(("size", "zoom"), [((1400, 900), 4), ((1400, 900), 6), ((1920, 1080), 6)])
def test_no_tab_scrolls_sideways_at_a_talks_zoom(qtbot, size, zoom):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QDockWidget, QScrollArea, QTabWidget

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
            # and each page of the tabs inside it, shown as a user opens it: a hidden page keeps the size its layout
            # had before the zoom until it is shown (the Fine-tune tab's recorded curves made it scroll only then)
            for inner in win.tabs.widget(i).findChildren(QTabWidget):
                for j in range(inner.count()):
                    inner.setCurrentIndex(j)
                    settle_layout()
                    if area.horizontalScrollBar().maximum() > 0:
                        name = f"{win.tabs.tabText(i)}, {inner.tabText(j)}"
                        cut[name] = (win.tabs.widget(i).minimumSizeHint().width(), area.viewport().width())
                inner.setCurrentIndex(0)
            settle_layout()
            if area.horizontalScrollBar().maximum() > 0:
                cut[win.tabs.tabText(i)] = (win.tabs.widget(i).minimumSizeHint().width(), area.viewport().width())
        assert not cut, f"tabs wider than their room at zoom {zoom} (needed, given): {cut}"
    finally:
        apply_zoom(QApplication.instance(), 0)
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(20_000)


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


@pytest.mark.parametrize(("zoom", "shown_before_the_zoom"), [(0, True), (4, True), (4, False)])
def test_the_recorded_curves_under_the_fine_tuning_plots_are_readable(qtbot, zoom, shown_before_the_zoom):
    """The Recorded curves page shares the Fine-tune tab's column with three plots: its plot was squeezed to a strip
    (its y label cut to "alidation a") and the summary lay over the plot's axis; now the tab scrolls instead."""
    from PySide6.QtWidgets import QApplication

    from explorer.main_window import MainWindow
    from explorer.session import Session
    from explorer.theme import apply_zoom

    win = MainWindow(Session())
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    win.tabs.setCurrentWidget(win.finetune)
    curves = win.finetune.curves
    win.finetune.results.setCurrentWidget(curves)
    qtbot.waitUntil(lambda: "pre-training buys" in curves.summary.text(), timeout=20_000)
    if not shown_before_the_zoom:  # a zoom while another page is shown: the curves get it when they are shown
        win.finetune.results.setCurrentIndex(0)
    try:
        apply_zoom(QApplication.instance(), zoom)
        settle_layout()
        win.finetune.results.setCurrentWidget(curves)
        settle_layout()
        plot = curves.plot
        label = plot.getPlotItem().getAxis("left").labelText
        assert label.startswith("validation")
        assert plot.height() >= plot.fontMetrics().horizontalAdvance(label) + 40  # the rotated label whole
        summary = curves.summary

        def laid_out() -> bool:  # the summary under the plot, not over its axis, with every line of it
            below = summary.geometry()
            return below.top() >= plot.geometry().bottom() and below.height() >= summary.heightForWidth(below.width())

        qtbot.waitUntil(laid_out, timeout=5_000)
    finally:
        apply_zoom(QApplication.instance(), 0)
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(20_000)
