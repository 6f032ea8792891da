"""The row that chooses a view's model, and a second one to compare with: "Model: [A] [ ] compare with [B]".

It sits under the view's text, not beside it: beside it, at a talk's zoom in a laptop's window, the text field was
squeezed to a dozen letters ("e it was tired.", "t the [MASK] on Monday.")."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QWidget


def model_row(model: QWidget, compare: QCheckBox, other: QWidget) -> QHBoxLayout:
    row = QHBoxLayout()
    row.addWidget(QLabel("Model:"))
    row.addWidget(model, 1)
    row.addWidget(compare)
    row.addWidget(other, 1)
    return row
