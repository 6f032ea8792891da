"""A choice (combo box) as narrow as a short choice: the longest choice made its row wider than its column at a
talk's zoom (a form that scrolled sideways, a tab wider than a laptop's window). Its list still opens as wide as its
longest choice (Qt widens the popup to its contents)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

LETTERS = 8  # the closed box: as wide as this many letters (it grows with its row)


def narrow_choice(combo: QComboBox) -> QComboBox:
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(LETTERS)
    view = combo.view()  # and its list at least as wide as its choices of now (Qt widens it to later ones as it opens)
    view.setMinimumWidth(view.sizeHintForColumn(0) + 2 * view.frameWidth())
    return combo
