"""Plot grids drawn with opaque lines: the grid colour is mixed with the background instead of laid
over it translucently. Translucent lines across a wide plot are slow to paint (a 1920-px talk slide of
fine-tuning curves: 26 ms a paint with pyqtgraph's alpha grid, 5 ms opaque; bench/speed/talk_speed.py)."""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg

from explorer.widgets.readable import mix

GRID = 0.3  # how strongly the grid shows: the foreground's share in its colour


def set_grid_colours(axis: pg.AxisItem, foreground: Any, background: Any) -> None:
    """The grid lines of one axis in the foreground mixed with the background (major ticks only)."""
    axis.setStyle(tickAlpha=255, maxTickLevel=0)  # major lines only: at full strength the minor ones are a mesh
    axis.setTickPen(pg.mkPen(mix(pg.mkColor(foreground), pg.mkColor(background), GRID)))


def opaque_grid(item: pg.PlotItem, foreground: Any = None, background: Any = None) -> None:
    """Show ``item``'s x and y grid in opaque lines (colours default to pyqtgraph's configured ones)."""
    item.showGrid(x=True, y=True, alpha=1.0)
    fg = pg.getConfigOption("foreground") if foreground is None else foreground
    bg = pg.getConfigOption("background") if background is None else background
    for name in ("left", "bottom"):
        set_grid_colours(item.getAxis(name), fg, bg)
