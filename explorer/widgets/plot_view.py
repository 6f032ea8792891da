"""pyqtgraph's views without a cached background. pyqtgraph turns on Qt's ``CacheBackground`` for every view: a
pixmap the size of the view, kept to paint a background that is one solid colour here. Each view holds one, of
every size it has been (2–30 MB at the app's larger zooms), and they were 620 MB of the heap the chaos bench
measured (heaptrack: ``QGraphicsView::paintEvent`` → ``QPixmap``; bench/robustness/RESULTS.md). Without the
cache Qt fills the solid background as it paints, which is no slower.

Every view made here is also listed (``plot_views``), so the theme and the zoom reach the plots without walking
every widget of the window: ``findChildren`` with a Python type makes a wrapper for each widget it passes (Qt's
own ones too), which the zoom did at every step and which stayed alive after their widgets were deleted.
The chaos bench's profile had that walk among the GUI thread's largest costs (bench/robustness/RESULTS.md).

The zoom's font reaches the views shown at once and a hidden one when it is next shown: each view's axes laid out
again for a font nobody sees cost a third of a zoom on the tabs without plots (10 of 35 ms; the chaos bench's stalls
followed zooms most). The theme's colours do the same: recolouring the axes of every view, in Python, was two-thirds
of a change of theme's own call (bench/speed/RESULTS.md, "The window's longest freeze after each kind of action")."""

from __future__ import annotations

import weakref
from typing import Any, TypeVar, cast

import pyqtgraph as pg
import shiboken6
from pyqtgraph.graphicsItems.ViewBox.ViewBoxMenu import ViewBoxMenu
from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QGraphicsView, QWidget

View = TypeVar("View", bound=QGraphicsView)
# the light theme's plot colours, pyqtgraph's until the window sets its theme (explorer.theme.apply_theme): a view is
# made with the theme's background, and pyqtgraph's own default is black
LIGHT_PLOTS = {"background": "w", "foreground": "#333333"}
pg.setConfigOptions(**LIGHT_PLOTS)


def without_background_cache(view: View) -> View:
    """``view`` painting its background each time instead of keeping a pixmap of it, listed for the theme and
    given the zoomed font when it is shown (a view made after the zoom was set: one built when its tab is first
    shown); returns ``view``. Call it once the view has its axes."""
    view.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
    view.resetCachedContent()
    _VIEWS.add(view)
    if _THEME_COLOURS:  # (made with the theme's colours: pyqtgraph's configured ones)
        setattr(view, _COLOURS_GIVEN, _THEME_COLOURS[0])
    view.installEventFilter(_colours_on_show())
    for item in view.items():
        if isinstance(item, pg.PlotItem):
            _options_in_the_font_when_opened(item)
    if _PLOT_FONT:
        _zoom_or_wait([view], _PLOT_FONT[0])
    return view


_VIEWS: weakref.WeakSet[Any] = weakref.WeakSet()  # every view made by without_background_cache, while alive
_PLOT_FONT: list[QFont] = []  # the presentation zoom's font, once it is set (explorer.theme.apply_zoom)
_FONT_GIVEN = "zoom_font_given"  # set on a view: the font of _PLOT_FONT its axes were last given


def plot_font() -> QFont | None:
    """The presentation zoom's font the plots are given, or None before the zoom is first set."""
    return _PLOT_FONT[0] if _PLOT_FONT else None


def set_plot_font(font: QFont) -> None:
    """Every plot's axes and notes in ``font`` (they keep their own fonts, not the application's): the plots shown
    now at once, the others when they are next shown, and every plot made from now on."""
    _PLOT_FONT[:] = [font]
    _zoom_or_wait(plot_views(), font)


def _zoom_or_wait(views: list[Any], font: QFont) -> None:
    """``font`` on the views shown; the others wait for it, watched until they are shown. Only a view waiting for
    the font is watched: a Python event filter sees every event of its view (each paint and mouse move), and on
    the window's thread each Python call can wait for the GIL."""
    _zoom([view for view in views if view.isVisible()], font)
    for view in views:
        if not view.isVisible():
            view.installEventFilter(_font_on_show())  # (installed twice, it is still called once)


