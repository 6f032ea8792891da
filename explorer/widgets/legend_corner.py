"""A plot's legend in the corner (or halfway up a side) its curves leave emptiest. A fixed top-right legend lay over
the curves that end there: an accuracy rising to the right, a continued run's loss flat near the top (its card keeps
the names readable, but it hid the curve's end, the part a user is watching). The legend moves to the place that the
fewest columns of the curves run through, and stays where it is until another place is strictly emptier, so a live
curve does not set it jumping. A user who drags it keeps it where they put it."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyqtgraph as pg

# pyqtgraph's anchors (x from the left, y from the top), in the order a tie is given: top right first, as before;
# halfway up the sides last (the Run history's scores run along the top and the bottom, and leave the middle)
Corner = tuple[float, float]
CORNERS: tuple[Corner, ...] = ((1, 0), (0, 0), (1, 1), (0, 1), (1, 0.5), (0, 0.5))
MARGIN = 10  # px between the legend and the plot's edges
MARK_GAP = 6  # px between the legend and an upright mark it keeps clear of
COLUMN = 2.0  # px: the legend's box is tested every this many columns
# at most this share of the view's height for the legend: past it its names go in more columns (the Fine-tune tab's
# plots are a hundred pixels high, and four names, one under another, covered every curve whatever the corner)
TALLEST = 0.4


def crossings(curves: Iterable[tuple[np.ndarray, np.ndarray]], box: tuple[float, float, float, float]) -> int:
    """How many columns of ``box`` (left, top, right, bottom in pixels, y down) some curve passes through, the
    curves given as pixel coordinates with x ascending. A curve is followed between its points (a steep drop
    between two columns crosses the rows between them); a NaN leaves a gap, as in the plot; a "curve" whose points
    share one x is an upright line (the step a marker shows) and crosses the column it is in."""
    left, top, right, bottom = box
    columns = np.arange(left, right + COLUMN, COLUMN)
    hit = np.zeros(len(columns) - 1, dtype=bool)
    for x, y in curves:
        if len(x) == 0:
            continue
        inside = (columns >= x[0]) & (columns <= x[-1])
        if x[0] == x[-1]:  # a lone point, or an upright line (a marker at a step): the column it lies in
            at = np.searchsorted(columns, x[0]) - 1
            if 0 <= at < len(hit) and np.nanmin(y) <= bottom and np.nanmax(y) >= top:
                hit[at] = True
            continue
        ys = np.where(inside, np.interp(columns, x, y), np.nan)
        lo, hi = np.fmin(ys[:-1], ys[1:]), np.fmax(ys[:-1], ys[1:])  # the rows each column's stretch spans
        with np.errstate(invalid="ignore"):
            hit |= (hi >= top) & (lo <= bottom)
    return int(hit.sum())


def corner_box(corner: Corner, width: float, height: float, legend: tuple[float, float]
               ) -> tuple[float, float, float, float]:
    """The pixels a legend of size ``legend`` covers in ``corner`` of a view ``width`` × ``height``."""
    w, h = legend
    left = MARGIN + corner[0] * (width - 2 * MARGIN - w)
    top = MARGIN + corner[1] * (height - 2 * MARGIN - h)
    return left, top, left + w, top + h


def emptiest_corner(curves: list[tuple[np.ndarray, np.ndarray]], width: float, height: float,
                    legend: tuple[float, float], current: Corner | None = None) -> Corner:
    """The corner for the legend: the current one unless another is crossed by strictly fewer columns of the
    curves; among equals, the first of ``CORNERS``."""
    counts = {corner: crossings(curves, corner_box(corner, width, height, legend)) for corner in CORNERS}
    best = min(CORNERS, key=lambda corner: counts[corner])
    if current is not None and counts[current] <= counts[best]:
        return current
    return best


class CornerLegend(pg.LegendItem):
    """pyqtgraph's legend that a plot can move from corner to corner (``place``) until the user drags it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.corner: Corner = CORNERS[0]
        self.shift = 0.0  # pixels sideways from the corner: kept off a marker (``clear_of_marks``)
        self.dragged = False  # the user put it somewhere: it stays there

    def paint(self, p: Any, *args: Any) -> None:
        """Its card only while it names something: an empty legend's card, a few pixels wide, hid the checkpoint
        marker passing behind it (the Run history's scores before any were computed)."""
        if self.items:
            super().paint(p, *args)

    def mouseDragEvent(self, ev: Any) -> None:  # noqa: N802 - pyqtgraph's name
        super().mouseDragEvent(ev)
        if ev.isAccepted():
            self.dragged = True

    def place(self, corner: Corner, shift: float = 0.0) -> None:
        """In ``corner``, moved ``shift`` pixels sideways (right if positive) from there."""
        if (corner, shift) == (self.corner, self.shift) or self.dragged:
            return
        self.corner, self.shift = corner, shift
        dx, dy = (MARGIN * (1 - 2 * at) for at in corner)  # inwards from its edges (none across a middle)
        self.anchor(itemPos=corner, parentPos=corner, offset=(dx + shift, dy))


