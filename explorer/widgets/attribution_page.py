"""The lab's third page: which of the text's tokens the prediction rests on (engine.api.token_attribution),
three methods as three rows of one table — integrated gradients, gradient × input, the gradient's norm — each
row coloured on its own scale (red: towards the prediction, blue: away from it), with what is explained and
how well integrated gradients add up to it. A word to explain and a foil word ("are" rather than "is") are
optional; it answers as the text changes while the page is open (a fraction of a second a question)."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export
from explorer.widgets.lens_grid import LayerTokenTable

ABOUT = ("Which words the prediction rests on: each token's embedding faded in from zero, the gradient followed "
         "(integrated gradients, Sundararajan et al. 2017), beside the gradient at the text times the embedding "
         "and the gradient's size (LIT's salience maps). Name a word to explain another prediction, and a foil to "
         "ask why it rather than the foil.")
SHOWN_TOP = 3  # the tokens named in the summary line, each way


def attribution_text(name: str, result: Any) -> str:
    """Under the table: what is explained, how the colours read, and how well the scores add up."""
    where = result.tokens[result.position].strip()
    head = f"{name}: P('{result.target.strip()}') = {result.p_target:.1%} at '{where}'"
    if result.foil:
        head += f", P('{result.foil.strip()}') = {result.p_foil:.1%}"
    change = result.f_input - result.f_baseline
    integrated = result.scores["integrated gradients"]
    order = [t for t in np.argsort(-integrated) if not result.fixed[t]]
    towards = ", ".join(f"{result.tokens[t].strip()} {integrated[t]:+.2f}" for t in order[:SHOWN_TOP]
                        if integrated[t] > 0)
    away = ", ".join(f"{result.tokens[t].strip()} {integrated[t]:+.2f}" for t in order[::-1][:SHOWN_TOP]
                     if integrated[t] < 0)
    most = f" Most towards it: {towards or 'none'}" + (f"; most away: {away}" if away else "") + "."
    share = abs(result.gap) / max(abs(change), 1e-6)
    trust = (f"the scores add up to {integrated.sum():+.2f} of its change {change:+.2f} from the faded-out text "
             f"({result.steps} steps{'' if share <= 0.05 else ': off by ' + format(share, '.0%') + ', read with care'})")
    notice = f" {result.notice[:1].upper()}{result.notice[1:]}." if result.notice else ""
    return (f"{head}. Explained: {result.explained}; red pushes it up, blue down, each row on its own scale; "
            f"{trust}.{most}{notice}")


class AttributionPage(QWidget):
    shown = Signal()  # an attribution is on screen
    failed = Signal(str)  # the question cannot be answered: why

    def __init__(self, parent: QWidget | None = None) -> None:
        from engine.api import ATTRIBUTION_METHODS

        super().__init__(parent)
        self.methods = list(ATTRIBUTION_METHODS)
        self.result: Any = None
        self.asked: tuple[str, str, str, str] | None = None  # (model, text, target, foil) of the question on screen
        self.target = QLineEdit()
        self.target.setPlaceholderText("the prediction, or a word (are)")
        self.foil = QLineEdit()
        self.foil.setPlaceholderText("optional: a word it is explained against (is)")
        self.button = QPushButton("Explain")
        self.note = QLabel(ABOUT)
        self.note.setWordWrap(True)
        self.table = LayerTokenTable()
        row = QHBoxLayout()
        for label, widget, stretch in (("explain", self.target, 1), ("rather than", self.foil, 1)):
            row.addWidget(QLabel(label))
            row.addWidget(widget, stretch)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        add_csv_export(self.table, self.table.export_rows, "attribution", png=True)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._failed)
        self._handle: Any = None
        self._text = ""

    def explain(self, handle: Any, text: str) -> None:
        """Ask ``handle`` about ``text`` with the page's target and foil; a newer question supersedes it."""
        if handle is None or not text.strip():
            return
        self._handle, self._text = handle, text
        target, foil = self.target.text().strip(), self.foil.text().strip()
        self.asked = (handle.name, text, target, foil)
        self.note.setText(f"explaining {handle.name}'s prediction" + (f" of '{target}'" if target else "")
                          + (f" against '{foil}'" if foil else "") + "…")
        self.runner.submit(lambda: (handle.name, text, target, foil,
                                    handle.token_attribution(text, target or None, foil or None)))

    def answers(self, name: str, text: str) -> bool:
        """Whether the attribution on screen is ``name``'s of ``text`` with the fields as they are."""
        return self.result is not None and self.asked == (name, text, self.target.text().strip(),
                                                          self.foil.text().strip())

    def _failed(self, message: str) -> None:
        self.result = None
        self.note.setText(message)
        self.failed.emit(message)

    def _show(self, answer: tuple[str, str, str, str, Any]) -> None:
        name, text, target, foil, result = answer
        if self.asked != (name, text, target, foil):
            return  # a question asked since: its answer follows
        self.result = result
        n = len(result.tokens)
        raw = np.stack([result.scores[m] for m in self.methods])  # (methods, T)
        spans = np.abs(raw).max(1, keepdims=True)
        shown = raw / np.where(spans > 0, spans, 1.0)  # each method on its own scale: their units differ
        shown = np.where(np.array(result.fixed)[None, :], np.nan, shown)  # not attributed: left uncoloured
        texts = [["" if result.fixed[t] else f"{raw[m, t]:+.2f}" if self.methods[m] != "gradient norm"
                  else f"{raw[m, t]:.2f}" for t in range(n)] for m in range(len(self.methods))]
        tips = [[self._tip(result, m, t) for t in range(n)] for m in range(len(self.methods))]
        tokens = tuple(f"{tok}→" if t == result.position else tok for t, tok in enumerate(result.tokens))
        self.table.show_cells(texts[::-1], shown[::-1], tokens, tips[::-1], signed=True,
                              labels=self.methods[::-1])  # (the first method on top)
        self.table.values = raw[::-1]  # the export gives the scores, not the colours' scale
        self.note.setText(attribution_text(name, result))
        self.shown.emit()

    def _tip(self, result: Any, m: int, t: int) -> str:
        from engine.api import ATTRIBUTION_METHODS

        method = self.methods[m]
        if result.fixed[t]:
            return f"'{result.tokens[t].strip()}' is kept as it is (a special token or the [MASK]): not attributed"
        return (f"{method}, '{result.tokens[t].strip()}': {result.scores[method][t]:+.3f} to "
                f"{result.explained}. {ATTRIBUTION_METHODS[method]}")