class _FontOnShow(QObject):
    """Gives a waiting view the zoom's font as it is shown, or as it is first polished (a view made after the zoom
    and grabbed without being shown: a talk's pages exported), and stops watching it."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() in _WHEN:
            watched.removeEventFilter(self)
            if _PLOT_FONT and getattr(watched, _FONT_GIVEN, None) is not _PLOT_FONT[0]:
                _zoom([watched], _PLOT_FONT[0])
        return False


_WHEN = (QEvent.Type.Show, QEvent.Type.Polish)


_FILTER: list[_FontOnShow] = []


def _font_on_show() -> _FontOnShow:
    if not _FILTER:
        _FILTER.append(_FontOnShow())
    return _FILTER[0]


def _zoom(views: list[Any], font: QFont) -> None:
    from PySide6.QtWidgets import QLabel

    from explorer.widgets.descendants import descendants

    for widget in views:
        setattr(widget, _FONT_GIVEN, font)
        for label in descendants(widget, QLabel):  # a note over the plot (LossPlot's "nothing yet")
            label.setFont(font)
        for item in widget.items():
            if isinstance(item, pg.AxisItem):
                item.label.setFont(font)  # first: the axis sizes itself for its numbers and its label in setStyle
                item.setStyle(tickFont=font)


def _options_in_the_font_when_opened(item: Any) -> None:
    """pyqtgraph's "Plot Options" menu of ``item`` in a font of its own, given the application's as it opens.
    Each plot item keeps that menu, its six submenus and their six forms as 13 hidden windows of their own (the
    forms hold the plot's settings, so they cannot wait to be made): the zoom's change of the application's font
    reached every one of them, shown or not, and laid each form out again (beside 20 more plots, a zoom on the
    Predictions tab took 15.5 ms with them, 13.4 without; on the Fine-tune tab 41.3 and 33.0:
    bench/robustness/RESULTS.md). A widget whose font is set does not take the application's, and the menu takes
    it when the user opens it."""
    _in_the_font_of_the_moment(item)
    plot = weakref.ref(item)  # (the menu's connection holding the plot item, or its menus, would keep them for good)
    item.ctrlMenu.aboutToShow.connect(lambda: _in_the_font_of_the_moment(plot()))


def _in_the_font_of_the_moment(item: Any) -> None:
    from PySide6.QtWidgets import QApplication

    if item is None or item.ctrlMenu is None:  # (gone, or closed: pyqtgraph lets the menu go)
        return
    menus = [item.ctrlMenu] + [action.menu() for action in item.ctrlMenu.actions() if action.menu() is not None]
    for window in menus + [getattr(item.ctrl, name) for name in _OPTION_FORMS]:
        window.setFont(QApplication.font())


_OPTION_FORMS = ("transformGroup", "decimateGroup", "averageGroup", "alphaGroup", "gridGroup", "pointsGroup")


LEGEND_CARD_ALPHA = 215  # of 255: how much of what runs under a legend its card hides
PLOT_COLOURS = "plot_colours"  # set on a window whose plots keep colours of their own: (background, foreground)


def colour_views(views: list[Any], background: Any, foreground: Any) -> None:
    """``views`` (plots, heat maps, grids) on ``background`` with their axes, grid lines, legends and themed notes
    in ``foreground``."""
    from explorer.widgets.plot_grid import set_grid_colours

    for widget in views:
        setattr(widget, _COLOURS_GIVEN, (background, foreground))
        widget.setBackground(background)
        for item in widget.items():
            if isinstance(item, pg.AxisItem):
                item.setTextPen(foreground)
                item.setPen(foreground)
                if item.grid is not False:
                    set_grid_colours(item, foreground, background)
            elif isinstance(item, pg.TextItem) and getattr(item, THEMED, False):
                item.setColor(foreground)
            elif isinstance(item, pg.LegendItem):
                item.setLabelTextColor(foreground)
                # on a card of the background, a little see-through: its names stay readable where a curve runs
                # under it (a continued run's loss, flat at the top right, crossed "loss smoothed")
                card = QColor(pg.mkColor(background))
                card.setAlpha(LEGEND_CARD_ALPHA)
                item.setBrush(pg.mkBrush(card))
                for _, label in item.items:
                    label.setText(label.text, color=foreground)


def own_colours(view: QWidget) -> Any:
    """The colours of ``view``'s window's plots when that window keeps its own (a talk's), else None: the theme's."""
    return getattr(view.window(), PLOT_COLOURS, None)


_THEME_COLOURS: list[tuple[Any, Any]] = []  # the theme's plot colours, (background, foreground), once it is set
_COLOURS_GIVEN = "plot_colours_given"  # set on a view: the (background, foreground) it was last given


def set_theme_colours(background: Any, foreground: Any) -> None:
    """The theme's plot colours on every view whose window does not keep its own (a talk's): the views shown now at
    once, the others as they are next shown (each view's axes, grid and legend recoloured in Python on the window's
    thread: two-thirds of a change of theme's own call went on the plots of tabs nobody saw), and views made from
    now on."""
    colours = (background, foreground)
    _THEME_COLOURS[:] = [colours]
    themed = [view for view in plot_views() if own_colours(view) is None and _given(view) != colours]
    colour_views([view for view in themed if view.isVisible()], *colours)
    for view in themed:
        if not view.isVisible():
            view.installEventFilter(_colours_on_show())  # (installed twice, it is still called once)


def _given(view: Any) -> Any:
    return getattr(view, _COLOURS_GIVEN, None)


def _wanted_colours(view: QWidget) -> Any:
    """The colours ``view`` should have: its window's own (a talk's), else the theme's (None before it is set)."""
    colours = own_colours(view)
    if colours is None and _THEME_COLOURS:
        colours = _THEME_COLOURS[0]
    return colours


class _ColoursOnShow(QObject):
    """Gives a view the colours it should have as it is shown or first polished, and stops watching it: its window's
    own plot colours (a talk's black) for a view built after its window coloured the ones it had (a tab's view made
    on first show), or the theme's for a view that was hidden when the theme changed."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() in _WHEN:
            if event.type() == QEvent.Type.Polish and watched.parent() is None:
                return False  # polished before it was placed (a size asked for): its window is not known yet
            watched.removeEventFilter(self)
            colours = _wanted_colours(cast(QWidget, watched))
            if colours is not None and _given(watched) != colours:
                colour_views([watched], *colours)
        return False


_COLOURS_FILTER: list[_ColoursOnShow] = []


def _colours_on_show() -> _ColoursOnShow:
    if not _COLOURS_FILTER:
        _COLOURS_FILTER.append(_ColoursOnShow())
    return _COLOURS_FILTER[0]


THEMED = "follows_theme"  # set on a text item drawn in the theme's foreground: explorer.theme.apply_theme recolours it


def themed_text(text: str = "", **options: Any) -> Any:
    """A pyqtgraph ``TextItem`` in the theme's foreground (pyqtgraph's configured one now), recoloured when the
    theme changes: a title or note over a plot, readable on the dark theme's background as on the light one's."""
    item = pg.TextItem(text, color=pg.getConfigOption("foreground"), **options)
    setattr(item, THEMED, True)
    return item


def plot_views(within: QWidget | None = None) -> list[Any]:
    """The app's pyqtgraph views that Qt has not deleted (those under ``within`` when given), in no set order."""
    views = [v for v in list(_VIEWS) if shiboken6.isValid(v)]
    if within is None:
        return views
    return [v for v in views if v is within or within.isAncestorOf(v)]


