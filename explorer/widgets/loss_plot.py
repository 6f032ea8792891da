"""Live training curves: each curve is created once and fed from growing numpy buffers; the view
redraws from a timer four times a second (not per event), with peak downsampling and clipping to the view; NaNs
(a diverged step) leave a gap instead of breaking the plot."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QLabel

from explorer.widgets.legend_corner import add_corner_legend, place_legend
from explorer.widgets.plot_grid import opaque_grid
from explorer.widgets.plot_view import MenuOnDemand, without_background_cache
from explorer.widgets.readable import MARKS, readable

# A redraw sets the curves' data, pyqtgraph's autorange, bounds and axes going, then repaints the plot on the GUI
# thread: 10 a second kept the Pretrain tab among the chaos bench's most frequent stalls while a training ran
# (bench/robustness/RESULTS.md); four a second still reads as live
REDRAW_MS = 250
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


class _Buffer:
    def __init__(self) -> None:
        self.x = np.empty(256)
        self.y = np.empty(256)
        self.n = 0
        self.lo, self.hi = np.inf, -np.inf  # the x its points span, kept as they come (x_extent)

    def append(self, x: float, y: float) -> None:
        if self.n == len(self.x):
            self.x = np.resize(self.x, 2 * self.n)
            self.y = np.resize(self.y, 2 * self.n)
        self.x[self.n], self.y[self.n] = x, y
        self.n += 1
        self.lo, self.hi = min(self.lo, x), max(self.hi, x)

    def data(self) -> tuple[np.ndarray, np.ndarray]:
        return self.x[: self.n], self.y[: self.n]


class Smoother:
    """Exponential moving average (TensorBoard's smoothing), its weight held down while a curve is short:
    at most ``weight``, and never a memory longer than a fifth of the points so far (the first five points are
    the raw loss). A run that logged six points is not drawn a whole point behind its last loss, and an early
    fast drop shows at once."""

    def __init__(self, weight: float = 0.8) -> None:
        self.weight = weight
        self.state: dict[str, tuple[float, int]] = {}  # curve -> (average, points)

    def __call__(self, name: str, value: float) -> float:
        average, n = self.state.get(name, (0.0, 0))
        n += 1
        weight = min(self.weight, max(0.0, 1 - 5 / n))  # an average over about 1/(1 - weight) points
        average = weight * average + (1 - weight) * value
        self.state[name] = (average, n)
        return average

    def forget(self, name: str | None = None) -> None:
        if name is None:
            self.state.clear()
        else:
            self.state.pop(name, None)


class _EmptyNote(QLabel):
    """The "nothing yet" message over an empty plot: placed again when its own font changes (the zoom's font
    reaches it after the plot's own change of font when the plot was hidden at the zoom: the Run history's message,
    placed for the old font, was cut in half at a talk's zoom)."""

    def changeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        plot = self.parent()
        if event.type() == QEvent.Type.FontChange and isinstance(plot, LossPlot):
            plot._place_empty()


class LossPlot(pg.PlotWidget):
    """Curves over steps. With nothing drawn yet it says so (``empty_text``) over a grid without numbers,
    instead of made-up axes from 0 to 1; it is never shorter than its y-axis label (\"learning rat\")."""

    # the curves shown changed: points drawn, a curve shown, hidden or forgotten (plots that share one x follow the
    # x of them all: explorer.widgets.aligned_axes.SharedX)
    redrawn = Signal()

    def __init__(self, parent: Any = None, y_label: str = "loss", empty_text: str = "nothing to draw yet") -> None:
        super().__init__(parent, viewBox=MenuOnDemand())  # (the theme's background: pyqtgraph's default)
        without_background_cache(self)
        self.y_label = y_label
        self.setLabel("bottom", "step")
        self.setLabel("left", y_label)
        self.empty = _EmptyNote(empty_text, self)
        self.empty.setFont(QApplication.font())  # the app's (zoomed) font, not the plot's own small one
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        # in the theme's colours, which follow a change of theme (a fixed white box stayed white on the dark one)
        self.empty.setAutoFillBackground(True)
        self.empty.setBackgroundRole(QPalette.ColorRole.Base)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.empty.setContentsMargins(4, 4, 4, 4)
        self.empty.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._showing_empty: bool | None = None
        opaque_grid(self.getPlotItem())
        for axis in ("left", "bottom"):  # 0.35 stays 0.35, not "350 (x0.001)"
            self.getPlotItem().getAxis(axis).enableAutoSIPrefix(False)
        # in the corner the curves leave emptiest, looked for again once the view has settled after a redraw, a
        # zoom or a resize (explorer.widgets.legend_corner)
        self.legend = add_corner_legend(self.getPlotItem())
        self._legend_timer = QTimer(self, singleShot=True, interval=0)
        self._legend_timer.timeout.connect(self.place_legend)
        view = self.getPlotItem().vb
        for signal in (self.redrawn, view.sigRangeChanged, view.sigResized):
            signal.connect(self._legend_timer.start)
        self.getPlotItem().setDownsampling(auto=True, mode="peak")
        self.getPlotItem().setClipToView(True)
        self.smoother = Smoother()
        # every curve's points and look, shown or not; a pyqtgraph item only for the curves shown. A hidden
        # curve's item (with its symbol atlas and scatter item: about 0.25 MB for a run's two loss curves) is let
        # go and made again when it is shown: the chaos bench's hundreds of unticked runs kept theirs for good
        self.buffers: dict[str, _Buffer] = {}
        self.styles: dict[str, dict[str, Any]] = {}
        self.curves: dict[str, pg.PlotDataItem] = {}  # the curves shown
        # curves shown that wait for their first point to be given an item (a run's, made as it starts: most of a
        # start's time on the window's thread was its two curves' items, for a run that may be stopped before it
        # logs anything; bench/speed/action_gaps.py), in the order they were shown (a dict as an ordered set)
        self._waiting: dict[str, None] = {}
        self._marks: list[tuple[Any, str, float]] = []  # (item, colour, width) drawn over them (add_mark)
        # a curve's x drawn as its points' x times this (set_x_scale; 1 where not set): a run's steps shown as
        # examples seen without its points given again
        self._x_scale: dict[str, float] = {}
        self._dirty: set[str] = set()
        self._timer = QTimer(self, interval=REDRAW_MS)
        self._timer.timeout.connect(self._redraw)
        self._timer.start()
        self._show_empty(True)

    def set_empty_text(self, text: str) -> None:
        self.empty.setText(text)
        self._place_empty()

    def has_points(self) -> bool:
        return any(self.buffers[name].n for name in self.curves)

    def shown(self, name: str) -> bool:
        return name in self.curves or name in self._waiting

    def _show_empty(self, empty: bool) -> None:
        if empty == self._showing_empty:
            return
        self._showing_empty = empty
        self.empty.setVisible(empty)
        self._place_empty()
        for axis in ("left", "bottom"):  # no numbers on an axis that measures nothing yet
            self.getPlotItem().getAxis(axis).setStyle(showValues=not empty)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._place_empty()

    def _place_empty(self) -> None:
        empty = self.__dict__.get("empty")  # (a resize comes while pyqtgraph's __init__ runs)
        if empty is not None:  # centred over the plot area, as wide as its words (wrapped when the plot is narrow)
            area = self.rect().adjusted(60, 10, -10, -40)
            width = min(area.width(), empty.fontMetrics().horizontalAdvance(empty.text()) + 16)
            height = min(area.height(), empty.heightForWidth(width))
            empty.setGeometry(area.x() + (area.width() - width) // 2, area.y() + (area.height() - height) // 2,
                              width, height)

    def changeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit_label()
            # the message placed for its new font (explorer.widgets.plot_view gives it the zoom's): placed for the
            # old one, a zoom's larger words wrapped in a box still sized for the smaller, cut ("its" of "its
            # learning rate")
            self._place_empty()

    def _fit_label(self) -> None:
        """Tall enough for the y-axis label in the font of the moment (presentation zoom, a talk's font): a minimum
        size set when the font or the label changes. (A ``minimumSizeHint`` of Python's was asked for 50-60 times
        in each zoom by the layouts of the Pretrain and Fine-tune tabs, each a Python call on the window's thread
        that can wait for the GIL.)"""
        if "y_label" in self.__dict__:  # (a change comes while pyqtgraph's __init__ runs)
            # the label's length, and the bottom axis below it: its numbers and its own label, two lines of the font
            label = self.fontMetrics().horizontalAdvance(self.y_label) + 2 * self.fontMetrics().lineSpacing() + 40
            self.setMinimumSize(160, max(120, label))

    def setLabel(self, axis: str, text: str | None = None, *args: Any, **kwargs: Any) -> None:  # noqa: N802 (pyqtgraph's name)
        self.getPlotItem().setLabel(axis, text, *args, **kwargs)
        if axis == "left" and text:
            self.y_label = text
            self._fit_label()

    def curve(self, name: str, *, dashed: bool = False, symbol: str | None = None, colour: str | None = None,
              width: float = 2, alpha: int = 255, item_with_points: bool = False) -> str:
        """Create a curve once, shown (returns its colour); later calls return the existing one's colour.
        ``item_with_points``: its pyqtgraph item is made at the redraw that draws its first points, not now."""
        if name in self.styles:
            return str(self.styles[name]["colour"])
        colour = colour or PALETTE[len({st["colour"] for st in self.styles.values()}) % len(PALETTE)]
        self.styles[name] = {"colour": colour, "dashed": dashed, "symbol": symbol, "width": width, "alpha": alpha,
                             "item_with_points": item_with_points}
        self.buffers[name] = _Buffer()
        self._show_item(name)
        return colour

    def _show_item(self, name: str) -> None:
        """The curve ``name`` shown: its item made now, or, for a curve whose item waits for points and has none
        yet, at the redraw that draws its first."""
        if self.styles[name]["item_with_points"] and not self.buffers[name].n:
            self._waiting[name] = None
        else:
            self._make_item(name)

    def _make_item(self, name: str) -> None:
        st = self.styles[name]
        self.curves[name] = self.plot(*self.points(name), name=name, symbol=st["symbol"], symbolSize=7,
                                      connect="finite")
        self._colour_item(name)

    def _colour_item(self, name: str) -> None:
        """A curve's pen and points in its colour, made readable on the plot's background (a light green
        vanished on white, a navy on a talk's black: explorer.widgets.readable)."""
        st = self.styles[name]
        colour = readable(st["colour"], self.backgroundBrush().color(), MARKS)
        qcolour = pg.mkColor(colour)
        qcolour.setAlpha(st["alpha"])
        self.curves[name].setPen(pg.mkPen(qcolour, width=st["width"], style=Qt.PenStyle.DashLine if st["dashed"]
                                          else Qt.PenStyle.SolidLine))
        self.curves[name].setSymbolBrush(colour)

    def add_mark(self, item: Any, colour: str, width: float = 2) -> None:
        """A marker drawn over the curves (a line at the step shown, ticks at the checkpoints) in ``colour``, made
        readable on the plot's background as the curves are, and again when it changes."""
        self._marks.append((item, colour, width))
        self.addItem(item)
        if isinstance(item, pg.InfiniteLine):  # the legend keeps out of its way (place_legend)
            item.sigPositionChanged.connect(self._legend_timer.start)
            item.visibleChanged.connect(self._legend_timer.start)
        self._colour_mark(item, colour, width)

    def _colour_mark(self, item: Any, colour: str, width: float) -> None:
        shown = readable(colour, self.backgroundBrush().color(), MARKS)
        if isinstance(item, pg.ScatterPlotItem):
            item.setBrush(pg.mkBrush(shown))
        else:
            item.setPen(pg.mkPen(shown, width=width))

    def setBackground(self, background: Any) -> None:  # noqa: N802 - pyqtgraph's name
        """A new background (the theme's, a talk's black): the curves' and marks' colours chosen again for it."""
        super().setBackground(background)
        for name in getattr(self, "curves", {}):
            self._colour_item(name)
        for mark in getattr(self, "_marks", []):
            self._colour_mark(*mark)

    def run_curves(self, run: str) -> str:
        """A training run's two loss curves, created once: the smoothed loss bold in the run's colour
        (returned), the raw logged losses faint beside it."""
        colour = self.curve(f"{run} smoothed", width=3, item_with_points=True)
        self.curve(run, colour=colour, width=1, alpha=110, item_with_points=True)
        return colour

    def append_loss(self, run: str, x: float, loss: float) -> None:
        """A logged loss of a run: the raw point, and the debiased moving average (a NaN leaves a gap)."""
        self.run_curves(run)
        self.append(run, x, loss)
        if loss == loss:
            self.append(f"{run} smoothed", x, self.smoother(run, loss))

    def set_run_visible(self, run: str, visible: bool) -> None:
        self.set_visible(run, visible)
        self.set_visible(f"{run} smoothed", visible)

    def append(self, name: str, x: float, y: float) -> None:
        self.curve(name)
        self.buffers[name].append(float(x), float(y) if y is not None else np.nan)
        if name in self.curves or name in self._waiting:
            self._dirty.add(name)

    def set_visible(self, name: str, visible: bool) -> None:
        """Show or hide a curve; the legend lists only the curves shown. A hidden curve keeps its points and
        look, not its pyqtgraph item."""
        if name not in self.styles or self.shown(name) == visible:
            return
        if visible:
            self._show_item(name)  # (with every point so far; the legend lists it)
        elif name in self._waiting:
            del self._waiting[name]
            self._dirty.discard(name)
        else:
            item = self.curves.pop(name)
            self.legend.removeItem(item)
            self.removeItem(item)
            self._dirty.discard(name)
        self._show_empty(not self.has_points())
        self.redrawn.emit()

    def remove_curve(self, name: str) -> None:
        """Forget a curve: its points, its look and its item (a no-op for a curve it does not have)."""
        item = self.curves.pop(name, None)
        if item is not None:
            self.legend.removeItem(item)
            self.removeItem(item)
        self._waiting.pop(name, None)
        self.styles.pop(name, None)
        self.buffers.pop(name, None)
        self._dirty.discard(name)
        self._x_scale.pop(name, None)
        self.smoother.forget(name)
        self._show_empty(not self.has_points())
        self.redrawn.emit()

    def clear_curves(self) -> None:
        for item in self.curves.values():
            self.removeItem(item)
        self.legend.clear()
        self.curves.clear()
        self._waiting.clear()
        self.styles.clear()
        self.buffers.clear()
        self._dirty.clear()
        self._x_scale.clear()
        self.smoother.forget()
        self._show_empty(True)
        self.redrawn.emit()

    def set_x_scale(self, name: str, factor: float) -> None:
        """Draw curve ``name``'s points at ``factor`` times their x (a run's steps as examples seen: its batch),
        at the next redraw: its points stay as they were given."""
        if self._x_scale.get(name, 1.0) == factor:
            return
        self._x_scale[name] = factor
        if name in self.curves or name in self._waiting:
            self._dirty.add(name)

    def points(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """A curve's points as drawn (its x scaled: set_x_scale)."""
        x, y = self.buffers[name].data()
        factor = self._x_scale.get(name, 1.0)
        return (x * factor if factor != 1.0 else x), y

    def place_legend(self) -> None:
        """The legend moved to the corner the curves, as drawn, leave emptiest (unless the user dragged it)."""
        if self.isVisible():
            marks = [item.value() for item, _, _ in self._marks  # (a step's marker: the legend is not put over it)
                     if isinstance(item, pg.InfiniteLine) and item.angle == 90 and item.isVisible()]
            place_legend(self.legend, self.getPlotItem().vb, [item.getData() for item in self.curves.values()], marks)

    def x_extent(self) -> tuple[float, float] | None:
        """The x the curves shown span, as drawn (scaled: set_x_scale); None while they have no points."""
        ends = []
        for name in [*self.curves, *self._waiting]:
            buffer, factor = self.buffers[name], self._x_scale.get(name, 1.0)
            if buffer.n:
                ends.append((buffer.lo * factor, buffer.hi * factor))
        return (min(lo for lo, _ in ends), max(hi for _, hi in ends)) if ends else None

    def redraw_now(self) -> None:
        self._redraw(hidden_too=True)

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._redraw()  # what came while it was hidden
        self._legend_timer.start()  # (its place was not looked for while hidden)

    def _redraw(self, hidden_too: bool = False) -> None:
        """The curves given the points that came since the last redraw (four times a second at most). A plot
        not on screen (its tab not shown) waits until it is: each redraw sets pyqtgraph's autorange, bounds and
        axes going, and a training's curves went on being drawn on every tab the user was not looking at."""
        if not self._dirty or not (hidden_too or self.isVisible()):
            return
        # curves given their first points: their items, made with them in the order the curves were shown, so that
        # a run's stack and are listed as they were when made at its start (its faint raw losses over its smoothed)
        made = [n for n in self._waiting if n in self._dirty]
        for name in made:
            del self._waiting[name]
            self._make_item(name)
        for name in self._dirty.difference(made):
            self.curves[name].setData(*self.points(name))
        self._dirty.clear()
        self._show_empty(not self.has_points())
        self.redrawn.emit()
