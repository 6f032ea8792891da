"""What the lab's attribution and heads pages share: the word a prediction is explained as (empty: the model's own
prediction) and the foil it is explained against, on one row, and which question the page has on screen."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit


class WordAndFoil:
    """Mixed into a page that asks ``(models, text, target, foil)`` questions and keeps its answer in ``result``."""

    result: Any
    asked: tuple[tuple[str, ...], str, str, str] | None

    def make_fields(self) -> QHBoxLayout:
        """The "explain … rather than …" row (the page adds its own controls to it)."""
        self.target = QLineEdit()
        self.target.setPlaceholderText("the prediction, or a word (are)")
        self.foil = QLineEdit()
        self.foil.setPlaceholderText("optional: a word it is explained against (is)")
        row = QHBoxLayout()
        for label, widget in (("explain", self.target), ("rather than", self.foil)):
            row.addWidget(QLabel(label))
            row.addWidget(widget, 1)
        return row

    def fields(self) -> tuple[str, str]:
        """The word and the foil as typed ("" where left empty)."""
        return self.target.text().strip(), self.foil.text().strip()

    def answers(self, names: tuple[str, ...], text: str) -> bool:
        """Whether the answer on screen is these models' on ``text`` with the fields as they are."""
        return self.result is not None and self.asked == (names, text, *self.fields())
