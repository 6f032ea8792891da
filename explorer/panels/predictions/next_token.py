"""Next token: the likeliest continuations of a text's beginning, and greedy or sampled continuations."""

from __future__ import annotations

import html
import random
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.panels.predictions.bars import sentence_case
from explorer.panels.predictions.one_line import OneLineCompared
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.lab_view import LabView
from explorer.widgets.model_picker import ModelPicker
from explorer.widgets.model_row import model_row
from explorer.widgets.probability_bars import ProbabilityBars, scrolling

DEBOUNCE_MS = 150

# a left-to-right model's markers, said in words where they are predicted next (a continuation never writes them)
MARKERS = {"</s>": "</s> (sentence ends)", "[CLS]": "[CLS] (new sentence)", "<|endoftext|>": "<|endoftext|> (text ends)",
           "<unk>": "<unk> (unknown word)", "[UNK]": "[UNK] (unknown word)"}


class NextTokenView(QWidget, LabView, OneLineCompared):
    shown = Signal()

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        from engine.api import NO_REPEAT, Capability

        super().__init__(parent)
        self.session = session
        self.text = QLineEdit("The river flows into the")
        self.model = ModelPicker(Capability.NEXT_TOKEN, role="next_token")
        self.results = ProbabilityBars()
        self.results_b = ProbabilityBars()  # model B's, beside A's while comparing
        self.message = QLabel()
        self.message.setWordWrap(True)  # a long reason wraps instead of widening the window
        self.temperature = QDoubleSpinBox(minimum=0.1, maximum=2.0, value=0.8, singleStep=0.1)
        self.greedy = QPushButton("greedy")  # "Continue: [greedy] [sampled]" (one row at a talk's zoom)
        self.sample = QPushButton("sampled")
        self.no_repeat = QCheckBox("no repeats")  # greedy decoding's loops ("go to the gym and go to the gym …")
        self.no_repeat.setChecked(True)
        self.no_repeat.setToolTip(f"Never write a run of {NO_REPEAT} tokens (words, for a word-level model) that is "
                                  "already in the text: a small model left to itself says one phrase over and over")
        self.continuation = QLabel()
        self.continuation.setWordWrap(True)
        self.compare = QCheckBox("compare with")  # B's next tokens and continuation beside A's (and its lens)
        self.model2 = ModelPicker(Capability.NEXT_TOKEN)
        self._models_seen: tuple[Any, ...] | None = None  # the pickers' states at the last ask
        self.model2.setEnabled(False)
        self.make_lab()  # the lab's switch and the lab (LabView)
        layout = QVBoxLayout(self)
        row = QHBoxLayout()  # the text on one row, the models on the next (explorer.widgets.model_row)
        row.addWidget(QLabel("Text:"))
        row.addWidget(self.text, 1)
        layout.addLayout(row)
        layout.addLayout(model_row(self.model, self.compare, self.model2))
        layout.addWidget(self.message)
        bars = QHBoxLayout()
        self.result_areas = [scrolling(self.results), scrolling(self.results_b)]
        for area in self.result_areas:
            bars.addWidget(area)
        self.result_areas[1].setVisible(False)  # the second column only while comparing
        layout.addLayout(bars, 2)  # (as the masked view's: beside an open lab, room for a few next tokens)
        self.continue_row = QWidget()  # (a talk's lab step hides it: set_presenting)
        gen = QHBoxLayout(self.continue_row)
        gen.setContentsMargins(0, 0, 0, 0)
        gen.addWidget(QLabel("Continue:"))
        gen.addWidget(self.greedy)
        gen.addWidget(self.sample)
        gen.addWidget(QLabel("temperature"))
        gen.addWidget(self.temperature)
        gen.addWidget(self.no_repeat)
        gen.addStretch(1)
        layout.addWidget(self.continue_row)
        layout.addWidget(self.continuation)
        layout.addWidget(self.lab_row)
        layout.addWidget(self.lens, 4)  # the lab, when on, takes most of the room
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self.message.setText)
        self.runner_b = TaskRunner(self)
        self.runner_b.finished.connect(self._show_b)
        self.runner_b.failed.connect(lambda m: self.results_b.show_message("", m))
        self._continued: list[str] = ["", ""]  # A's and B's last continuation (HTML)
        self._greedy_of = ""  # the text A's last continuation, greedy, continued ("": none, or sampled)
        self._scene_text = ""  # a scene's text, continued greedily once its next tokens are shown
        self._pending: set[int] = set()  # the continuations (0: A, 1: B) a scene's shown waits for
        self.generate_runner = TaskRunner(self)
        self.generate_runner.finished.connect(lambda r: self._show_continuation(r, 0))
        self.generate_runner.failed.connect(lambda m: self._show_continued(0, html.escape(m)))
        self.generate_runner_b = TaskRunner(self)
        self.generate_runner_b.finished.connect(lambda r: self._show_continuation(r, 1))
        self.generate_runner_b.failed.connect(lambda m: self._show_continued(1, html.escape(m)))
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.query)
        self.text.textChanged.connect(lambda _: self._debounce.start())
        for picker in (self.model, self.model2):
            picker.currentIndexChanged.connect(lambda _: self.query())
        self.compare.toggled.connect(self._compare_toggled)
        self.presenting = False  # a talk's step (set_presenting)
        self.lens_switch.toggled.connect(lambda _: self._present_rows())
        self.greedy.clicked.connect(lambda: self.continue_text(0.0))
        self.sample.clicked.connect(lambda: self.continue_text(self.temperature.value()))
        self.generate_runner.failed.connect(lambda _: self._continuation_failed(0))
        self.generate_runner_b.failed.connect(lambda _: self._continuation_failed(1))

    def query(self) -> None:
        self._debounce.stop()  # asked now: a query the typing scheduled would only ask the same again
        handle = self.session.models.get(self.model.currentText())
        for control in (self.greedy, self.sample):
            control.setEnabled(handle is not None)
        if handle is None:
            reason = self.model.reason()
            self.message.setText(sentence_case(reason) + ". Load a GPT, an ELMo or an n-gram (ngram-kn3, or one you trained).")
            self.results.clear()
            self.results_b.clear()
            return
        text = self.text.text()
        if not text.strip():
            self.message.setText("Type the beginning of a sentence.")
            return
        self.runner.submit(lambda: (text, handle.name, handle.next_token(text, k=10)))
        other = self._other()
        if other is not None:
            self.runner_b.submit(lambda: (text, other.name, other.next_token(text, k=10)))
        elif self.compare.isChecked():
            self.results_b.show_message("", "Load a second model to compare with.")
        else:
            self.results_b.clear()
        if self.lens_switch.isChecked():  # computed only when on screen
            self.lens.set_query(text, [handle, *([other] if other is not None else [])])

    def _other(self) -> Any:
        """Model B, while comparing."""
        return self.session.models.get(self.model2.currentText()) if self.compare.isChecked() else None

    def set_presenting(self, on: bool) -> None:
        """A talk's step: no switch for the lab (a lab scene shows its lab), nor the continuation's controls under a
        step's lab (the step is about the lab: the next words keep the room)."""
        self.presenting = on
        self.lab_row.setVisible(not on)
        self.lens.set_brief(on)
        self._present_rows()

    def _present_rows(self) -> None:
        self.continue_row.setVisible(not (self.presenting and self.lens_switch.isChecked()))

    def _compare_toggled(self, on: bool) -> None:
        self.model2.setEnabled(on)
        self.result_areas[1].setVisible(on)
        self._continued[1] = ""
        self._show_continued(0, self._continued[0])
        self.query()

    def _show(self, result: tuple[str, str, Any]) -> None:
        text, name, candidates = result
        self.message.setText(f"{name}: the likeliest next tokens after “{text}”" if not self.compare.isChecked()
                             else f"The likeliest next tokens after “{text}”")
        self.results.set_results(name, [("", _bars(candidates))])
        if self._scene_text and text == self._scene_text == self.text.text():  # shown once continued too
            self._pending = self.continue_text(0.0)
            if self._pending:
                return
        if not self.lab_scene:  # a lab scene is shown when its lab is
            self.shown.emit()

    def continue_when_shown(self, text: str) -> None:
        """A scene's greedy continuation of ``text`` (its sentence), asked with its next tokens and shown
        with them; "" asks none. Asked again as the scene's models load, while the text is the scene's."""
        self._scene_text = text
        self._pending = set()

    def continuation_field(self) -> str | None:
        """A saved scene's "continuation": greedy if A's continuation on screen is the greedy one of the text."""
        return "greedy" if self._greedy_of and self._greedy_of == self.text.text() else None

    def _show_b(self, result: tuple[str, str, Any]) -> None:
        _, name, candidates = result
        self.results_b.set_results(name, [("", _bars(candidates))])

    def continue_text(self, temperature: float) -> set[int]:
        """A's continuation of the text (and B's, while comparing), from one seed; which were asked."""
        from engine.api import NO_REPEAT

        text = self.text.text()
        seed = random.randrange(1 << 30)
        no_repeat = NO_REPEAT if self.no_repeat.isChecked() else 0
        asked = set()
        for i, (handle, runner) in enumerate(((self.session.models.get(self.model.currentText()),
                                               self.generate_runner), (self._other(), self.generate_runner_b))):
            if handle is None or not text.strip():
                continue
            self._continued[i] = "continuing…"
            runner.submit(_continuation(handle, text, temperature, seed, no_repeat))
            asked.add(i)
        self._greedy_of = ""
        self._show_continued(0, self._continued[0])
        return asked

    def _show_continuation(self, result: tuple[str, str, float, str, int], i: int) -> None:
        from engine.api import SAMPLING_TOP_P

        text, more, temperature, _, no_repeat = result
        how = "greedy" if temperature <= 0 else f"sampled at temperature {temperature:.1f}, top-p {SAMPLING_TOP_P:g}"
        if no_repeat:
            how += f", no run of {no_repeat} repeated"
        if not more.strip():  # its end-of-text token came first
            how += ": the model ends the text here"
        self._show_continued(i, f"{html.escape(text)}<b>{html.escape(more)}</b> <i>({how})</i>")
        if i == 0:
            self._greedy_of = text if temperature <= 0 else ""
        if i in self._pending:
            self._pending.discard(i)
            if not self._pending and not self.lab_scene:  # a scene's continuations: now it is shown
                self.shown.emit()

    def _continuation_failed(self, i: int) -> None:
        """A scene's continuation that could not be made is shown as its message: the scene is shown."""
        if i in self._pending:
            self._pending.discard(i)
            if not self._pending and not self.lab_scene:
                self.shown.emit()

    def _show_continued(self, i: int, shown: str) -> None:
        """A's continuation; while comparing, each model's on its own line, named."""
        self._continued[i] = shown
        if not self.compare.isChecked():
            self.continuation.setText(self._continued[0])
            return
        names = (self.model.currentText(), self.model2.currentText())
        self.continuation.setText("<br>".join(f"{html.escape(names[j])}: {self._continued[j]}" for j in (0, 1)
                                              if self._continued[j]))


def _continuation(handle: Any, text: str, temperature: float, seed: int, no_repeat: int
                  ) -> Callable[[], tuple[str, str, float, str, int]]:
    """A worker's job: the model's continuation of the text, with what it needs to be shown."""
    return lambda: (text, handle.generate(text, 20, temperature, seed, no_repeat), temperature, handle.name,
                    no_repeat)


def _bars(candidates: Any) -> list[tuple[str, float]]:
    return [(MARKERS.get(t, t), p) for t, p in zip(candidates.tokens, candidates.probs, strict=True)]
