"""The lab's third page: which of the text's tokens the prediction rests on (engine.api.token_attribution),
three methods as three rows of one table — integrated gradients, gradient × input, the gradient's norm — each
row coloured on its own scale (red: towards the prediction, blue: away from it), with what is explained and
how well integrated gradients add up to it. A word to explain and a foil word ("are" rather than "is") are
optional; it answers as the text changes while the page is open (a fraction of a second a question). With a
compared model B (another checkpoint of the run, say) reading the same tokens, each method's row of A has B's
below it."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.failures import Outcome, attempt
from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export
from explorer.widgets.lens_grid import LayerTokenTable
from explorer.widgets.word_and_foil import WordAndFoil

ABOUT = ("Which words the prediction rests on: each token's input vector (its embedding; ELMo's from its characters, "
         "an NNLM's C(w)) faded in from zero (ELMo's from its average word), the gradient followed "
         "(integrated gradients, Sundararajan et al. 2017), beside the gradient at the text times the embedding "
         "and the gradient's size (LIT's salience maps). Name a word to explain another prediction, and a foil to "
         "ask why it rather than the foil. Deleting the words integrated gradients scores highest costs a prediction "
         "the most of the three (bench/quality/RESULTS.md, attribution faithfulness).")
BY_WORDS_TIP = ("each word's tokens added up (the scores of integrated gradients still add up to the change; two "
                "models that split words differently compare this way)")
SHOWN_TOP = 3  # the tokens named in the summary line, each way


def attribution_text(name: str, result: Any, second: bool = False, brief: bool = False) -> str:
    """Under the table: what is explained, how the colours read, and how well the scores add up (``second``: a
    compared model's, under the first's: what is explained and how the colours read are not said again;
    ``brief``: a talk's — the probabilities, the words most towards and away, and what a listener must know,
    a walk that misses its change or the window a model cannot see past; the rest is in the tooltips)."""
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
    if brief:  # (on a projector: six lines of method under a table lose the room)
        off = f" The scores are off their change by {share:.0%}: read with care." if share > 0.05 else ""
        foil = f" rather than '{result.foil.strip()}'" if result.foil else ""
        named = (f" Towards '{result.target.strip()}'{foil}: {towards or 'none'}" + (f"; away: {away}" if away else "")
                 + ".")
        return f"{head}.{'' if second else named}{off}{notice}"
    if second:
        return f"{head}; {trust.replace('the scores', 'its scores', 1)}.{notice}"
    return (f"{head}. Explained: {result.explained}; red pushes it up, blue down, each row on its own scale; "
            f"{trust}.{most}{notice}")


class AttributionPage(QWidget, WordAndFoil):
    shown = Signal()  # an attribution is on screen
    failed = Signal(str)  # the question cannot be answered: why

    def __init__(self, parent: QWidget | None = None) -> None:
        from engine.api import ATTRIBUTION_METHODS

        super().__init__(parent)
        self.methods = list(ATTRIBUTION_METHODS)
        self.result: Any = None  # model A's Attribution on screen
        self.compared: Any = None  # model B's, where its rows are shown beside A's
        self.shown_answer: tuple[tuple[str, ...], list[Outcome[Any]]] | None = None  # (models, outcomes) drawn
        self.asked: tuple[tuple[str, ...], str, str, str] | None = None  # (models, text, target, foil) on screen
        row = self.make_fields()
        self.button = QPushButton("Explain")
        self.by_words = QCheckBox("by words")
        self.by_words.setToolTip(BY_WORDS_TIP)
        self.by_words_wanted = False  # the box as the user (or a scene) left it; a compared B may force it on
        self.brief = False  # a talk's step: the note under the table says only what the room must read
        self.note = QLabel(ABOUT)
        self.note.setWordWrap(True)
        self.table = LayerTokenTable()
        row.addWidget(self.by_words)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        add_csv_export(self.table, self.table.export_rows, "attribution", png=True)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._failed)
        self.by_words.toggled.connect(self._by_words_toggled)

    def set_by_words(self, on: bool) -> None:
        """Words rather than tokens, as a scene asks (a compared model that splits words otherwise forces words)."""
        self.by_words_wanted = on
        self.by_words.setChecked(on)

    def set_brief(self, on: bool) -> None:
        """A talk's step (on) or the app's (off): the note under the table short or whole."""
        self.brief = on
        self._render()

    def _by_words_toggled(self, on: bool) -> None:
        if self.by_words.isEnabled():  # (the user's: not the box ticked for a compared model)
            self.by_words_wanted = on
        self._render()

    def explain(self, handles: list[Any], text: str) -> None:
        """Ask model A (and a compared B) about ``text`` with the page's target and foil; a newer question
        supersedes it."""
        if not handles or not text.strip():
            return
        target, foil = self.fields()
        names = tuple(h.name for h in handles)
        self.asked = (names, text, target, foil)
        self.note.setText(f"explaining {' and '.join(names)}'s prediction" + (f" of '{target}'" if target else "")
                          + (f" against '{foil}'" if foil else "") + "…")

        def work() -> tuple[tuple[str, ...], str, str, str, list[Outcome[Any]]]:
            outcomes = [attempt(functools.partial(h.token_attribution, text, target or None, foil or None))
                        for h in handles]
            return names, text, target, foil, outcomes

        self.runner.submit(work)

    def _failed(self, message: str) -> None:
        self.result = self.shown_answer = None
        self.note.setText(message)
        self.failed.emit(message)

    def _show(self, answer: tuple[tuple[str, ...], str, str, str, list[Outcome[Any]]]) -> None:
        names, text, target, foil, outcomes = answer
        if self.asked != (names, text, target, foil):
            return  # a question asked since: its answer follows
        if outcomes[0].failed:
            self._failed(outcomes[0].message)
            return
        self.result, self.shown_answer = outcomes[0].value, (names, outcomes)
        self._render()
        self.shown.emit()

    def _render(self) -> None:
        """The answer on screen drawn again: by tokens, or by words (the box ticked, or B reading the same words
        in other tokens)."""
        if self.shown_answer is None:
            return
        names, outcomes = self.shown_answer
        result: Any = outcomes[0].value
        notes = [attribution_text(names[0], result, brief=self.brief)]
        by_words = self.by_words_wanted
        self.compared = None
        if len(outcomes) > 1:
            other: Any = outcomes[1].value
            if outcomes[1].failed:
                notes.append(f"{names[1]}: {outcomes[1].message}")
            elif other.tokens == result.tokens or _same_words(other, result):
                self.compared = other
                if other.tokens != result.tokens:
                    by_words = True
                    notes.append(f"{names[1]} splits the words into other tokens: both are shown by words.")
                below = "" if self.brief else f" Each method's row of {names[0]} has {names[1]}'s below it."
                notes.append(attribution_text(names[1], other, second=True, brief=self.brief) + below)
            else:
                notes.append(f"{names[1]} reads other words ({len(other.words)} against "
                             f"{len(result.words)}): only {names[0]}'s rows are shown")
        rows = [(names[0], result, m) for m in self.methods]
        if self.compared is not None:  # (a talk's step compares the rows its note reads: six rows under two
            # notes leave the room a strip of next words, the last row cut off)
            methods = self.methods[:1] if self.brief else self.methods
            rows = [row for m in methods for row in ((names[0], result, m), (names[1], self.compared, m))]
        forced = by_words and not self.by_words_wanted
        self.by_words.blockSignals(True)  # the box says what is shown: ticked and fixed while B forces words
        self.by_words.setChecked(by_words)
        self.by_words.setEnabled(not forced)
        self.by_words.blockSignals(False)
        self.by_words.setToolTip(f"{BY_WORDS_TIP}; {names[-1]} splits the words into other tokens than "
                                 f"{names[0]}: only words compare" if forced else BY_WORDS_TIP)
        columns, fixed, position = _columns(result, by_words)
        raw = np.stack([r.word_scores(m) if by_words else r.scores[m] for _, r, m in rows])  # (rows, columns)
        spans = np.abs(raw).max(1, keepdims=True)
        shown = raw / np.where(spans > 0, spans, 1.0)  # each row on its own scale: the methods' units differ
        shown = np.where(np.array(fixed)[None, :], np.nan, shown)  # not attributed: left uncoloured
        n = len(columns)
        texts = [["" if fixed[c] else f"{raw[i, c]:+.2f}" if m != "gradient norm" else f"{raw[i, c]:.2f}"
                  for c in range(n)] for i, (_, _, m) in enumerate(rows)]
        tips = [[_tip(name, r, m, columns[c], float(raw[i, c]), fixed[c]) for c in range(n)]
                for i, (name, r, m) in enumerate(rows)]
        labels = [m if self.compared is None else f"{m} · {name}" for name, _, m in rows]
        heads = tuple(f"{word}→" if c == position else word for c, word in enumerate(columns))
        self.table.show_cells(texts[::-1], shown[::-1], heads, tips[::-1], signed=True,
                              labels=labels[::-1])  # (drawn bottom first: the first row on top)
        self.table.values = raw[::-1]  # the export gives the scores, not the colours' scale
        self.note.setText("\n".join(notes))


def _same_words(a: Any, b: Any) -> bool:
    """Whether two models read the same words (their tokenizers' cases aside)."""
    return [w.lower() for w in a.words] == [w.lower() for w in b.words]


def _columns(result: Any, by_words: bool) -> tuple[list[str], list[bool], int]:
    """The table's columns: the tokens (special ones included) or the words; which are not attributed (a special
    token, the [MASK]); where the prediction is read."""
    if not by_words:
        return list(result.tokens), list(result.fixed), result.position
    fixed = [all(result.fixed[t] for t, w in enumerate(result.word_of) if w == i) for i in range(len(result.words))]
    return list(result.words), fixed, result.word_position


def _tip(name: str, result: Any, method: str, column: str, value: float, fixed: bool) -> str:
    from engine.api import ATTRIBUTION_METHODS

    if fixed:
        return f"'{column.strip()}' is kept as it is (a special token or the [MASK]): not attributed"
    return f"{name}, {method}, '{column.strip()}': {value:+.3f} to {result.explained}. {ATTRIBUTION_METHODS[method]}"