class RecolouredPlot(pg.PlotWidget):
    """A plot that says when its background changes (the theme's, a talk's black), for a panel that chooses its
    curves' colours for the background they are drawn on (explorer.widgets.readable)."""

    background_changed = Signal()

    def setBackground(self, background: Any) -> None:  # noqa: N802 - pyqtgraph's name
        super().setBackground(background)
        self.background_changed.emit()


class MenuOnDemand(pg.ViewBox):
    """A pyqtgraph view box whose right-click menu (View All, the axes' ranges, the mouse mode, Export…) is
    built the first time it is opened, not with the plot: pass one as ``viewBox=`` to a ``PlotWidget``.
    pyqtgraph builds each view box's menu with two forms of axis controls, 48 widgets never seen unless asked
    for: a quarter of the Run history panel's build time (70 of 288 ms), built again for every talk step."""

    def __init__(self) -> None:
        super().__init__(enableMenu=False)
        self.state["enableMenu"] = True  # (the menu is on; only its making waits)

    def getMenu(self, ev: Any = None) -> Any:  # noqa: N802 - pyqtgraph's name
        if self.menu is None and self.menuEnabled():  # type: ignore[has-type]
            self.menu = ViewBoxMenu(self)
            self.updateViewLists()
        return self.menu

    def getContextMenus(self, event: Any) -> Any:  # noqa: N802 - pyqtgraph's name
        menu = self.getMenu(event)
        return menu.actions() if menu is not None else []
