"""pyqtgraph's views without a cached background. pyqtgraph turns on Qt's ``CacheBackground`` for every view: a
pixmap the size of the view, kept to paint a background that is one solid colour here. Each view holds one, of
every size it has been (2–30 MB at the app's larger zooms), and they were 620 MB of the heap the chaos bench
measured (heaptrack: ``QGraphicsView::paintEvent`` → ``QPixmap``; bench/robustness/RESULTS.md). Without the
cache Qt fills the solid background as it paints, which is no slower."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtWidgets import QGraphicsView

View = TypeVar("View", bound=QGraphicsView)


def without_background_cache(view: View) -> View:
    """``view`` painting its background each time instead of keeping a pixmap of it; returns ``view``."""
    view.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)
    view.resetCachedContent()
    return view
