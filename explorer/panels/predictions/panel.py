"""The predictions panel: four views in tabs, each its own widget — masked LM (masked.py), next token
(next_token.py), sentence probability (sentence_probability.py), next sentence (next_sentence.py) — each built
when its tab is first shown."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.panels.predictions.masked import MaskedView
from explorer.panels.predictions.next_sentence import NextSentenceView
from explorer.panels.predictions.next_token import NextTokenView
from explorer.panels.predictions.sentence_probability import SentenceProbabilityView
from explorer.scenes import VIEWS, Scene, model_name
from explorer.session import Session
from explorer.widgets.tabs import tab_widget

VIEW_TYPES = (MaskedView, NextTokenView, SentenceProbabilityView, NextSentenceView)  # in the order of VIEWS


class PredictionsPanel(QWidget):
    shown = Signal()  # the view on screen has its results (scenes' screenshots wait for it)
    failed = Signal(str)  # the view on screen cannot show them: why
    focus_token = Signal(str, int)  # (text, token position): show where it attends in the attention panel
    focus_head = Signal(str, int, str, int, int)  # (text, position, model, layer, head): that head's attention
    VIEWS = VIEWS["predictions"]

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.wanted_model = ""
        self.presenting = False  # a talk's step
        self._only: list[str] | None = None  # the sentence-probability view's models (a talk's step: its own)
        # each view is built the first time its tab is shown (or it is asked for): a talk's step shows one of
        # the four, and building all of them was most of the panel's build, one turn of the event loop per step
        self._built: dict[str, Any] = {}
        self.views = tab_widget()
        self._page_layouts: list[QVBoxLayout] = []  # each tab's page: its view goes there when built
        for title in ("Masked LM", "Next token", "Sentence probability", "Next sentence"):
            page = QWidget()
            layout = QVBoxLayout(page)
            layout.setContentsMargins(0, 0, 0, 0)
            self._page_layouts.append(layout)
            self.views.addTab(page, title)
        self.views.currentChanged.connect(self._view)
        QVBoxLayout(self).addWidget(self.views)
        session.modelsChanged.connect(self._refresh_models)
        self._view(self.views.currentIndex())

    @property
    def masked(self) -> MaskedView:
        return self._view(0)

    @property
    def next(self) -> NextTokenView:
        return self._view(1)

    @property
    def probability(self) -> SentenceProbabilityView:
        return self._view(2)

    @property
    def nsp(self) -> NextSentenceView:
        return self._view(3)

    def _view(self, index: int) -> Any:
        """The view of tab ``index``, built now if it was not."""
        name = self.VIEWS[index]
        if name in self._built:
            return self._built[name]
        view: Any = VIEW_TYPES[index](self.session)
        self._built[name] = view
        self._page_layouts[index].addWidget(view)
        view.shown.connect(lambda name=name: self._shown(name))
        if hasattr(view, "model"):  # a model picked by hand stays as others load: a scene's is let go
            view.model.activated.connect(lambda _: setattr(self, "wanted_model", ""))
        view.runner.failed.connect(lambda message, name=name: self._failed(name, message))
        if name in ("masked", "next"):  # a lab scene's refusal ends its wait
            view.lens.failed.connect(lambda message, name=name: self._failed(name, message))
            view.lens.focus_head.connect(self.focus_head)
        if name == "masked":
            view.focus_token.connect(self.focus_token)
        self._present(name, view)
        view.refresh_models(self.wanted_model, ask=True)
        return view

    def set_presenting(self, on: bool) -> None:
        """A talk's layout: the step's view alone (no tabs), without the training-example corner."""
        self.views.tabBar().setVisible(not on)
        self.presenting = on
        for name, view in self._built.items():
            self._present(name, view)

    def _present(self, name: str, view: Any) -> None:
        if name in ("masked", "next"):
            view.set_presenting(self.presenting)
        elif name == "probability":
            view.stop.setVisible(not self.presenting)  # a talk's sentences are short: nothing to stop
            view.only = self._only

    def _views(self) -> tuple[Any, ...]:
        """The views built so far."""
        return tuple(self._built.values())

    def _shown(self, view: str) -> None:
        if self.VIEWS[self.views.currentIndex()] == view:  # only the view on screen counts as shown
            self.shown.emit()

    def _failed(self, view: str, message: str) -> None:
        if self.VIEWS[self.views.currentIndex()] == view:
            self.failed.emit(message)

    def _refresh_models(self, ask: bool = False) -> None:
        for view in self._views():
            view.refresh_models(self.wanted_model, ask=ask)

    def apply_scene(self, scene: Scene) -> None:
        view = scene.view or "masked"
        self.wanted_model = scene.contextual_model or ""
        # a talk's step scores with its own models only: one loaded for a later step must not add a column
        # (and a rescoring) to this one (set first: the view may be built by showing it)
        self._only = [model_name(m) for m in scene.models] if self.presenting else None
        if "probability" in self._built:
            self._built["probability"].only = self._only
        index = self.VIEWS.index(view) if view in self.VIEWS else 0
        self.views.setCurrentIndex(index)
        view = self._view(index)
        if self.VIEWS[index] in ("masked", "next"):  # the views with the lab under them
            view.open_lab(scene)
        if self.VIEWS[index] == "next":
            view.continue_when_shown(scene.sentences[0] if scene.continuation and scene.sentences else "")
        view.set_sentences(list(scene.sentences))
        self._refresh_models(ask=True)

    def current_scene(self) -> Scene:
        index = self.views.currentIndex()
        view = self._view(index)
        lab = view.lab_fields() if self.VIEWS[index] in ("masked", "next") else {}
        if self.VIEWS[index] == "next":
            lab["continuation"] = view.continuation_field()
        picker = getattr(view, "model", None)  # the view's own model (the sentence-probability view scores all)
        return Scene("predictions", view.sentences(), list(self.session.models), selection="",
                     contextual_model=picker.currentText() if picker is not None else "", view=self.VIEWS[index],
                     **lab)
