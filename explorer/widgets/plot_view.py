"""pyqtgraph's views without a cached background. pyqtgraph turns on Qt's ``CacheBackground`` for every view: a
pixmap the size of the view, kept to paint a background that is one solid colour here. Each view holds one, of
every size it has been (2–30 MB at the app's larger zooms), and they were 620 MB of the heap the chaos bench
measured (heaptrack: ``QGraphicsView::paintEvent`` → ``QPixmap``; bench/robustness/RESULTS.md). Without the
cache Qt fills the solid background as it paints, which is no slower.

Every view made here is also listed (``plot_views``), so the theme and the zoom reach the plots without walking
every widget of the window: ``findChildren`` with a Python type makes a wrapper for each widget it passes (Qt's
own ones too), which the zoom did at every step and which stayed alive after their widgets were deleted.
The chaos bench's profile had that walk among the GUI thread's largest costs (bench/robustness/RESULTS.md)."""

from __future__ import annotations

import weakref
from typing import Any, TypeVar

import shiboken6
from PySide6.QtWidgets import QGraphicsView, QWidget

View = TypeVar("View", bound=QGraphicsView)


def without_background_cache(view: View) -> View:
    """``view`` painting its background each time instead of keeping a pixmap of it; returns ``view``."""
    view.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
    view.resetCachedContent()
    _VIEWS.add(view)
    return view


_VIEWS: weakref.WeakSet[Any] = weakref.WeakSet()  # every view made by without_background_cache, while alive


def plot_views(within: QWidget | None = None) -> list[Any]:
    """The app's pyqtgraph views that Qt has not deleted (those under ``within`` when given), in no set order."""
    views = [v for v in list(_VIEWS) if shiboken6.isValid(v)]
    if within is None:
        return views
    return [v for v in views if v is within or within.isAncestorOf(v)]
