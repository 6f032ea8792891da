"""A plot's legend goes where its curves are not: an accuracy rising to the top right, or a continued run's loss flat
along the top, is not hidden under it; it does not hop about as a live curve grows; a user's drag is kept."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from tests.conftest import settle_layout


def _line(x0, y0, x1, y1, n=50):
    return np.linspace(x0, x1, n), np.linspace(y0, y1, n)


@pytest.mark.parametrize(("curve", "expected"), [
    (_line(0, 380, 600, 20), (0, 0)),  # rising to the top right (y down): the top left is free
    (_line(0, 20, 600, 380), (1, 0)),  # falling: the top right, as before
    (_line(0, 30, 600, 40), (1, 1)),  # flat along the top: the bottom right
])
def test_the_legend_goes_to_the_corner_the_curve_leaves_free(curve, expected):
    from explorer.widgets.legend_corner import emptiest_corner

    assert emptiest_corner([curve], 600, 400, (120, 60)) == expected


def test_a_steep_drop_between_two_points_counts_as_crossing_and_a_gap_does_not():
    from explorer.widgets.legend_corner import crossings

    box = (100, 100, 200, 200)
    # two points, far apart: the straight line between them crosses the box
    assert crossings([(np.array([0.0, 300.0]), np.array([0.0, 300.0]))], box) > 0
    # a curve that stops before the box and starts again after it (a NaN: a diverged step) does not
    assert crossings([(np.array([0.0, 50.0, 60.0, 250.0, 300.0]),
                       np.array([150.0, 150.0, np.nan, 150.0, 150.0]))], box) == 0


def test_it_stays_where_it_is_unless_another_corner_is_strictly_emptier():
    from explorer.widgets.legend_corner import emptiest_corner

    both = [_line(0, 30, 600, 30), _line(0, 370, 600, 370)]  # along the top and the bottom: every corner crossed
    assert emptiest_corner(both, 600, 400, (120, 60), current=(0, 1)) == (1, 0.5)  # the middle of a side is free
    everywhere = [*both, _line(0, 200, 600, 200)]  # and the middle: every place crossed as much
    assert emptiest_corner(everywhere, 600, 400, (120, 60), current=(0, 1)) == (0, 1)  # no better place: it stays
    assert emptiest_corner(everywhere, 600, 400, (120, 60)) == (1, 0)  # placed afresh: the top right


def _rising_plot(qtbot):
    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot(y_label="accuracy")
    qtbot.addWidget(plot)
    plot.resize(700, 420)
    plot.show()
    for step in range(0, 1001, 20):  # an accuracy that climbs to the top right and ends there
        plot.append("run accuracy", step, 0.1 + 0.8 * (1 - np.exp(-step / 300)))
        plot.append("baseline", step, 0.5)
    plot.redraw_now()
    for _ in range(5):
        settle_layout()
    plot.place_legend()
    settle_layout()
    return plot


def _covers(plot, name):
    """How many points along the curve (as the view draws it) lie under the legend."""
    view, rect = plot.getPlotItem().vb, plot.legend.sceneBoundingRect()
    x, y = plot.points(name)
    dense_x = np.linspace(x[0], x[-1], 2000)
    dense_y = np.interp(dense_x, x, y)
    return sum(rect.contains(view.mapViewToScene(QPointF(a, b))) for a, b in zip(dense_x, dense_y, strict=True))


def test_a_rising_accuracy_is_not_drawn_under_the_legend(qtbot):
    plot = _rising_plot(qtbot)
    assert plot.legend.corner != (1, 0)  # where it used to be, over the curve's end
    assert _covers(plot, "run accuracy") == 0 and _covers(plot, "baseline") == 0
    plot.legend.place((1, 0))  # the old place: the check above would have seen it
    settle_layout()
    assert _covers(plot, "run accuracy") > 0


def test_a_legend_the_user_dragged_stays_where_they_put_it(qtbot):
    from PySide6.QtCore import Qt

    plot = _rising_plot(qtbot)
    legend = plot.legend

    class Drag:  # the parts of pyqtgraph's MouseDragEvent that LegendItem reads
        accepted = False

        def button(self):
            return Qt.MouseButton.LeftButton

        def pos(self):
            return QPointF(5, 40)

        def lastPos(self):  # noqa: N802 - pyqtgraph's name
            return QPointF(0, 0)

        def accept(self):
            self.accepted = True

        def isAccepted(self):  # noqa: N802 - pyqtgraph's name
            return self.accepted

    legend.mouseDragEvent(Drag())
    settle_layout()
    where = legend.sceneBoundingRect()
    for step in range(1020, 3001, 20):  # the curves go on, flat along the middle now
        plot.append("run accuracy", step, 0.5)
    plot.redraw_now()
    settle_layout()
    plot.place_legend()
    settle_layout()
    assert legend.dragged and legend.sceneBoundingRect() == where


def test_in_a_short_plot_the_names_go_side_by_side_instead_of_covering_its_height(qtbot):
    """The Fine-tune tab's plots are about a hundred pixels high: four names one under another covered all of it."""
    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(900, 170)
    plot.show()
    for run in ("a", "b"):
        for step in range(1, 40):
            plot.append_loss(run, step, 2.0 / step)
    plot.redraw_now()
    for _ in range(5):
        settle_layout()
    plot.place_legend()
    settle_layout()
    view = plot.getPlotItem().vb
    assert len(plot.legend.items) == 4 and plot.legend.columnCount > 1
    assert plot.legend.boundingRect().height() <= 0.4 * view.height()
    assert _covers(plot, "a smoothed") == 0 and _covers(plot, "b smoothed") == 0


