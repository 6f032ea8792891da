"""Masked LM: top-k for every [MASK] as you type (two models side by side; click a word to mask it, a
prediction to see where that position attends), and a BERT training example drawn as the engine trains."""

from __future__ import annotations

import functools
import html
import random
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.failures import Outcome, attempt
from explorer.panels.predictions.bars import sentence_case, whole_word
from explorer.panels.predictions.one_line import OneLineCompared
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.lab_view import LabView
from explorer.widgets.layout_items import empty_layout
from explorer.widgets.model_picker import ModelPicker
from explorer.widgets.model_row import model_row
from explorer.widgets.probability_bars import ProbabilityBars, scrolling
from explorer.widgets.readable import readable
from explorer.widgets.word_chip import word_chip

DEBOUNCE_MS = 150
MASK = "[MASK]"
MASKING_COLOURS = {"[MASK]": "#d62728", "random": "#ff7f0e", "kept": "#2ca02c"}  # BERT's three ways of hiding a
# chosen token in a training example (made readable on the background)
SENTENCE_B = "#fdecea"  # a training example's second sentence, behind dark text in either theme


@dataclass(frozen=True)
class MaskedAnswer:
    """What the worker found for one text: each model's top-k per [MASK] (or why that model could not)."""

    text: str
    per_model: list[tuple[str, Outcome[Any]]]  # (model name, its fill_mask result)


