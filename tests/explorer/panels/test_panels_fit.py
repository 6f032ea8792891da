"""Every tab in the app's default window, as a first-time user opens it (no model loaded): the whole panel on the
page, no scrolling. (The Fine-tune tab's recorded curves, the tallest page of its results, had made that panel 900
pixels tall whichever page was open, and the status under its form lost its last line.)"""

from tests.conftest import settle_layout


def _settled(qtbot, passes: int = 4) -> None:
    for _ in range(passes):  # (wrapped labels settle over a few layout passes)
        settle_layout()
        qtbot.wait(50)


def _area(widget):
    from PySide6.QtWidgets import QScrollArea

    while not isinstance(widget, QScrollArea):
        widget = widget.parentWidget()
    return widget


def test_every_tab_fits_the_default_window(qtbot, window):
    window.resize(1200, 760)  # the default (a window an earlier test closed may have left its own size kept)
    scrolled = {}
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        _settled(qtbot)
        area = _area(window.tabs.currentWidget())
        bars = area.verticalScrollBar().maximum(), area.horizontalScrollBar().maximum()
        if bars != (0, 0):
            scrolled[window.tabs.tabText(i)] = bars
    assert not scrolled, f"tabs that scroll in the default window (vertical, horizontal): {scrolled}"
    panel = window.finetune  # its status under the form whole, and its results' pages sized each its own
    window.tabs.setCurrentWidget(panel)
    _settled(qtbot)
    status = panel.status
    assert status.text() and status.heightForWidth(status.width()) <= status.height() + 1, status.text()
    panel.results.setCurrentWidget(panel.curves)  # the tallest page may scroll the panel; back on the first, it does not
    _settled(qtbot, 2)
    panel.results.setCurrentIndex(0)
    _settled(qtbot, 2)
    assert _area(panel).verticalScrollBar().maximum() == 0
