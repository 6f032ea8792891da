"""The occurrence map's title stays inside a narrow plot (wrapped to its width) and above the points: set among
the data, a long title ran off the plot's edge ("… 2 sense") and nothing kept the points from under it."""

import numpy as np


def a_map():
    from engine.api import occurrence_map

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=32), rng.normal(size=32)
    corpus = np.concatenate([a + 0.3 * rng.normal(size=(150, 32)), b + 0.3 * rng.normal(size=(141, 32))])
    return occurrence_map(corpus, [f"s{i}" for i in range(291)], np.stack([a, b]), ["river", "money"], "pca")


def a_shown_map(qtbot, width, height):
    """A map view of ``a_map`` on screen at ``width`` × ``height``."""
    from explorer.widgets.occurrence_map import OccurrenceMapView

    view = OccurrenceMapView()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    view.show_map(a_map(), "bank", ["#1f77b4", "#d62728"])
    return view


def test_the_title_wraps_to_a_narrow_plot_and_the_points_stay_below_it(qtbot):
    view = a_shown_map(qtbot, 360, 260)
    box = view.getPlotItem().getViewBox()

    def title_and_points():
        title = view.title.mapRectToItem(box, view.title.boundingRect())
        (_, _), (low, high) = box.viewRange()  # the box's pixels: y down from the top of the data's range
        highest_point = min((high - p.pos().y()) / (high - low) * box.height() for p in view.scatter.points())
        return title, highest_point

    title, top_point = title_and_points()
    assert "291 corpus occurrences" in view.title.toPlainText()
    assert title.right() <= box.width() + 1  # wrapped: nothing past the plot's right edge
    assert title.height() > 30  # (two lines at this width)
    assert top_point >= title.bottom()  # no point under the title
    view.resize(900, 260)  # wider: one line again, and the map fitted again
    qtbot.waitUntil(lambda: view.title.boundingRect().height() < 30, timeout=5_000)
    title, top_point = title_and_points()
    assert title.right() <= box.width() + 1 and top_point >= title.bottom()


def test_the_title_and_the_numbers_take_the_views_font_a_talks_big_type(qtbot):
    from PySide6.QtGui import QFont

    view = a_shown_map(qtbot, 900, 400)
    small = view.title.boundingRect().height()
    big = QFont(view.font())
    big.setPixelSize(28)  # the talk window's body type (explorer/talk/window.py BODY_PX)
    view.setFont(big)
    assert all(item.textItem.font().pixelSize() == 28 for item in (view.title, *view.labels)) and len(view.labels) == 2
    assert view.title.boundingRect().height() > small
    view.show_map(a_map(), "bank", ["#1f77b4", "#d62728"])  # numbers made after the change: in it too
    assert all(label.textItem.font().pixelSize() == 28 for label in view.labels)



def test_the_title_counts_its_clusters_in_words_and_says_when_there_is_one_group(qtbot):
    from explorer.widgets.occurrence_map import clusters_said

    view = a_shown_map(qtbot, 900, 400)
    assert "2 sense clusters (silhouette" in view.title.toPlainText() and "(s)" not in view.title.toPlainText()
    assert clusters_said(1, 0.0) == "one group (no split into clusters scored a positive silhouette)"


def test_the_points_and_numbers_are_readable_on_white_and_on_a_talks_black(qtbot):
    """The clusters' orange (#dd8452) was 2.6:1 on white; on a talk's black the numbers are asked 7:1."""
    from explorer.theme import TALK_PLOTS
    from explorer.widgets.plot_view import PLOT_COLOURS, colour_views
    from explorer.widgets.readable import MARKS, TALK_TEXT, TEXT, contrast

    view = a_shown_map(qtbot, 600, 400)

    def lowest(background):
        points = [spot.brush().color() for spot in view.scatter.points()]
        numbers = [label.color for label in view.labels]
        return min(contrast(c, background) for c in points), min(contrast(c, background) for c in numbers)

    points, numbers = lowest("#ffffff")
    assert points >= MARKS and numbers >= TEXT
    zoomed = view.getPlotItem().getViewBox().viewRange()
    setattr(view, PLOT_COLOURS, TALK_PLOTS)  # the view's window is a talk's
    colour_views([view], *TALK_PLOTS)
    points, numbers = lowest("#000000")
    assert points >= MARKS and numbers >= TALK_TEXT and len(view.labels) == 2
    assert view.getPlotItem().getViewBox().viewRange() == zoomed  # recoloured, not fitted again


def test_a_talks_big_type_draws_bigger_points(qtbot):
    """On a projector the corpus's dots were 8 px specks under 28 px numbers: they grow with the type."""
    from PySide6.QtGui import QFont

    view = a_shown_map(qtbot, 900, 400)
    sizes = sorted({spot.size() for spot in view.scatter.points()})
    assert sizes == [8, 18]  # the window's type: corpus dots, typed squares
    big = QFont(view.font())
    big.setPixelSize(28)  # a talk's body type
    view.setFont(big)
    bigger = sorted({spot.size() for spot in view.scatter.points()})
    assert bigger[0] >= 12 and bigger[1] >= 27


def test_a_hidden_map_grows_its_points_when_it_is_next_shown(qtbot):
    """Each zoom reaches every map, shown or not: a hidden one draws its points again only when it is shown."""
    from PySide6.QtGui import QFont

    view = a_shown_map(qtbot, 900, 400)
    view.hide()
    big = QFont(view.font())
    big.setPixelSize(28)
    view.setFont(big)
    assert sorted({spot.size() for spot in view.scatter.points()}) == [8, 18]  # not drawn again while hidden
    view.show()
    qtbot.waitUntil(lambda: min(spot.size() for spot in view.scatter.points()) >= 12, timeout=2_000)


def test_redrawing_the_map_reuses_its_symbols_and_keeps_each_points_sentence(qtbot):
    """pyqtgraph's symbol atlas knows a style by its brush's and pen's identity: a new brush for each point drew
    all 291 symbols again on every redraw (a new word, a zoom, a theme), 13 ms of the GUI thread for "bank" where
    a handful of styles do."""
    view = a_shown_map(qtbot, 600, 400)
    view.show_map(a_map(), "bank", ["#1f77b4", "#d62728"])  # drawn again: the same styles
    assert len(view.scatter.fragmentAtlas) <= 8  # two clusters' dots, two typed squares (and their hover sizes)
    spots = view.scatter.points()
    assert len(spots) == 293 and spots[0].data() == "s0" and spots[-1].data() == "money"  # what hovering shows