def add_corner_legend(plot_item: pg.PlotItem) -> CornerLegend:
    """A ``CornerLegend`` as ``plot_item``'s legend (what its ``addLegend`` would make: curves plotted with a name
    are listed in it), in the top right corner to begin with."""
    legend = CornerLegend(offset=(-MARGIN, MARGIN))
    legend.setParentItem(plot_item.vb)
    plot_item.legend = legend
    return legend


def place_legend(legend: CornerLegend, view: pg.ViewBox, curves: Iterable[tuple[np.ndarray, np.ndarray]],
                 marks: Iterable[float] = ()) -> None:
    """Move ``legend`` to the corner of ``view`` its curves (x, y in the view's coordinates) and upright ``marks``
    (the x of a marker at a step: the Run history's checkpoint shown) leave emptiest."""
    if legend.dragged or not legend.items:
        return
    width, height = view.width(), view.height()
    (x0, x1), (y0, y1) = view.viewRange()
    if width <= 0 or height <= 0 or x1 <= x0 or y1 <= y0:
        return
    in_pixels = []
    for x, y in curves:
        if x is not None and len(x):
            in_pixels.append(((np.asarray(x, float) - x0) * (width / (x1 - x0)),
                              (y1 - np.asarray(y, float)) * (height / (y1 - y0))))
    marks_at = [(at - x0) * (width / (x1 - x0)) for at in marks]  # (pixels: each an upright line, top to bottom)
    in_pixels += [(np.array([at, at]), np.array([0.0, height])) for at in marks_at]
    rect = legend.boundingRect()
    names = len(legend.items)
    row = rect.height() / math.ceil(names / legend.columnCount)
    columns = min(names, math.ceil(names / max(1, int(TALLEST * height // row))))
    if columns != legend.columnCount:
        legend.setColumnCount(columns)
        rect = legend.boundingRect()
    corner = emptiest_corner(in_pixels, width, height, (rect.width(), rect.height()), legend.corner)
    box = corner_box(corner, width, height, (rect.width(), rect.height()))
    legend.place(corner, clear_of_marks(corner, box, marks_at, width))


def clear_of_marks(corner: Corner, box: tuple[float, float, float, float], marks: Iterable[float],
                   width: float) -> float:
    """How many pixels sideways a legend in ``corner`` covering ``box`` moves so that no upright mark (its x in
    pixels) runs under its card: inwards, past the marks under it, where it still fits in the view; 0 when none is
    under it, in the middle of a side, or where it would not fit. The checkpoint shown in the Run history is the
    last one to begin with, a line near the right edge: a legend in a right corner hid it, since every other place
    lay over a curve."""
    left, _, right, _ = box
    under = [at for at in marks if left - MARK_GAP <= at <= right + MARK_GAP]
    if not under or corner[0] == 0.5:
        return 0.0
    shift = (min(under) - MARK_GAP) - right if corner[0] == 1 else (max(under) + MARK_GAP) - left
    inside = left + shift >= MARGIN and right + shift <= width - MARGIN
    return float(round(shift)) if inside else 0.0
