"""The attention maps' key labels: never on top of each other, as many as fit."""


def test_key_labels_never_overlap_and_keep_as_many_as_fit():
    from explorer.widgets.heatmap import fitting_labels

    labels = ("[CLS]", "she", "deposited", "the", "money", "at", "[SEP]")
    widths = [50, 30, 80, 30, 50, 20, 50]
    ticks = fitting_labels(labels, 50.0, widths)
    kept = [t for _, t in ticks]
    assert kept[0] == "[CLS]" and len(kept) >= 4  # only where a neighbour takes the room is a label left out
    spans = [((x * 50) - widths[labels.index(t)] / 2, (x * 50) + widths[labels.index(t)] / 2) for x, t in ticks]
    assert all(a[1] + 6 <= b[0] for a, b in zip(spans, spans[1:], strict=False))  # no two overlap
    assert len(fitting_labels(labels, 200.0, widths)) == len(labels)  # room for all: all shown


def test_a_right_click_on_an_attention_map_opens_no_menu_and_none_is_built(qtbot):
    """pyqtgraph's view menu (range, mouse mode, export forms) means nothing on a map of weights. (It is not built
    either, only told at construction: made then disabled, its forms were a quarter of the attention panel's making.)"""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QApplication, QMenu

    from explorer.widgets.heatmap import Heatmap, HeatmapGrid

    single, grid = Heatmap(), HeatmapGrid()
    for widget in (single, grid):
        qtbot.addWidget(widget)
        widget.resize(300, 300)
        widget.show()
    for plot in (single.plot.getPlotItem(), grid.plot):
        assert plot.getViewBox().menu is None and not plot.menuEnabled()
    qtbot.mouseClick(single.plot.viewport(), Qt.MouseButton.RightButton, pos=QPoint(150, 150))
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.RightButton, pos=QPoint(150, 150))
    qtbot.wait(50)
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu) and w.isVisible()]


def test_an_empty_attention_map_shows_no_numbers_and_a_filled_one_its_tokens(qtbot):
    """Before a sentence is read (or after it is cleared), the maps showed pyqtgraph's placeholder axes: -0.6 … 0.6
    on the model view, "query (x0.001)" from -500 to 500 on the single map. Now an empty map has no numbers, the
    head grid no axes; filled, the single map names its tokens and the grid its layers and heads."""
    import numpy as np

    from explorer.widgets.heatmap import Heatmap, HeatmapGrid

    single, grid = Heatmap(), HeatmapGrid()
    for widget in (single, grid):
        qtbot.addWidget(widget)
        widget.resize(400, 300)
        widget.show()
    qtbot.waitExposed(grid)

    def labels(axis):  # the texts set on an axis; None: pyqtgraph's own numbers of the view's range
        return None if axis._tickLevels is None else [text for level in axis._tickLevels for _, text in level]

    for name in ("left", "bottom"):
        assert labels(single.plot.getAxis(name)) == []
        assert single.plot.getAxis(name).labelString().find("x0.001") < 0
    assert not any(grid.plot.getAxis(name).isVisible() for name in ("left", "top", "bottom"))
    single.show_matrix(np.full((3, 3), 1 / 3), ("the", "bank", "rose"), ("the", "bank", "rose"))
    grid.show_all(np.full((2, 4, 3, 3), 1 / 3))
    assert "bank" in labels(single.plot.getAxis("left"))
    assert grid.plot.getAxis("top").isVisible() and grid.plot.getAxis("left").isVisible()
    assert "layer 1" in labels(grid.plot.getAxis("left")) and "head 3" in labels(grid.plot.getAxis("top"))
    single.clear_matrix()
    grid.clear_all()
    assert labels(single.plot.getAxis("left")) == [] and not grid.plot.getAxis("left").isVisible()


def test_key_labels_take_a_second_line_before_they_are_left_out_and_stay_within_the_map():
    """Twelve tokens under a map 310 pixels wide: on one line six names were shown; staggered on two lines
    ten are, none reaching past the query labels' margin on the left or the map's end on the right."""
    from explorer.widgets.heatmap import fitting_labels

    labels = ("[CLS]", "she", "deposited", "the", "money", "at", "the", "bank", "on", "monday", ".", "[SEP]")
    widths = [38, 22, 62, 22, 42, 14, 22, 32, 16, 50, 4, 38]
    cell = 310 / len(labels)
    one, two = fitting_labels(labels, cell, widths), fitting_labels(labels, cell, widths, rows=2, lead=60)
    assert len(one) == 6 and len(two) == 10
    for row in (0, 1):
        spans = [(x * cell - widths[int(x)] / 2, x * cell + widths[int(x)] / 2) for x, t in two
                 if t.count("\n") == row]
        assert all(a[1] + 6 <= b[0] for a, b in zip(spans, spans[1:], strict=False))  # none overlaps on its line
    assert "[CLS]" not in [t for _, t in fitting_labels(labels, cell, widths, rows=2, lead=0)]  # past the margin
    long = labels[:-1] + ("[a-very-long-last-token]",)
    assert not any(t.endswith("token]") for _, t in fitting_labels(long, cell, widths[:-1] + [160], rows=2, lead=60))


def test_the_first_head_and_key_are_labelled_and_a_long_title_keeps_the_map_inside_its_pane(qtbot):
    """What pyqtgraph drew: "head 0" over the grid's first column and "[CLS]" under a narrow first key were hidden
    (each reaches past its axis's end); a comparison's title, "layer 5, head 0: minilm-mlm − all-minilm-l6-v2",
    made the plot wider than its pane and pushed the map's last columns out of sight."""
    import numpy as np
    from PySide6.QtGui import QImage, QPainter

    from explorer.widgets.heatmap import Heatmap, HeatmapGrid

    single, grid = Heatmap(), HeatmapGrid()
    for widget, size in ((single, (380, 460)), (grid, (480, 300))):
        qtbot.addWidget(widget)
        widget.resize(*size)
        widget.show()
    qtbot.waitExposed(single)
    tokens = ("[CLS]", "she", "deposited", "the", "money", "at", "the", "bank", "on", "monday", ".", "[SEP]")
    single.show_matrix(np.full((12, 12), 1 / 12), tokens, tokens,
                       "layer 5, head 0: minilm-mlm − all-minilm-l6-v2", signed=True)
    grid.show_all(np.full((6, 12, 12, 12), 1 / 12))
    qtbot.wait(100)

    def drawn(axis):
        image = QImage(10, 10, QImage.Format.Format_ARGB32)
        painter = QPainter(image)
        try:
            return [text.strip() for _, _, text in axis.generateDrawSpecs(painter)[2]]
        finally:
            painter.end()

    assert "head 0" in drawn(grid.plot.getAxis("top"))
    assert "[CLS]" in drawn(single.plot.getAxis("bottom")) and len(drawn(single.plot.getAxis("bottom"))) >= 10
    assert single.plot.getPlotItem().geometry().width() <= single.plot.width() + 1
    assert "<br>" in single.plot.getPlotItem().titleLabel.text  # the two models' names on a line of their own
