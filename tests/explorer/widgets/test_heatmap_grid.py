"""The model view's grid of every layer × head is one mosaic image: each head's map on its own scale (or one
shared scale for a difference), a click names the head under it, and a gap names none."""

import numpy as np
from PySide6.QtCore import QPointF


class _Click:
    def __init__(self, x, y):
        self._pos = QPointF(x, y)

    def pos(self):
        return self._pos


def test_every_head_is_a_cell_of_one_image_and_a_click_names_its_head(qtbot):
    from explorer.widgets.heatmap import HeatmapGrid

    grid = HeatmapGrid()
    qtbot.addWidget(grid)
    layers, heads, q, k = 2, 3, 4, 5
    thumbs = np.random.default_rng(0).random((layers, heads, q, k)).astype(np.float32)
    thumbs[1, 2] *= 0.01  # a head that attends weakly still spans its own colour scale
    grid.show_all(thumbs)
    image = grid.image.image
    g = grid.GAP
    assert grid.shape == (layers, heads) and image.shape == (layers * (q + g) - g, heads * (k + g) - g, 4)
    top = image[(q + g) : (q + g) + q, 2 * (k + g) : 2 * (k + g) + k]  # layer 1, head 2
    brightest = np.unravel_index(thumbs[1, 2].argmax(), (q, k))
    assert np.array_equal(top[brightest], image[np.unravel_index(thumbs[0, 0].argmax(), (q, k))])  # both at the top colour
    assert image[q, 0, 3] == 0  # the gap between layers is transparent
    clicks = []
    grid.clicked.connect(lambda layer, head: clicks.append((layer, head)))
    grid._clicked(_Click(2 * (k + g) + 1, (q + g) + 1))
    grid._clicked(_Click(k + 0.5, 1))  # in the gap between heads 0 and 1
    assert clicks == [(1, 2)]
    grid.show_all(thumbs - thumbs[::-1], signed=True)  # a difference: one scale around 0 for every head
    assert grid.signed and grid.image.image.shape == image.shape


def test_the_mosaic_sits_at_the_top_under_its_head_labels_however_tall_the_view(qtbot):
    from explorer.widgets.heatmap import HeatmapGrid

    grid = HeatmapGrid()
    qtbot.addWidget(grid)
    grid.resize(300, 900)  # far taller than a 2 × 3 mosaic of square cells
    grid.show()
    qtbot.waitExposed(grid)
    grid.show_all(np.random.default_rng(0).random((2, 3, 4, 5)).astype(np.float32))
    box = grid.plot.getViewBox()
    (left, right), (top, bottom) = box.viewRange()
    width, height = grid.image.width(), grid.image.height()
    assert left <= 0 and right >= width and top <= 0 and bottom >= height  # all of it in view
    assert -top < 0.05 * height  # its first layer right under the head labels, not centred lower down
    assert bottom - height > height  # the room left over is below it
    grid.resize(900, 200)  # now wider than the mosaic: it stays whole, at the left
    qtbot.waitUntil(lambda: box.viewRange()[1][1] < bottom)
    (left, right), (top, bottom) = box.viewRange()
    assert -left < 0.05 * width and top <= 0 and bottom >= height


def test_the_layer_axis_line_stops_at_the_last_layer(qtbot):
    """In a view taller than its mosaic (the model view beside the large map), the layer axis's line ends with the
    mosaic's last row of heads; it ran on down the empty view below."""
    from PySide6.QtGui import QImage, QPainter

    from explorer.widgets.heatmap import HeatmapGrid
    from tests.conftest import settle_layout

    grid = HeatmapGrid()
    qtbot.addWidget(grid)
    grid.resize(400, 900)  # (four layers of four heads: a square mosaic in a tall view)
    grid.show()
    qtbot.waitExposed(grid)
    grid.show_all(np.random.default_rng(0).random((4, 4, 6, 6)).astype(np.float32))
    settle_layout()
    axis, view = grid.axes["left"], grid.plot.getViewBox()
    canvas = QImage(10, 10, QImage.Format.Format_ARGB32)  # (kept: a painter on a freed image crashes)
    painter = QPainter(canvas)
    try:
        (_, start, end), *_ = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    mosaic_bottom = axis.mapFromScene(view.mapViewToScene(QPointF(0, grid.image.height()))).y()
    view_bottom = axis.mapFromScene(view.mapViewToScene(view.viewRect().bottomLeft())).y()
    assert view_bottom - mosaic_bottom > 100  # (the view is taller than the mosaic: there is a line to stop)
    assert max(start.y(), end.y()) <= mosaic_bottom + 1
