"""Plots stacked over one x-axis put a step at the same place on the screen: the Run history's loss and its
"senses emerging" scores, the second nested one widget deeper and with numbers of another width."""

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QVBoxLayout, QWidget

from tests.conftest import settle_layout


def screen_x(plot, x):
    view = plot.getPlotItem().vb
    return plot.mapToGlobal(plot.mapFromScene(view.mapViewToScene(QPointF(x, 0)))).x()


def test_a_step_is_drawn_at_one_place_on_both_plots_and_a_pan_moves_both(qtbot):
    from explorer.widgets.aligned_axes import share_x
    from explorer.widgets.loss_plot import LossPlot

    column = QWidget()
    layout = QVBoxLayout(column)  # (a layout's margins: the first plot sits 9-11 pixels into the column)
    loss = LossPlot(y_label="training loss")
    nested = QWidget()
    inner = QVBoxLayout(nested)
    inner.setContentsMargins(0, 0, 0, 0)
    scores = LossPlot(y_label="score (0-1)")
    inner.addWidget(scores)
    layout.addWidget(loss)
    layout.addWidget(nested)
    qtbot.addWidget(column)
    column.resize(900, 600)
    for step, value in ((0, 12345.5), (500, 10000.25), (1000, 9000.75)):  # wide numbers on one, none on the other
        loss.append_loss("loss", step, value)
    loss.redraw_now()
    share_x(loss, scores)
    column.show()
    qtbot.waitExposed(column)
    loss.getPlotItem().setXRange(0, 1000, padding=0)
    settle_layout()
    axes = [plot.getPlotItem().getAxis("left") for plot in (loss, scores)]
    assert axes[0].width() == axes[1].width()
    for step in (0, 500, 1000):
        assert abs(screen_x(loss, step) - screen_x(scores, step)) <= 1, step
    scores.getPlotItem().setXRange(200, 400, padding=0)  # a pan or zoom on the lower plot
    assert [round(x) for x in loss.getPlotItem().viewRange()[0]] == [200, 400]
    settle_layout()
    assert abs(screen_x(loss, 300) - screen_x(scores, 300)) <= 1
