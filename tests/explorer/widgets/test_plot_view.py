"""The presentation zoom's font on the plots: the ones shown take it at once, a hidden one as it is shown."""

import pytest


@pytest.fixture
def zoom_plots():
    """``zoom_plots(points)``: the plots' font set as the zoom sets it; the font of before is put back after."""
    from PySide6.QtGui import QFont

    from explorer.widgets.plot_view import _PLOT_FONT, set_plot_font

    before = list(_PLOT_FONT)

    def zoom(points: float) -> None:
        big = QFont()
        big.setPointSizeF(points)
        set_plot_font(big)

    yield zoom
    _PLOT_FONT[:] = before


def test_a_zoom_reaches_shown_plots_at_once_and_a_hidden_plot_as_it_is_shown(qtbot, zoom_plots):
    import pyqtgraph as pg

    from explorer.widgets.plot_view import without_background_cache

    shown, hidden = (without_background_cache(pg.PlotWidget()) for _ in range(2))
    for view in (shown, hidden):
        qtbot.addWidget(view)
    shown.show()
    qtbot.waitExposed(shown)
    zoom_plots(23.0)

    def size(view: pg.PlotWidget) -> float:
        font = view.getPlotItem().getAxis("left").style["tickFont"]
        return font.pointSizeF() if font is not None else -1.0

    assert size(shown) == 23.0
    assert size(hidden) != 23.0  # nobody sees it: its axes are not laid out again for the new font…
    hidden.show()
    assert size(hidden) == 23.0  # … until it is shown
    late = without_background_cache(pg.PlotWidget())  # a plot made after the zoom takes it too, when shown
    qtbot.addWidget(late)
    late.show()
    assert size(late) == 23.0
    exported = without_background_cache(pg.PlotWidget())  # made after the zoom, grabbed without being shown
    qtbot.addWidget(exported)
    exported.grab()
    assert size(exported) == 23.0


def test_a_plots_options_menu_opens_in_the_zooms_font_and_is_left_alone_until_then(qtbot):
    """pyqtgraph's "Plot Options" menu and its forms are hidden windows of each plot: the zoom does not lay them out
    again each time (a cost for every plot of the window), and the menu takes the zoom's font as it opens."""
    import pyqtgraph as pg
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QApplication

    from explorer.widgets.plot_view import without_background_cache

    view = without_background_cache(pg.PlotWidget())
    qtbot.addWidget(view)
    item = view.getPlotItem()
    before = QApplication.font()
    big = QFont(before)
    big.setPointSizeF(before.pointSizeF() * 2)
    try:
        QApplication.setFont(big)
        assert item.ctrl.gridGroup.font().pointSizeF() == before.pointSizeF()  # not reached by the zoom…
        item.ctrlMenu.aboutToShow.emit()  # … until the user opens the menu
        for window in (item.ctrlMenu, item.ctrlMenu.actions()[0].menu(), item.ctrl.gridGroup, item.ctrl.alphaGroup):
            assert window.font().pointSizeF() == big.pointSizeF()
    finally:
        QApplication.setFont(before)


def test_a_zoom_reaches_the_note_over_an_empty_plot(qtbot, zoom_plots):
    from explorer.widgets.loss_plot import LossPlot

    view = LossPlot(y_label="loss", empty_text="nothing yet")
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    zoom_plots(21.0)
    assert view.empty.font().pointSizeF() == 21.0  # a label the plot holds, found by walking its children
