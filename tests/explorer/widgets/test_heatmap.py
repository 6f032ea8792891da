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
