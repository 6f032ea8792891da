"""A scatter of a word's occurrences (corpus ones small, typed ones large and numbered), coloured by
sense cluster; hovering a point shows its sentence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtGui import QFontInfo

from explorer.widgets.plot_view import (
    MenuOnDemand,
    own_colours,
    themed_text,
    without_background_cache,
)
from explorer.widgets.readable import MARKS, TALK_TEXT, TEXT, readable, readable_all

CLUSTER_COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]  # (made readable on the
# plot's background, as the typed occurrences' colours are: explorer.widgets.readable)
# typed occurrences numbered on the map; more are drawn as rings without numbers. Each number is a text item
# (a QTextDocument): a text of "bank " × 400 made 400 of them, 5.4 s of the GUI thread beside busy workers
NUMBERED = 20
POINT_TYPE_PX = 18  # the points grow with the type beyond this size (_point_scale)
TITLE_MARGIN = 8.0  # pixels around the title, which is set in the view's own pixels (not the data's)


class OccurrenceMapView(pg.PlotWidget):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent, viewBox=MenuOnDemand())  # (the theme's background: pyqtgraph's default)
        without_background_cache(self)
        self.hideAxis("left")
        self.hideAxis("bottom")
        self.scatter = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, hoverSize=14)
        self.addItem(self.scatter)
        self.labels: list[pg.TextItem] = []
        # the title in the view box's own pixels, at its top left, wrapped to its width: set among the data above the
        # points, a long title ran off a narrow plot's edge ("… 2 sense"), and the points were not kept from under it
        self.title = themed_text(anchor=(0, 0))
        box = self.getPlotItem().getViewBox()
        self.title.setParentItem(box)
        self.title.setFont(self.font())
        self.title.setPos(TITLE_MARGIN, TITLE_MARGIN / 2)
        self._fitted = False  # the range is the map's own (not the user's zoom or pan): fitted again on a resize
        self._drawn: tuple[Any, list[str]] | None = None  # the map shown and its typed occurrences' colours
        self._scale_drawn = 1.0  # the points' scale when they were drawn (_point_scale)
        self._brushes: dict[str, Any] = {}  # (_brush, _pen)
        self._pens: dict[tuple[str | None, float], Any] = {}
        box.sigResized.connect(self._refit)
        box.sigRangeChangedManually.connect(self._moved_by_hand)

    def changeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        """The title and the numbers in the view's font: the presentation zoom's, a talk's 28 px type (pyqtgraph's
        text items keep a font of their own, which stayed small on a projector)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            for item in (self.title, *self.labels):
                item.setFont(self.font())
            self._rescale()
            self._refit()

    def _rescale(self) -> None:
        """The points as big as the type now, if that changed their size: now if the map is shown, else as it is
        next shown (each zoom reaches every map, shown or not)."""
        if getattr(self, "_drawn", None) is None or self._point_scale() == self._scale_drawn:
            return
        if self.isVisible():
            self._draw_points()

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._rescale()

    def _clear_labels(self) -> None:
        for item in self.labels:
            self.removeItem(item)
        self.labels.clear()

    def show_message(self, text: str) -> None:
        self._drawn = None
        self.scatter.clear()
        self._clear_labels()
        self.title.setText(text)
        self._wrap_title()

    def _wrap_title(self) -> None:
        box = self.getPlotItem().getViewBox()
        self.title.setTextWidth(max(80.0, box.width() - 2 * TITLE_MARGIN))

    def _moved_by_hand(self, *_: Any) -> None:
        self._fitted = False

    def _refit(self) -> None:
        self._wrap_title()
        if self._fitted:
            self._fit()

    def _fit(self) -> None:
        """Every point in view, with the title's height left free above them."""
        self.autoRange()
        box = self.getPlotItem().getViewBox()
        height = box.height()
        if height <= 0 or not self.scatter.data.size:
            return
        (_, _), (low, high) = box.viewRange()
        free = min(0.6, (self.title.boundingRect().height() + TITLE_MARGIN) / height)  # its share of the height
        box.setYRange(low, low + (high - low) / (1.0 - free), padding=0)
        self._fitted = True

    def setBackground(self, background: Any) -> None:  # noqa: N802 - pyqtgraph's name
        """A new background (the theme's, a talk's black): the points' colours chosen again for it."""
        super().setBackground(background)
        if getattr(self, "_drawn", None) is not None:
            self._draw_points()

    def show_map(self, occ_map: Any, word: str, typed_colours: list[str]) -> None:
        self._drawn = (occ_map, typed_colours)
        typed_number = self._draw_points()
        self.title.setText(f"“{word}”: {int((~occ_map.typed).sum())} corpus occurrences, {occ_map.method.upper()}, "
                           + clusters_said(occ_map.k, occ_map.silhouette)
                           + (f"\nthe first {NUMBERED} of {typed_number} typed occurrences numbered" if typed_number > NUMBERED else ""))
        self._wrap_title()
        self._fit()

    def point_colours(self) -> tuple[list[str], list[str]]:
        """The clusters' colours and the typed occurrences' (their rings and numbers), readable on the plot's
        background: 3:1 for a point, 4.5:1 for a number, 7:1 in a talk."""
        background = self.backgroundBrush().color()
        typed = self._drawn[1] if self._drawn is not None else []
        return (readable_all(CLUSTER_COLOURS, background, MARKS),
                [readable(c, background, TALK_TEXT if own_colours(self) is not None else TEXT) for c in typed])

    def _point_scale(self) -> float:
        """How much bigger than on the window's type the points are drawn: as the type grows past 18 px (a talk's
        28 px body: half as big again), so a projected map's dots are not specks under big numbers."""
        return max(1.0, round(QFontInfo(self.font()).pixelSize() / POINT_TYPE_PX, 2))

    def _draw_points(self) -> int:
        """The map's points and numbers in the colours of the background now; how many typed occurrences."""
        assert self._drawn is not None
        occ_map = self._drawn[0]
        clusters, typed_colours = self.point_colours()
        self._clear_labels()
        scale = self._scale_drawn = self._point_scale()
        count = len(occ_map.points)
        brushes, pens, symbols = [], [], []
        sizes = np.full(count, 8 * scale)
        typed_number = 0
        for i in range(count):
            brushes.append(self._brush(clusters[int(occ_map.clusters[i]) % len(clusters)]))
            if occ_map.typed[i]:
                ring = typed_colours[typed_number % len(typed_colours)]
                sizes[i] = 18 * scale
                pens.append(self._pen(ring, 3 * scale))
                symbols.append("s")
                if typed_number < NUMBERED:
                    x, y = occ_map.points[i]
                    label = pg.TextItem(str(typed_number + 1), color=ring, anchor=(-0.3, 1.2))
                    label.setFont(self.font())
                    label.setPos(float(x), float(y))
                    self.addItem(label)
                    self.labels.append(label)
                typed_number += 1
            else:
                pens.append(self._pen(None, 0.0))
                symbols.append("o")
        points = np.asarray(occ_map.points, dtype=float).reshape(count, 2)
        self.scatter.setData(x=points[:, 0], y=points[:, 1], size=sizes, brush=brushes, pen=pens, symbol=symbols,
                             data=list(occ_map.sentences))
        return typed_number

    def _brush(self, colour: str) -> Any:
        """One brush per colour, kept: pyqtgraph's symbol atlas knows a style by its brush's and pen's identity, so
        a new brush per point drew every point's symbol again on each redraw (291 of them for "bank")."""
        if colour not in self._brushes:
            self._brushes[colour] = pg.mkBrush(colour)
        return self._brushes[colour]

    def _pen(self, colour: str | None, width: float) -> Any:
        """One pen per colour and width, kept (as ``_brush``); None: no outline."""
        if (colour, width) not in self._pens:
            self._pens[(colour, width)] = pg.mkPen(colour, width=width)
        return self._pens[(colour, width)]


def clusters_said(k: int, silhouette: float) -> str:
    """The clusters in words: "2 sense clusters (silhouette 0.40)", or, when no split into 2-6 clusters scored a
    positive silhouette, that the occurrences form one group (a silhouette of one cluster means nothing)."""
    if k < 2:
        return "one group (no split into clusters scored a positive silhouette)"
    return f"{k} sense clusters (silhouette {silhouette:.2f})"
