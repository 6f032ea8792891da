"""Live curves stay light with hundreds of thousands of points: the plot draws a peak-downsampled copy
clipped to the view, keeps the extremes, and a NaN (a diverged step) leaves a gap instead of breaking it."""

import numpy as np

from tests.conftest import settle_layout


def test_hundreds_of_thousands_of_points_are_downsampled_keeping_peaks(qtbot):
    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(700, 400)
    plot.show()
    n = 300_000
    rng = np.random.default_rng(0)
    loss = 8 * np.exp(-np.arange(n) / 60_000) + rng.normal(0, 0.05, n)
    loss[123_456] = 20.0  # a spike the downsampled curve must keep
    loss[200_000] = np.nan
    for step, value in enumerate(loss):
        plot.append("run", step, value)
    plot.redraw_now()
    settle_layout()  # the view knows its pixels: it downsamples to them
    shown_x, shown_y = plot.curves["run"].getData()
    assert len(plot.points("run")[0]) == n  # every point is kept in the buffer
    assert 100 < len(shown_x) < n // 20  # but only a few per pixel are drawn
    assert np.nanmax(shown_y) == 20.0
    plot.getPlotItem().setXRange(150_000, 160_000, padding=0)  # zooming in clips to the view
    plot.redraw_now()
    settle_layout()  # the view knows its pixels: it downsamples to them
    zoomed_x, _ = plot.curves["run"].getData()
    assert zoomed_x.min() >= 140_000 and zoomed_x.max() <= 170_000


def test_smoothing_is_debiased_and_follows_a_drop_quickly():
    from explorer.widgets.loss_plot import Smoother

    smooth = Smoother(0.8)
    assert smooth("a", 5.0) == 5.0 and abs(smooth("a", 5.0) - 5.0) < 1e-12  # a constant stays itself
    plain = 5.0
    fast = smooth("b", 5.0)
    for _ in range(3):
        fast, plain = smooth("b", 1.0), 0.8 * plain + 0.2 * 1.0
    assert fast < plain - 0.5  # the loss fell from 5 to 1: the debiased curve shows it sooner
    smooth.forget("b")
    assert smooth("b", 2.0) == 2.0


def test_a_short_run_is_not_drawn_far_behind_its_last_loss():
    """Six logged points: the smoothed curve ended at 7.98 where the loss was 7.55."""
    from explorer.widgets.loss_plot import Smoother

    smooth = Smoother(0.8)
    last = [smooth("six", x) for x in (9.5, 8.9, 8.4, 8.0, 7.8, 7.55)][-1]
    assert abs(last - 7.55) < 0.1
    noisy = [smooth("long", 5.0 + (0.5 if i % 2 else -0.5)) for i in range(200)]
    assert max(noisy[-50:]) - min(noisy[-50:]) < 0.5  # a long run is still smoothed (raw: 1.0 apart)


def test_a_hidden_plot_draws_what_came_when_it_is_shown(qtbot):
    """A training's curves are not redrawn on a tab nobody is looking at (each redraw sets pyqtgraph's autorange
    and axes going on the GUI thread); the points wait, and the plot shows them all as soon as it is shown."""
    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    for step in range(50):
        plot.append("run", step, 5.0 - step / 50)
    plot._redraw()  # its timer's tick, while hidden: nothing drawn yet
    assert plot.curves["run"].getData()[0] is None or len(plot.curves["run"].getData()[0]) == 0
    plot.show()
    qtbot.waitUntil(lambda: plot.curves["run"].getData()[0] is not None
                    and len(plot.curves["run"].getData()[0]) == 50, timeout=2_000)
    assert not plot.empty.isVisible()