class MaskedView(QWidget, LabView, OneLineCompared):
    shown = Signal()
    focus_token = Signal(str, int)  # (text, token position)

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        from engine.api import Capability

        super().__init__(parent)
        self.session = session
        self.last: MaskedAnswer | None = None
        self.presenting = False  # a talk's step (set_presenting)
        self.text = QLineEdit("She deposited the money at the [MASK] on Monday.")  # the masked scene's sentence
        # a masked LM, or ELMo (its two LMs, one a side of the blank: its guesses beside BERT's show what "deeply
        # bidirectional" adds)
        self.model = ModelPicker(Capability.FILL_BLANK, role="masked_lm")
        self.compare = QCheckBox("compare with")
        self.model2 = ModelPicker(Capability.FILL_BLANK)
        self._models_seen: tuple[Any, ...] | None = None  # the pickers' states at the last ask
        self.model2.setEnabled(False)
        self.compare.toggled.connect(self._compare_toggled)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.chips = QHBoxLayout()
        self.results = [ProbabilityBars(), ProbabilityBars()]
        self._positions: list[list[int]] = [[], []]  # per model: the token position of each [MASK] shown
        for i, bars_view in enumerate(self.results):
            bars_view.clicked.connect(lambda section, _row, i=i: self._prediction_clicked(i, section))
        self.make_lab()  # the lab's switch and the lab (LabView)
        self.learn = QPushButton("Learn how BERT was trained: draw a training example")
        self.learn.clicked.connect(self.draw_example)
        self.example = QTextBrowser()
        self.example.setVisible(False)  # until an example is drawn: the room goes to the results and the lab
        layout = QVBoxLayout(self)
        row = QHBoxLayout()  # the text on one row, the models on the next (explorer.widgets.model_row)
        row.addWidget(QLabel("Text:"))
        row.addWidget(self.text, 1)
        layout.addLayout(row)
        layout.addLayout(model_row(self.model, self.compare, self.model2))
        chip_box = QWidget()
        chip_box.setLayout(self.chips)
        chip_scroll = QScrollArea()  # a long text's words scroll instead of widening the window
        chip_scroll.setWidget(chip_box)
        chip_scroll.setWidgetResizable(True)
        chip_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        chip_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chip_scroll = chip_scroll
        self._fit_chip_row()
        chip_row = QHBoxLayout()
        chip_row.addWidget(QLabel("Click a word to mask it:"))
        chip_row.addWidget(chip_scroll, 1)
        layout.addLayout(chip_row)
        layout.addWidget(self.hint)
        results = QHBoxLayout()
        self.result_areas = [scrolling(bars_view) for bars_view in self.results]
        for area in self.result_areas:
            results.addWidget(area)
        self.result_areas[1].setVisible(False)  # the second column only while comparing
        layout.addLayout(results, 2)
        layout.addWidget(self.lab_row)
        layout.addWidget(self.lens, 4)  # the lab, when on, takes most of the room
        layout.addWidget(self.learn)
        layout.addWidget(self.example, 1)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(lambda m: self._message(m))
        self.example_runner = TaskRunner(self)
        self.example_runner.finished.connect(self._show_example)
        self.example_runner.failed.connect(lambda m: self.example.setPlainText(m))
        self._chip_debounce = QTimer(self, singleShot=True, interval=500)  # the word buttons follow more slowly
        self._chip_debounce.timeout.connect(lambda: self._make_chips(self.text.text()))
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.query)
        self.text.textChanged.connect(lambda _: self._debounce.start())
        for picker in (self.model, self.model2):
            picker.currentIndexChanged.connect(lambda _: self.query())

    def _compare_toggled(self, on: bool) -> None:
        self.model2.setEnabled(on)
        self.result_areas[1].setVisible(on)
        self._show_compare_row()
        self.query()

    def _show_compare_row(self) -> None:
        """In a talk, a step that compares nothing shows no 'compare with' box (a model named there, greyed
        out on a projector, reads as compared)."""
        shown = not self.presenting or self.compare.isChecked()
        self.compare.setVisible(shown)
        self.model2.setVisible(shown)

    def _fit_chip_row(self) -> None:
        """The word chips' row is one button high (plus its scroll bar) in the view's font: a talk's 28 px
        type or the presentation zoom must not cut the buttons off."""
        button = QToolButton()
        button.setText("Wg")
        button.setFont(self.font())
        self.chip_scroll.setFixedHeight(button.sizeHint().height() + 22)

    def changeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.FontChange and hasattr(self, "chip_scroll"):
            self._fit_chip_row()
        super().changeEvent(event)

    def set_presenting(self, on: bool) -> None:
        self.presenting = on
        self._show_compare_row()
        for widget in (self.learn, self.lab_row):
            widget.setVisible(not on)
        self.example.setVisible(not on and bool(self.example.toPlainText()))
        self.lens.setVisible(self.lens_switch.isChecked())  # a lab scene shows its lab in a talk too
        self.lens.set_brief(on)

    def _message(self, message: str) -> None:
        self.hint.setText(message)
        for browser in self.results:
            browser.clear()

    def _make_chips(self, text: str) -> None:
        from engine.api import word_spans

        spans = [(a, b) for a, b in word_spans(text)[:30]
                 if text[max(0, a - 1) : b + 1] != MASK and any(c.isalnum() for c in text[a:b])]
        if spans == getattr(self, "_chip_spans", None):
            return  # the same words: keep the buttons (rebuilding them on every key costs the GUI thread)
        self._chip_spans = spans
        empty_layout(self.chips)
        for a, b in spans:
            chip = word_chip(text[a:b])
            chip.clicked.connect(lambda _=False, a=a, b=b, word=text[a:b]: self.mask_span(a, b, word))
            self.chips.addWidget(chip)
        self.chips.addStretch(1)

    def mask_span(self, start: int, end: int, word: str = "") -> None:
        text = self.text.text()
        if word and text[start:end] != word:  # the text changed since the buttons were made
            self._chip_spans = []
            self._make_chips(text)
            return
        self._chip_spans = []  # positions move: the buttons are rebuilt
        self.text.setText(text[:start] + MASK + text[end:])

    def query(self) -> None:
        text = self.text.text()
        self._chip_debounce.start()
        names = [self.model.currentText(), *([self.model2.currentText()] if self.compare.isChecked() else [])]
        handles = [h for h in (self.session.models.get(name) for name in names) if h is not None]
        from engine.api import Capability

        first = self.session.models.get(self.model.currentText())  # (model A: a masked LM, or ELMo)
        masked_lm = first is not None and Capability.MASKED_LM in first.capabilities
        self.learn.setEnabled(masked_lm)
        self.learn.setToolTip("" if masked_lm else first.missing(Capability.MASKED_LM) if first is not None
                              else self.model.reason())
        if not handles:
            reason = self.model.reason()
            self._message(sentence_case(reason) + ". Load BERT (or a BERT-style Hugging Face model), or ELMo.")
            return
        if not text.strip():
            self._message("Type a sentence with [MASK] where a word should be predicted.")
            return
        if MASK not in text:  # a hint, not an error
            self._message("No [MASK] yet: type [MASK] where a word should be, or click a word above to mask it.")
            return

        if self.lens_switch.isChecked():  # computed only when on screen
            self.lens.set_query(text, handles)

        def work() -> MaskedAnswer:
            return MaskedAnswer(text, [(h.name, attempt(functools.partial(h.fill_mask, text, k=8))) for h in handles])

        self.runner.submit(work)

    def _show(self, answer: MaskedAnswer) -> None:
        from engine.api import Capability

        text, per_model = answer.text, answer.per_model
        self.last = answer
        before = text.split(MASK)
        notes = []
        clickable = False  # a model with heads shown: a click on its prediction shows where that position attends
        for i, (bars_view, (name, outcome)) in enumerate(zip(self.results, per_model, strict=False)):
            if outcome.failed:
                bars_view.show_message(name, outcome.message)
                continue
            candidates: Any = outcome.value
            sections = []
            for m, mask in enumerate(candidates):
                rows = [(whole_word(t, before[m] if m < len(before) else ""), p)
                        for t, p in zip(mask.tokens, mask.probs, strict=True)]
                title = f"[MASK] {m + 1}" if len(candidates) > 1 else ""
                sections.append((title, rows))
            attends = self._has(name, Capability.ATTENTION)
            self._positions[i] = [mask.position for mask in candidates] if attends else []  # (ELMo: no heads)
            clickable |= attends
            bars_view.set_results(name, sections)
            if len(candidates) < text.count(MASK):
                notes.append(f"{name} reads only the first {len(candidates)} [MASK]s (the text is longer than it reads)")
            sides = dict(candidates[0].sides) if candidates else {}
            if sides:  # (ELMo: each LM's own guess, then what the bars are)
                left, right = (", ".join(f"“{w}”" for w in sides.get(side, ())) for side in ("before", "after"))
                notes.append(f"{name} has no masked LM: its forward LM, reading the words before the blank, guesses "
                             f"{left}; its backward LM, reading the words after it, {right}; the bars are the two "
                             "guesses multiplied, over how common each word is")
        if len(per_model) < 2:
            self.results[1].clear()
        where = " (click one to see where that position attends)" if clickable else ""
        self.hint.setText("; ".join(notes) or f"{text.count(MASK)} [MASK]: the likeliest tokens for each{where}")
        if not self.lab_scene:  # a lab scene is shown when its lab is
            self.shown.emit()

    def _has(self, name: str, capability: Any) -> bool:
        handle = self.session.models.get(name)
        return handle is not None and capability in handle.capabilities

    def _prediction_clicked(self, model: int, section: int) -> None:
        positions = self._positions[model]
        if 0 <= section < len(positions):
            self.focus_token.emit(self.text.text(), positions[section])

    def draw_example(self) -> None:
        handle = self.session.models.get(self.model.currentText())
        if handle is None:
            return
        seed = random.randrange(1 << 30)
        self.example.setVisible(True)
        self.example.setPlainText("drawing a sentence pair from the corpus and masking it…")
        def work() -> Any:
            from engine.api import bert_training_example

            return bert_training_example(handle, "default", seed)

        self.example_runner.submit(work)

    def _show_example(self, ex: Any) -> None:
        base = self.example.palette().color(QPalette.ColorRole.Base)  # (orange was 2.5:1 on white)
        colours = {how: readable(colour, base) for how, colour in MASKING_COLOURS.items()}
        chosen = dict(zip(ex.chosen, ex.how, strict=True))
        tokens = []
        for i, token in enumerate(ex.inputs):
            shown = html.escape(token)
            if i in chosen:
                shown = (f"<span style='color:{colours[chosen[i]]}'><b>{shown}</b></span>"
                         f"<sub>{html.escape(ex.original[i])}</sub>")
            elif ex.segments[i]:
                shown = f"<span style='background:{SENTENCE_B}; color:#111111'>{shown}</span>"  # (dark theme too)
            tokens.append(shown)
        nsp = (f"B {'really follows' if ex.is_next else 'is a random sentence, not the one after'} A; "
               + (f"the model says P(IsNext) = {ex.next_probability:.2f}" if ex.next_probability is not None else ""))
        unit = f"{ex.mask_prob:.0%} of the words, every piece of a chosen word" if ex.whole_word else f"{ex.mask_prob:.0%}"
        parts = [f"<p>{' '.join(tokens)}</p><p>{len(ex.chosen)} of {len(ex.inputs)} tokens chosen ({unit}): "
                 f"<span style='color:{colours['[MASK]']}'>[MASK] (80%)</span>, <span style='color:{colours['random']}'>"
                 f"random token (10%)</span>, <span style='color:{colours['kept']}'>kept (10%)</span>; the model must "
                 "predict the "
                 f"original (small) at each. {html.escape(nsp)}</p><table>"]
        for position, how, preds in zip(ex.chosen, ex.how, ex.predictions, strict=True):
            guess = ", ".join(f"{html.escape(t)} {p:.0%}" for t, p in preds[:3])
            ok = "✓" if preds[0][0] == ex.original[position] else ""
            parts.append(f"<tr><td>{html.escape(ex.original[position])}</td><td>&nbsp;({how})&nbsp;</td>"
                         f"<td>→ {guess} {ok}</td></tr>")
        parts.append("</table>")
        self.example.setHtml("".join(parts))

