"""Next-sentence prediction: BERT's probability that sentence B follows sentence A."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QTextBrowser, QVBoxLayout, QWidget

from explorer.panels.predictions.bars import bars, sentence_case
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.model_picker import ModelPicker

DEBOUNCE_MS = 150


class NextSentenceView(QWidget):
    shown = Signal()

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        from engine.api import Capability

        super().__init__(parent)
        self.session = session
        self.a = QLineEdit("The man went to the store.")
        self.b = QLineEdit("He bought a gallon of milk.")
        self.model = ModelPicker(Capability.NEXT_SENTENCE)
        self._models_seen: tuple[Any, ...] | None = None  # the pickers' states at the last ask
        self.result = QTextBrowser()
        layout = QVBoxLayout(self)
        for label, widget in (("Sentence A:", self.a), ("Sentence B:", self.b)):
            row = QHBoxLayout()
            row.addWidget(QLabel(label))
            row.addWidget(widget, 1)
            layout.addLayout(row)
        layout.addWidget(self.model)
        layout.addWidget(self.result, 1)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self.result.setPlainText)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.query)
        for edit in (self.a, self.b):
            edit.textChanged.connect(lambda _: self._debounce.start())
        self.model.currentIndexChanged.connect(lambda _: self.query())

    def query(self) -> None:
        handle = self.session.models.get(self.model.currentText())
        if handle is None:
            reason = self.model.reason()
            self.result.setPlainText(sentence_case(reason) + ". Load a BERT pre-trained with NSP.")
            return
        a, b = self.a.text(), self.b.text()
        self.runner.submit(lambda: (handle.name, handle.next_sentence(a, b)))

    def _show(self, result: tuple[str, float]) -> None:
        name, p = result
        self.result.setHtml(f"<p>{html.escape(name)}: probability that B follows A</p>"
                                + bars([("IsNext", p), ("NotNext", 1 - p)]))
        self.shown.emit()

    def refresh_models(self, prefer: str, ask: bool = False) -> None:
        """The picker lists the models; asks again only if its models changed (or ``ask``: a scene)."""
        self.model.set_models(self.session.models, prefer=prefer)
        seen = self.model.state()
        if ask or seen != self._models_seen:
            self._models_seen = seen
            self.query()

    def set_sentences(self, sentences: list[str]) -> None:
        if len(sentences) >= 2:
            self.a.setText(sentences[0])
            self.b.setText(sentences[1])

    def sentences(self) -> list[str]:
        return [self.a.text(), self.b.text()]
