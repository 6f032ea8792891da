"""Plots stacked over one x-axis (x-linked) draw the same x at the same place on the screen: each of their left
axes is as wide as the widest of them needs for its numbers and its label. Linked ranges alone left a loss plot
whose numbers read "4.55" and a score plot with none yet drawing step 0 nine pixels apart."""

from __future__ import annotations

from typing import Any


def _needed(axis: Any) -> float:
    """The width pyqtgraph's AxisItem gives itself when no width is set (its ``_updateWidth``)."""
    if not axis.isVisible():
        return 0.0
    width = 0.0
    if axis.style["showValues"]:
        width = axis.textWidth if axis.style["autoExpandTextSpace"] else axis.style["tickTextWidth"]
        width += axis.style["tickTextOffset"][0]
    width += max(0, axis.style["tickLength"])
    if axis.label.isVisible():
        width += axis.label.boundingRect().height() * 0.8
    return float(width)


def align_left_axes(*plots: Any) -> None:
    """Keep the left axes of ``plots`` (pyqtgraph PlotWidgets) one width, the widest needed, as their numbers,
    labels and fonts change."""
    axes = [plot.getPlotItem().getAxis("left") for plot in plots]

    def align() -> None:
        width = max(_needed(axis) for axis in axes)
        for axis in axes:
            if axis.fixedWidth != width:
                axis.fixedWidth = width
                own[id(axis)]()

    own = {id(axis): axis._updateWidth for axis in axes}  # (pyqtgraph's: sizes the axis to fixedWidth once set)
    for axis in axes:
        axis._updateWidth = align  # what pyqtgraph calls whenever the axis's numbers or label change size
    align()


def share_x(*plots: Any) -> None:
    """One x-range for ``plots`` stacked in one column (a pan or zoom of one moves the others), their left axes one
    width (``align_left_axes``): the same x at the same place on the screen. Not pyqtgraph's ``setXLink``, which
    lines views up by ``ViewBox.screenGeometry``: that adds the plot's own position in its parent once too often,
    so a plot nested one widget deeper was drawn 9 pixels off its neighbour."""
    align_left_axes(*plots)
    moving = [False]

    def follower(source: Any) -> Any:
        def moved(_view: Any, x_range: Any) -> None:
            if moving[0]:
                return
            moving[0] = True
            try:
                for plot in plots:
                    if plot is not source:
                        plot.getPlotItem().vb.setXRange(*x_range, padding=0)
            finally:
                moving[0] = False
        return moved

    for plot in plots:
        plot.getPlotItem().vb.sigXRangeChanged.connect(follower(plot))
