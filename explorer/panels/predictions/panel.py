"""The predictions panel: four views in tabs, each its own widget — masked LM (masked.py), next token
(next_token.py), sentence probability (sentence_probability.py), next sentence (next_sentence.py)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.panels.predictions.masked import MaskedView
from explorer.panels.predictions.next_sentence import NextSentenceView
from explorer.panels.predictions.next_token import NextTokenView
from explorer.panels.predictions.sentence_probability import SentenceProbabilityView
from explorer.scenes import VIEWS, Scene
from explorer.session import Session
from explorer.widgets.tabs import tab_widget


class PredictionsPanel(QWidget):
    shown = Signal()  # the view on screen has its results (scenes' screenshots wait for it)
    failed = Signal(str)  # the view on screen cannot show them: why
    focus_token = Signal(str, int)  # (text, token position): show where it attends in the attention panel
    VIEWS = VIEWS["predictions"]

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.wanted_model = ""
        self.presenting = False  # a talk's step
        self.masked = MaskedView(session)
        self.next = NextTokenView(session)
        self.probability = SentenceProbabilityView(session)
        self.nsp = NextSentenceView(session)
        self.views = tab_widget()
        titles = ("Masked LM", "Next token", "Sentence probability", "Next sentence")
        for name, view, title in zip(self.VIEWS, self._views(), titles, strict=True):
            self.views.addTab(view, title)
            view.shown.connect(lambda name=name: self._shown(name))
            view.runner.failed.connect(lambda message, name=name: self._failed(name, message))
        for name, view in (("masked", self.masked), ("next", self.next)):  # a lab scene's refusal ends its wait
            view.lens.failed.connect(lambda message, name=name: self._failed(name, message))
        self.masked.focus_token.connect(self.focus_token)
        QVBoxLayout(self).addWidget(self.views)
        session.modelsChanged.connect(self._refresh_models)
        self._refresh_models()

    def set_presenting(self, on: bool) -> None:
        """A talk's layout: the step's view alone (no tabs), without the training-example corner."""
        self.views.tabBar().setVisible(not on)
        self.masked.set_presenting(on)
        self.probability.stop.setVisible(not on)  # a talk's sentences are short: nothing to stop
        self.presenting = on

    def _views(self) -> tuple[Any, ...]:
        return self.masked, self.next, self.probability, self.nsp

    def _shown(self, view: str) -> None:
        if self.VIEWS[self.views.currentIndex()] == view:  # only the view on screen counts as shown
            self.shown.emit()

    def _failed(self, view: str, message: str) -> None:
        if self.VIEWS[self.views.currentIndex()] == view:
            self.failed.emit(message)

    def _refresh_models(self) -> None:
        for view in self._views():
            view.refresh_models(self.wanted_model)

    def apply_scene(self, scene: Scene) -> None:
        view = scene.view or "masked"
        self.wanted_model = scene.contextual_model or ""
        index = self.VIEWS.index(view) if view in self.VIEWS else 0
        self.views.setCurrentIndex(index)
        view = self._views()[index]
        if view is self.masked or view is self.next:  # the views with the lab under them
            view.open_lab(scene)
        view.set_sentences(list(scene.sentences))
        # a talk's step scores with its own models only: one loaded for a later step must not add a column
        # (and a rescoring) to this one
        self.probability.only = list(scene.models) if self.presenting else None
        self._refresh_models()

    def current_scene(self) -> Scene:
        index = self.views.currentIndex()
        view = self._views()[index]
        lab = view.lab_fields() if view is self.masked or view is self.next else {}
        return Scene("predictions", view.sentences(), list(self.session.models), selection="",
                     contextual_model=self.masked.model.currentText(), view=self.VIEWS[index], **lab)
