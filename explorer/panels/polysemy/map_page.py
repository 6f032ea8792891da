"""The polysemy lens's Map tab: its projection (PCA, t-SNE, UMAP) and the map of a word's occurrences, whose plot is
built the first time the tab is shown (or ``map`` is asked for), with the last answer's map drawn then: most steps
and sessions never open it, and it was a third of the lens's build."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from explorer.widgets.occurrence_map import OccurrenceMapView

METHODS = {"PCA": "pca", "t-SNE": "tsne", "UMAP": "umap"}  # what the box says -> engine.api.occurrence_map's method


class MapPage(QWidget):
    def __init__(self, colours: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colours = colours  # the typed sentences' colours (the lens's)
        self.method = QComboBox()
        self.method.addItems(list(METHODS))
        self._map: OccurrenceMapView | None = None
        self.drawn: tuple[Any, str, str] = (None, "", "")  # (the map or None, why not, the word)
        self._layout = QVBoxLayout(self)
        row = QHBoxLayout()
        row.addWidget(QLabel("Projection:"))
        row.addWidget(self.method)
        row.addStretch(1)
        self._layout.addLayout(row)

    def method_name(self) -> str:
        return METHODS[self.method.currentText()]

    @property
    def map(self) -> OccurrenceMapView:
        """The plot, built (with the last answer's map) the first time it is needed."""
        if self._map is None:
            self._map = OccurrenceMapView()
            self._layout.addWidget(self._map, 1)
            self.draw(*self.drawn)
        return self._map

    def draw(self, occ_map: Any, why_not: str, word: str) -> None:
        self.drawn = (occ_map, why_not, word)
        if self._map is None:
            return  # drawn when the tab is first shown
        if occ_map is None:
            self._map.show_message(why_not)
        else:
            self._map.show_map(occ_map, word, self.colours)
