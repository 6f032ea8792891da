"""The app's tab widgets, in document mode: no frame drawn around the pages.

Qt's Fusion style paints a tab widget's frame by filling the whole page area with the frame's colour before the
page paints over it, and the window repaints the tab widgets under every change in a page. Measured in the chaos
bench (bench/robustness/event_timer.py), the main tab widget's paint events were the GUI thread's largest single
cost in its stalls; without the frame the whole window repaints in half the time (7.7 → 3.4 ms at rest, 10.5 →
2.8 ms beside a busy worker; bench/robustness/RESULTS.md)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize
from PySide6.QtWidgets import QFrame, QScrollArea, QStyle, QTabWidget, QWidget


def tab_widget(parent: QWidget | None = None) -> QTabWidget:
    """A tab widget whose pages sit on the window's background, with no frame painted around them."""
    tabs = QTabWidget(parent)
    tabs.setDocumentMode(True)
    return tabs


class PageSizedTabs(QTabWidget):
    """A tab widget that asks for the room of the page on show, not of its largest page (QTabWidget's size hints are
    the largest of all its pages'): the lab's heads page, taller than the others, squeezed a talk's prediction bars
    above a causal-tracing step to a strip with the answer cut off. A page shown (whether or not the widget's signals
    are blocked, as a scene opens a tab) asks the layout again."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)  # (as tab_widget's)

    def addTab(self, page: QWidget, label: str) -> int:  # type: ignore[override]  # noqa: N802 - Qt's name
        page.installEventFilter(self)
        return super().addTab(page, label)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Show:
            self.updateGeometry()
        return False

    @staticmethod
    def _around(bar: QSize, page: QSize) -> QSize:
        return QSize(max(bar.width(), page.width()), bar.height() + page.height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        page = self.currentWidget()
        return self._around(self.tabBar().sizeHint(), page.sizeHint()) if page is not None else super().sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The page on show's smallest size under the tab bar's smallest (its tabs may scroll, as QTabWidget's)."""
        page = self.currentWidget()
        if page is None:
            return super().minimumSizeHint()
        return self._around(self.tabBar().minimumSizeHint(), page.minimumSizeHint())

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        page = self.currentWidget()
        return page is not None and page.hasHeightForWidth()

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        """The page on show's height for ``width`` (QTabWidget's is the tallest page's), under the tab bar."""
        page = self.currentWidget()
        if page is None or not page.hasHeightForWidth():
            return -1
        return self.tabBar().sizeHint().height() + page.heightForWidth(width)


def _switched(_index: int) -> None:
    from explorer.window_work import window_working

    window_working()


class PanelArea(QScrollArea):
    """A panel's page: the panel fills it, and scrolls only when the page is smaller than the panel's *smallest*
    size. Qt's resizable scroll area gives a panel whose layout has a height for its width (any word-wrapped
    label) its preferred height instead: the Run history was laid out 1,094 pixels tall in a 760-pixel window, so
    its second plot was below the page, to be scrolled to, though both fitted."""

    def __init__(self, panel: QWidget) -> None:
        super().__init__()
        self.setWidgetResizable(False)  # sized here, to the page or to the panel's smallest size
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.viewport().setAutoFillBackground(False)  # (the window's background shows, as without the area)
        self.setWidget(panel)
        panel.setAutoFillBackground(False)
        panel.installEventFilter(self)  # its smallest size changes with its content, the zoom, the font

    def _smallest_height(self, panel: QWidget, width: int) -> int:
        layout = panel.layout()
        if layout is not None and layout.hasHeightForWidth():
            return max(int(layout.totalMinimumHeightForWidth(width)), panel.minimumHeight())
        return max(int(panel.minimumSizeHint().height()), panel.minimumHeight())

    def fit(self) -> None:
        panel = self.widget()
        if panel is None:
            return
        room = self.maximumViewportSize()  # the page without scroll bars
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)
        least = max(panel.minimumSizeHint().width(), panel.minimumWidth())
        width = max(room.width(), least)
        height = self._smallest_height(panel, width)
        if height > room.height():  # a vertical bar takes its width from the page
            width = max(room.width() - bar, least)
            height = self._smallest_height(panel, width)
        vertical = height > room.height()
        horizontal = width > room.width() - (bar if vertical else 0)  # narrower than the panel's least: a bar below
        size = (width, max(height, room.height() - (bar if horizontal else 0)))
        if (panel.width(), panel.height()) != size:
            panel.resize(*size)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            handled = super().eventFilter(watched, event)
            self.fit()
            return handled
        return super().eventFilter(watched, event)


class PanelTabs(QTabWidget):
    """The main window's tabs: each panel in a scroll area of its own, so that the window's smallest size is not
    its tallest panel's. Without it the Run history's plots made the window at least 865 pixels tall at the
    normal zoom (a 768-pixel laptop could not show it whole) and 1,261 at zoom 6 (a 1080-pixel projector
    neither); now a panel scrolls when the window is smaller than the panel needs, and fills it otherwise.
    ``widget``, ``currentWidget``, ``indexOf`` and ``setCurrentWidget`` speak of the panels, not their scroll
    areas."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocumentMode(True)
        # the panel shown is laid out and painted (and its views built, the first time) in the next turns: the
        # workers' models wait for it (explorer.window_work)
        self.currentChanged.connect(_switched)

    def addTab(self, panel: QWidget, label: str) -> int:  # type: ignore[override]  # noqa: N802 - Qt's name
        return super().addTab(PanelArea(panel), label)  # the panel fills its page; scroll bars below its least size

    def widget(self, index: int) -> Any:
        area = super().widget(index)
        return area.widget() if isinstance(area, QScrollArea) else area

    def currentWidget(self) -> Any:  # noqa: N802 - Qt's name
        return self.widget(self.currentIndex())

    def indexOf(self, panel: QWidget) -> int:  # type: ignore[override]  # noqa: N802 - Qt's name
        for i in range(self.count()):
            if self.widget(i) is panel:
                return i
        return -1

    def setCurrentWidget(self, panel: QWidget) -> None:  # type: ignore[override]  # noqa: N802 - Qt's name
        index = self.indexOf(panel)
        if index >= 0:
            self.setCurrentIndex(index)


def width_short(tabs: PanelTabs) -> int:
    """How many pixels narrower than the panel shown needs its page is (0 where it fits): what a window made
    narrower should take from its side docks before the panel scrolls sideways."""
    area = QTabWidget.currentWidget(tabs)
    panel = area.widget() if isinstance(area, QScrollArea) else None
    if not isinstance(area, QScrollArea) or panel is None:
        return 0
    least = max(panel.minimumSizeHint().width(), panel.minimumWidth())
    return max(0, least - area.maximumViewportSize().width())
