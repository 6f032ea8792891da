"""What every layer predicts (the logit lens) as a grid: one row per layer, the final layer at the top,
the top words with their probabilities; and the plain warning that lower layers were not trained to be
read this way."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)


class LogitLensTable(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)

    def show_lens(self, name: str, lens: Any) -> None:
        layers = list(lens.layers)
        k = max(len(layer.tokens) for layer in layers) if layers else 0
        self.table.clear()
        self.table.setRowCount(len(layers))
        self.table.setColumnCount(k)
        self.table.setHorizontalHeaderLabels([f"#{i + 1}" for i in range(k)])
        last = len(layers) - 1
        labels = []
        for row, layer_index in enumerate(range(last, -1, -1)):  # the final layer at the top
            layer = layers[layer_index]
            labels.append("output" if layer_index == last else ("embeddings" if layer_index == 0 else f"layer {layer_index}"))
            for col, (token, p) in enumerate(zip(layer.tokens, layer.probs, strict=True)):
                self.table.setItem(row, col, QTableWidgetItem(f"{token}  {p:.0%}"))
        self.table.setVerticalHeaderLabels(labels)
        self.note.setText(f"{name}, what every layer predicts at token {lens.position} (the logit lens): "
                          f"{lens.note}.")

    def show_message(self, message: str) -> None:
        self.table.setRowCount(0)
        self.note.setText(message)
