"""A scatter of a word's occurrences (corpus ones small, typed ones large and numbered), coloured by
sense cluster; hovering a point shows its sentence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg

from explorer.widgets.plot_view import MenuOnDemand, themed_text, without_background_cache

CLUSTER_COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
# typed occurrences numbered on the map; more are drawn as rings without numbers. Each number is a text item
# (a QTextDocument): a text of "bank " × 400 made 400 of them, 5.4 s of the GUI thread beside busy workers
NUMBERED = 20


class OccurrenceMapView(pg.PlotWidget):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent, viewBox=MenuOnDemand())  # (the theme's background: pyqtgraph's default)
        without_background_cache(self)
        self.hideAxis("left")
        self.hideAxis("bottom")
        self.scatter = pg.ScatterPlotItem(hoverable=True, tip=lambda x, y, data: data, hoverSize=14)
        self.addItem(self.scatter)
        self.labels: list[pg.TextItem] = []
        self.title = themed_text(anchor=(0, 0))
        self.addItem(self.title)

    def _clear_labels(self) -> None:
        for item in self.labels:
            self.removeItem(item)
        self.labels.clear()

    def show_message(self, text: str) -> None:
        self.scatter.clear()
        self._clear_labels()
        self.title.setText(text)

    def show_map(self, occ_map: Any, word: str, typed_colours: list[str]) -> None:
        self._clear_labels()
        pts = occ_map.points
        spots = []
        typed_number = 0
        for i, (x, y) in enumerate(pts):
            colour = CLUSTER_COLOURS[int(occ_map.clusters[i]) % len(CLUSTER_COLOURS)]
            if occ_map.typed[i]:
                ring = typed_colours[typed_number % len(typed_colours)]
                spots.append({"pos": (x, y), "size": 18, "brush": pg.mkBrush(colour), "pen": pg.mkPen(ring, width=3),
                              "symbol": "s", "data": occ_map.sentences[i]})
                if typed_number < NUMBERED:
                    label = pg.TextItem(str(typed_number + 1), color=ring, anchor=(-0.3, 1.2))
                    label.setPos(float(x), float(y))
                    self.addItem(label)
                    self.labels.append(label)
                typed_number += 1
            else:
                spots.append({"pos": (x, y), "size": 8, "brush": pg.mkBrush(colour), "pen": pg.mkPen(None),
                              "data": occ_map.sentences[i]})
        self.scatter.setData(spots)
        self.title.setText(f"“{word}”: {int((~occ_map.typed).sum())} corpus occurrences, {occ_map.method.upper()}, "
                           f"{occ_map.k} sense cluster(s) (silhouette {occ_map.silhouette:.2f})"
                           + (f"\nthe first {NUMBERED} of {typed_number} typed occurrences numbered" if typed_number > NUMBERED else ""))
        span = np.ptp(pts, axis=0).max() if len(pts) else 1.0
        self.title.setPos(float(pts[:, 0].min()), float(pts[:, 1].max() + 0.15 * span))
        self.autoRange()
