"""The attention panel's "Average / rollout" view: per layer, the average of its heads, the attention rollout up to
it (how much each input token flows into each position), or with a compared model its average and A − B."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from explorer.widgets.block_spin import BlockSpin, block_label
from explorer.widgets.heatmap import Heatmap

MIXES = ("average over heads", "attention rollout", "compared: difference of the averages (A − B)",
         "compared: the other model's average (B)")


class MixPage(QWidget):
    """``draw(result)`` shows the chosen mix of an ``AttentionResult`` at the chosen layer."""

    def __init__(self, layers: int = 0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self.mix = QComboBox()
        self.mix.addItems(list(MIXES))
        self.mix_layer = BlockSpin()
        if layers:
            self.mix_layer.setMaximum(layers - 1)
        self.mix_map = Heatmap()
        row = QHBoxLayout()
        row.addWidget(self.mix)
        row.addWidget(QLabel("layer"))
        row.addWidget(self.mix_layer)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.mix_map, 1)
        self.mix.currentIndexChanged.connect(lambda _: self.draw(self.result))
        self.mix_layer.valueChanged.connect(lambda _: self.draw(self.result))

    def set_layers(self, layers: int) -> None:
        self.mix_layer.blockSignals(True)
        self.mix_layer.setMaximum(layers - 1)
        self.mix_layer.blockSignals(False)

    def clear(self) -> None:
        self.result = None
        self.mix_map.clear_matrix()

    def draw(self, result: Any) -> None:
        self.result = result
        if result is None:
            return
        maps = result.maps
        mode = self.mix.currentIndex()
        layer = self.mix_layer.value()
        other = result.other
        if mode >= 2:
            if other is None:
                self.mix_map.clear_matrix()
                self.mix_map.plot.setTitle(result.why_not_compared)
                return
            b = other.average[min(layer, len(other.average) - 1)]
            if mode == 3:
                self.mix_map.show_matrix(b, other.tokens, other.tokens, f"{other.name}, {block_label(layer)}: the "
                                         "average of its heads")
                return
            self.mix_map.show_matrix(result.average[layer] - b, maps.tokens, maps.tokens,
                                     f"{block_label(layer)}: {result.name} − {other.name} (red: A attends more)",
                                     signed=True)
            return
        rolled = mode == 1
        matrix = (result.rollout if rolled else result.average)[layer]
        title = (f"rollout up to {block_label(layer)}: how much each input token flows into each position" if rolled
                 else f"{block_label(layer)}: the average of its heads")
        self.mix_map.show_matrix(matrix, maps.tokens, maps.tokens, title)
