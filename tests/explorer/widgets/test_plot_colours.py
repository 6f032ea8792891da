"""A window that keeps its own plot colours (a talk's black) gives them to a view made later, as it is shown, even
one whose size was asked for (and so polished) before it was placed in that window."""

from PySide6.QtWidgets import QVBoxLayout, QWidget


def test_a_view_polished_before_it_is_placed_still_takes_its_windows_colours(qtbot):
    from explorer.widgets.loss_plot import LossPlot
    from explorer.widgets.plot_view import PLOT_COLOURS

    window = QWidget()
    setattr(window, PLOT_COLOURS, ("#000000", "#ffffff"))
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    view = LossPlot(y_label="loss", empty_text="nothing yet")
    view.ensurePolished()  # (a layout asking its size hint polishes it)
    assert view.backgroundBrush().color().name() == "#ffffff"  # the theme's, for now
    layout.addWidget(view)
    window.show()
    qtbot.waitExposed(window)
    axis = view.getPlotItem().getAxis("left")
    assert view.backgroundBrush().color().name() == "#000000" and axis.textPen().color().name() == "#ffffff"