def test_a_training_that_logs_fast_is_redrawn_a_few_times_a_second_not_at_every_point(qtbot):
    """Each redraw sets pyqtgraph's autorange and axes going and repaints the plot on the GUI thread: a run logging
    a point every 10 ms is drawn at most four or five times a second, every point in the end."""
    import time

    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    plot.show()
    plot.append("run", 0, 5.0)
    drawn: list[int] = []
    item = plot.curves["run"]
    original = item.setData
    item.setData = lambda *a, **k: (drawn.append(len(a[0]) if a else 0), original(*a, **k))  # type: ignore[method-assign]
    began = time.monotonic()
    step = 1
    while time.monotonic() - began < 1.0:
        plot.append("run", step, 5.0 - step / 100)
        step += 1
        qtbot.wait(10)
    qtbot.waitUntil(lambda: bool(drawn) and drawn[-1] == step, timeout=2_000)  # every point, in the end
    assert step > 40 and len(drawn) <= 6  # (1 s of points, then the last redraw)


def test_the_right_click_menu_is_built_when_first_opened_and_has_pyqtgraphs_entries(qtbot):
    """A plot is made without its view menu's 48 widgets; right-clicking it still opens the menu, with
    pyqtgraph's View All and axis entries and the plot's own options."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QApplication, QMenu

    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 350)
    plot.show()
    settle_layout()
    view_box = plot.getPlotItem().vb
    assert view_box.menu is None
    centre = plot.mapFromScene(view_box.sceneBoundingRect().center())
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.RightButton, pos=QPoint(int(centre.x()), int(centre.y())))
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu), timeout=5_000)
    menu = QApplication.activePopupWidget()
    entries = [a.text() for a in menu.actions()]
    assert "View All" in entries and "Plot Options" in entries
    assert view_box.menu is not None
    menu.close()


def test_a_loss_plot_is_never_shorter_than_its_y_label_in_the_font_of_the_moment(qtbot):
    from PySide6.QtGui import QFont

    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot(y_label="learning rate")
    qtbot.addWidget(plot)
    small = plot.minimumHeight()
    assert small >= plot.fontMetrics().horizontalAdvance("learning rate")  # the whole label, not "learning rat"
    big = QFont(plot.font())
    big.setPointSizeF(plot.font().pointSizeF() * 2.5)  # presentation zoom, or a talk's font
    plot.setFont(big)
    assert plot.minimumHeight() >= plot.fontMetrics().horizontalAdvance("learning rate") > small
    plot.setLabel("left", "a much longer label for the y axis")  # a new label: its length counts now
    assert plot.minimumHeight() >= plot.fontMetrics().horizontalAdvance("a much longer label for the y axis")


def test_at_a_talks_zoom_an_empty_plot_at_its_smallest_shows_its_labels_and_message_whole(qtbot):
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QApplication

    from explorer.theme import apply_zoom
    from explorer.widgets.loss_plot import LossPlot
    from explorer.widgets.plot_view import without_background_cache

    plot = without_background_cache(LossPlot(y_label="learning rate", empty_text="its learning rate"))
    plot.setLabel("bottom", "step")
    qtbot.addWidget(plot)
    plot.resize(600, plot.minimumHeight())
    plot.show()
    qtbot.waitExposed(plot)
    try:
        apply_zoom(QApplication.instance(), 4)
        plot.resize(600, plot.minimumHeight())  # as short as a splitter may make it
        settle_layout()
        item = plot.getPlotItem()
        left, bottom = item.getAxis("left"), item.getAxis("bottom")
        # the y label along the left axis whole ("learning rat" before), the x label under the plot whole
        assert left.geometry().height() >= left.label.boundingRect().width() - 4
        assert bottom.geometry().height() >= QFontMetrics(bottom.label.font()).height()
        # the message in the zoom's font on one line, as the room allows ("its" alone, cut, before)
        message = plot.empty
        assert message.width() >= message.fontMetrics().horizontalAdvance("its learning rate")
        assert message.height() >= message.fontMetrics().height()
    finally:
        apply_zoom(QApplication.instance(), 0)


def test_a_plot_hidden_at_the_zoom_shows_its_whole_message_when_it_is_shown(qtbot):
    """The Run history's "Open a run: its training loss, with a tick at each checkpoint it kept" was cut in half at
    zoom 6: its plot was hidden (another tab) at the zoom, so it was placed for the old font, and the zoom's font
    reached the message only when the plot was shown."""
    from PySide6.QtWidgets import QApplication, QTabWidget, QWidget

    from explorer.theme import apply_zoom
    from explorer.widgets.loss_plot import LossPlot
    from explorer.widgets.plot_view import without_background_cache

    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    text = "Open a run: its training loss, with a tick at each checkpoint it kept"
    plot = without_background_cache(LossPlot(y_label="training loss", empty_text=text))
    tabs.addTab(QWidget(), "first")
    tabs.addTab(plot, "the plot")
    tabs.resize(900, 600)
    tabs.show()
    qtbot.waitExposed(tabs)
    try:
        apply_zoom(QApplication.instance(), 6)  # while the plot is hidden
        settle_layout()
        tabs.setCurrentIndex(1)
        settle_layout()
        message = plot.empty
        assert message.font().pointSizeF() == QApplication.font().pointSizeF()  # the zoom's font reached it
        assert message.height() >= message.heightForWidth(message.width())  # every line of it, whole
    finally:
        apply_zoom(QApplication.instance(), 0)


def test_the_curves_are_readable_on_the_plots_background_and_follow_a_change_of_it(qtbot):
    """A pale green score curve (#98df8a, 1.6:1 on white) and a navy one (#393b79, 2.1:1 on black) stand out
    3:1 on the background they are drawn on, and are recoloured when it changes."""
    from explorer.widgets.loss_plot import LossPlot
    from explorer.widgets.readable import MARKS, contrast

    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.setBackground("#ffffff")
    plot.curve("senses", colour="#98df8a")
    plot.curve("cloze", colour="#393b79")
    plot.append("senses", 1, 0.5)

    def lowest(background):
        return min(contrast(item.opts["pen"].color(), background) for item in plot.curves.values())

    assert lowest("#ffffff") >= MARKS
    assert plot.curve("senses") == "#98df8a"  # (the curve keeps the colour it was given; the pen is what changes)
    plot.setBackground("#000000")
    assert lowest("#000000") >= MARKS
    plot.set_visible("cloze", False)
    plot.set_visible("cloze", True)  # made again: in the colour of the background now
    assert lowest("#000000") >= MARKS


def test_a_runs_curves_are_drawn_from_its_first_loss_not_made_as_it_starts(qtbot):
    """Starting a run made its two curves' pyqtgraph items at once, on the window's thread, for a run that may be
    stopped before it logs anything (most of a start's time: bench/speed/action_gaps.py). The run has its colour and
    counts as shown from the start; its items and legend rows come with its first points."""
    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    plot.show()
    colour = plot.run_curves("a")
    assert plot.shown("a") and plot.shown("a smoothed")
    assert "a" not in plot.curves and not plot.legend.items  # nothing made yet
    assert plot.run_curves("b") != colour  # each run its own colour, items or not
    plot.set_run_visible("b", False)  # a run unticked before it logged: nothing to take down
    assert not plot.shown("b")
    plot.append_loss("a", 0, 5.0)
    plot.append_loss("a", 10, 4.0)
    plot.redraw_now()
    assert len(plot.curves["a"].getData()[0]) == 2 and len(plot.curves["a smoothed"].getData()[0]) == 2
    assert [label.text for _, label in plot.legend.items] == ["a smoothed", "a"]  # as when made at the start
    assert not plot.empty.isVisible()
    plot.set_run_visible("b", True)  # ticked again, still without points: still nothing made
    assert plot.shown("b") and "b" not in plot.curves
    plot.set_run_visible("a", False)
    assert "a" not in plot.curves and not plot.legend.items
    plot.set_run_visible("a", True)  # with its points: made at once
    assert len(plot.curves["a"].getData()[0]) == 2
