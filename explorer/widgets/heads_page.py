"""The lab's fourth page: which attention heads the prediction needs (engine.api.head_ablation). Each head of each
layer is knocked out in turn (its output replaced by its mean over the text's tokens) and the table shows what
that costs log P(target), or log P(target) − log P(foil): layers as rows (the first at the bottom, as the lens
grid), heads as columns, red where a head pushed the prediction up, blue where it held it down. Model A's
heads; a word to explain and a foil are optional; it answers as the text changes while the page is open."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from explorer.failures import Outcome, attempt
from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export
from explorer.widgets.lens_grid import LayerTokenTable

ABOUT = ("Which attention heads the prediction needs: each head of each layer knocked out in turn (its output at "
         "every token replaced by its mean over the text's tokens, as TransformerLens's head ablations do) and the "
         "prediction measured again. Each cell: what that head's knock-out costs log P of the word (red: the head "
         "pushed it up; blue: it held it down). Name a word to explain another prediction, and a foil to ask why "
         "it rather than the foil.")
SHOWN_TOP = 3  # the heads named in the note


def heads_text(name: str, result: Any, brief: bool = False) -> str:
    """Under the table: what is explained and the heads that matter most (``brief``: a talk's, the heads only)."""
    head = f"{name}: P('{result.target.strip()}') = {result.p_target:.1%}"
    if result.foil:
        head += f", P('{result.foil.strip()}') = {result.p_foil:.1%}"
    strongest = ", ".join(f"layer {layer + 1} head {h} {effect:+.2f}" for layer, h, effect in
                          result.strongest(SHOWN_TOP) if effect > 0) or "none"
    weakest = np.unravel_index(int(np.argmin(result.effect)), result.effect.shape)
    least = float(result.effect[weakest])
    against = f"; the knock-out that helps it most: layer {weakest[0] + 1} head {weakest[1]} {least:+.2f}" \
        if least < 0 else ""
    notice = f" {result.notice[:1].upper()}{result.notice[1:]}." if result.notice else ""
    if brief:
        return f"{head}. Heads it needs most: {strongest}.{notice}"
    layers, heads = result.effect.shape
    return (f"{head}. Explained: {result.explained} = {result.value:+.2f}, each of {layers} × {heads} heads knocked out "
            f"in turn. Heads it needs most: {strongest}{against}.{notice} Double-click a head to see where it "
            "attends.")


class HeadsPage(QWidget):
    shown = Signal()  # a table is on screen
    failed = Signal(str)  # the question cannot be answered: why
    head_chosen = Signal(int, int)  # (layer from 0, head): a cell double-clicked, to see where that head attends

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self.asked: tuple[str, str, str, str] | None = None  # (model, text, target, foil) asked last
        self.name = ""  # the model whose heads are on screen
        self.brief = False  # a talk's step: the note says only the heads that matter
        self.target = QLineEdit()
        self.target.setPlaceholderText("the prediction, or a word (are)")
        self.foil = QLineEdit()
        self.foil.setPlaceholderText("optional: a word it is explained against (is)")
        self.button = QPushButton("Knock out")
        self.note = QLabel(ABOUT)
        self.note.setWordWrap(True)
        self.table = LayerTokenTable()
        row = QHBoxLayout()
        for label, widget in (("explain", self.target), ("rather than", self.foil)):
            row.addWidget(QLabel(label))
            row.addWidget(widget, 1)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        add_csv_export(self.table, self.table.export_rows, "head-knock-outs", png=True)
        self.table.cellDoubleClicked.connect(self._double_clicked)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._failed)

    def _double_clicked(self, row: int, column: int) -> None:
        if self.result is not None:
            self.head_chosen.emit(self.result.effect.shape[0] - 1 - row, column)  # (drawn with layer 1 at the bottom)

    def set_brief(self, on: bool) -> None:
        self.brief = on
        if self.result is not None:
            self.note.setText(heads_text(self.name, self.result, self.brief))

    def ask(self, handle: Any, text: str) -> None:
        """Knock out ``handle``'s heads on ``text`` with the page's target and foil; a newer question supersedes
        it."""
        if handle is None or not text.strip():
            return
        target, foil = self.target.text().strip(), self.foil.text().strip()
        self.asked = (handle.name, text, target, foil)
        self.note.setText(f"knocking out {handle.name}'s heads one by one…")

        def work() -> tuple[tuple[str, str, str, str], Outcome[Any]]:
            return (handle.name, text, target, foil), attempt(functools.partial(
                handle.head_ablation, text, target or None, foil or None))

        self.runner.submit(work)

    def answers(self, name: str, text: str) -> bool:
        """Whether the table on screen is this model's on ``text`` with the fields as they are."""
        return self.result is not None and self.asked == (name, text, self.target.text().strip(),
                                                          self.foil.text().strip())

    def _failed(self, message: str) -> None:
        self.result = None
        self.table.setRowCount(0)
        self.note.setText(message)
        self.failed.emit(message)

    def _show(self, answer: tuple[tuple[str, str, str, str], Outcome[Any]]) -> None:
        asked, outcome = answer
        if asked != self.asked:
            return  # a question asked since: its answer follows
        if outcome.failed:
            self._failed(outcome.message)
            return
        result: Any = outcome.value
        self.result, self.name = result, asked[0]
        layers, heads = result.effect.shape
        span = float(np.abs(result.effect).max()) or 1.0
        texts = [[f"{result.effect[layer, h]:+.2f}" for h in range(heads)] for layer in range(layers)]
        tips = [[f"{self.name}, layer {layer + 1}, head {h} knocked out: {result.explained} changes by "
                 f"{-result.effect[layer, h]:+.3f}; P('{result.target.strip()}') {result.p_target:.1%} → "
                 f"{result.p_ablated[layer, h]:.1%}. Double-click: where it attends, in the Attention tab"
                 for h in range(heads)] for layer in range(layers)]
        self.table.show_cells(texts, result.effect / span, tuple(f"head {h}" for h in range(heads)), tips,
                              signed=True, labels=[f"layer {layer + 1}" for layer in range(layers)])
        self.table.values = result.effect  # the export gives the effects, not the colours' scale
        self.note.setText(heads_text(self.name, result, self.brief))
        self.shown.emit()