def test_an_empty_legend_hides_nothing_behind_it(qtbot):
    """The Run history's scores plot keeps its legend halfway up the right side before any score is computed: its
    empty card covered the checkpoint marker passing there."""
    from PySide6.QtGui import QColor

    from explorer.panels.senses_emerging import SensesEmerging
    from explorer.widgets.plot_view import colour_views

    emerging = SensesEmerging()
    qtbot.addWidget(emerging)
    emerging.resize(600, 300)
    emerging.show()
    plot, legend, marker = emerging.plot, emerging.plot.legend, emerging.marker
    colour_views([plot], "#ffffff", "#000000")  # the theme's colours: the legend on its see-through card
    plot.setXRange(0, 100, padding=0)
    settle_layout()
    assert not legend.items
    centre = legend.sceneBoundingRect().center()
    view = plot.getPlotItem().vb
    marker.setValue(view.mapSceneToView(centre).x())
    marker.setVisible(True)
    settle_layout()
    image = plot.grab().toImage()
    at = plot.mapFromScene(centre)
    drawn = QColor(image.pixel(at.x(), at.y()))
    above = QColor(image.pixel(at.x(), at.y() - 40))  # the marker where nothing lies over it
    assert drawn == above


def test_the_legend_moves_off_the_step_a_marker_shows(qtbot):
    """The Run history's checkpoint marker at the last step, at the right edge under the legend: the legend goes
    to another corner, and a marker out of its way leaves it where it is."""
    import pyqtgraph as pg

    from explorer.widgets.legend_corner import crossings
    from explorer.widgets.loss_plot import LossPlot

    assert crossings([(np.array([150.0, 150.0]), np.array([0.0, 400.0]))], (100, 100, 200, 200)) == 1  # upright
    assert crossings([(np.array([250.0, 250.0]), np.array([0.0, 400.0]))], (100, 100, 200, 200)) == 0
    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(700, 420)
    plot.show()
    for step in range(0, 1001, 20):  # a loss falling to the bottom right: the top right is free of it
        plot.append("run", step, 1 + 4 * np.exp(-step / 200))
    plot.redraw_now()
    marker = pg.InfiniteLine(angle=90, movable=False)
    plot.add_mark(marker, "#444444")
    marker.setValue(500)
    for _ in range(5):
        settle_layout()
    assert plot.legend.corner == (1, 0)  # (the marker in the middle: out of its way)

    def over_marker():
        rect, view = plot.legend.sceneBoundingRect(), plot.getPlotItem().vb
        x = view.mapViewToScene(QPointF(marker.value(), 0)).x()
        return rect.left() <= x <= rect.right()

    marker.setValue(990)  # the last checkpoint
    for _ in range(5):
        settle_layout()
    assert plot.legend.corner != (1, 0) and not over_marker()


def test_the_checkpoint_line_at_the_right_edge_is_not_hidden_behind_the_legend(qtbot):
    """The Run history opens on the last checkpoint: its line stands near the right edge. A loss that falls
    steeply at the left and runs flat along the bottom leaves only the right corners, and the legend there hid the
    line's top. The legend keeps to the left of the line instead."""
    import pyqtgraph as pg

    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(700, 420)
    plot.show()
    for step in range(50, 5801, 50):
        plot.append("loss", step, 3.9 + 2.3 * np.exp(-step / 500))
        plot.append("held-out loss", step, 3.92)
    marker = pg.InfiniteLine(angle=90, movable=False)
    plot.add_mark(marker, "#d95f02")
    marker.setValue(5826)
    plot.redraw_now()
    plot.getPlotItem().setXRange(0, 5826, padding=0.02)
    for _ in range(5):
        settle_layout()
    plot.place_legend()
    settle_layout()
    view, rect = plot.getPlotItem().vb, plot.legend.sceneBoundingRect()
    at = view.mapViewToScene(QPointF(5826, 4.5)).x()
    assert plot.legend.corner[0] == 1 and not rect.left() - 1 <= at <= rect.right() + 1
    assert _covers(plot, "loss") == 0
    marker.setValue(2900)  # the slider moved to the middle: the legend goes back to its corner
    settle_layout()
    plot.place_legend()
    settle_layout()
    assert plot.legend.shift == 0
