"""Plots stacked over one x-axis (x-linked) draw the same x at the same place on the screen: each of their left
axes is as wide as the widest of them needs for its numbers and its label. Linked ranges alone left a loss plot
whose numbers read "4.55" and a score plot with none yet drawing step 0 nine pixels apart. ``SharedX`` goes one
further for plots that grow (a training's loss, evaluations and speed): they all show the x of every curve any of
them draws."""

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


class SharedX:
    """Plots that share one x (``share_x``) and follow their curves as they grow: each shows the x that the curves
    of all of them span — not each its own, as pyqtgraph's autorange does, which drew an evaluation at step 20 at
    the left edge of one plot and a third of the way into the loss plot above it. A pan or zoom of one (the
    mouse) stops the following, so what the user looks at stays put; pyqtgraph's "A" button (or its menu's x
    "Auto") on any of them starts it again. The plots are LossPlots: ``x_extent`` and ``redrawn``."""

    PADDING = 0.02

    def __init__(self, *plots: Any) -> None:
        self.plots = plots
        self.following = True
        share_x(*plots)
        for plot in plots:
            view = plot.getPlotItem().vb
            view.enableAutoRange(x=False)  # (y: each plot's own autorange, as before)
            view.sigRangeChangedManually.connect(self._moved_by_hand)
            view.sigStateChanged.connect(self._auto_asked)
            plot.redrawn.connect(self.fit)

    def follow(self) -> None:
        """Follow the curves again (and show them all now)."""
        self.following = True
        self.fit()

    def fit(self) -> None:
        """While following: every plot's x is the span of all the plots' curves shown."""
        if not self.following:
            return
        ends = [end for plot in self.plots if (end := plot.x_extent()) is not None]
        if not ends:
            return
        low, high = min(lo for lo, _ in ends), max(hi for _, hi in ends)
        if low == high:  # one step so far: a span around it, not a view of zero width
            low, high = low - 0.5, high + 0.5
        self.plots[0].getPlotItem().vb.setXRange(low, high, padding=self.PADDING)  # (share_x moves the others)

    def _moved_by_hand(self, *_: Any) -> None:
        self.following = False

    def _auto_asked(self, view: Any) -> None:
        if view.autoRangeEnabled()[0]:  # the "A" button or the menu: back to following, over all the plots
            view.enableAutoRange(x=False)
            self.follow()
