"""The polysemy lens: one word in several sentences, static neighbours (one list whatever the sentence)
beside contextual neighbours (for each typed occurrence, the nearest occurrences in a corpus index),
layer by layer."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QSlider,
    QSplitter,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.panels.polysemy.answer import ContextualAnswer, contextual_answer
from explorer.panels.polysemy.index import CorpusIndexer
from explorer.panels.polysemy.map_page import MapPage
from explorer.panels.polysemy.occurrences import OccurrenceFetcher
from explorer.panels.polysemy.static import ALONE_SCALE, StaticNeighbours, scaled_font
from explorer.panels.polysemy.text import (
    compare_html,
    highlight,
    layer_tip,
    layers_html,
    neighbours_html,
    shared_word,
)
from explorer.scenes import Scene, model_name
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export
from explorer.widgets.flow_layout import FlowLayout
from explorer.widgets.layout_items import empty_layout
from explorer.widgets.model_picker import ModelPicker, handles_state
from explorer.widgets.occurrence_map import NUMBERED, OccurrenceMapView
from explorer.widgets.readable import TALK_TEXT, TEXT, readable_all
from explorer.widgets.tabs import tab_widget
from explorer.widgets.word_chip import chip_word, word_chip

DEBOUNCE_MS = 150
DEFAULT_SENTENCES = "We sat on the bank of the river.\nShe deposited cash at the bank."
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]  # (made readable on the background)
# typed occurrences whose corpus neighbours are listed, as many as the map numbers (the export has them all): a
# text with the word 400 times laid out a 2,000-line page, seconds of the GUI thread
GROUPS_SHOWN = NUMBERED
TABS = ("neighbours", "map", "models")  # a scene's view of the contextual column's tabs: nearest, map, All models


class PolysemyPanel(QWidget):
    shown = Signal()  # the contextual neighbours (or, in the static view, the static ones) are on screen
    failed = Signal(str)  # they cannot be shown: why

    def __init__(self, session: Session, corpus: str = "default", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.word = ""
        # until a word is clicked (or a scene names one), the lens shows the word the sentences share ("bank" in
        # the default ones, or in those kept from the last run): the first screen answers without a click
        self.word_chosen = False
        self.wanted_model = ""  # a scene's contextual model, selected (and indexed) once it is loaded
        self.wanted_layer: int | None = None
        self.wanted_models: list[str] = []  # a scene's models (a talk's "All models" compares only these)
        self.hits = 4  # nearest corpus occurrences shown per typed occurrence
        self._handles: dict[str, Any] = {}  # the handle each model name had at the last refresh
        self.scene_models_only = False  # a talk step: "All models" compares the scene's models only

        self.sentences = QPlainTextEdit(DEFAULT_SENTENCES)
        self.sentences.setPlaceholderText("one sentence per line")
        self.chips = FlowLayout(spacing=2)  # a sentence's words wrap onto more lines instead of being cut
        chip_box = QWidget()
        chip_box.setLayout(self.chips)
        left = QVBoxLayout()
        prompt = QLabel("Sentences (one per line) — click a word:")
        prompt.setWordWrap(True)  # (at a talk's zoom it set the column's width)
        left.addWidget(prompt)
        left.addWidget(self.sentences, 1)
        left.addWidget(chip_box)

        self.static = StaticNeighbours(session)
        self.static.runner.finished.connect(self._static_shown)
        self.static.runner.failed.connect(self._static_shown)  # its message is its answer
        self._on_screen: tuple[str, str, int] | None = None  # (model, word, layer) of the answer shown

        from engine.api import Capability

        self.model = ModelPicker(Capability.CONTEXTUAL, role="contextual")  # opens on the best (minilm-mlm)
        self.model.activated.connect(lambda _: setattr(self, "wanted_model", ""))  # by hand: a scene's let go
        self.layer = QSlider(Qt.Orientation.Horizontal)
        self.layer.setMinimum(0)
        self.layer.setMaximum(0)
        self.layer_label = QLabel("layer 0")
        self.indexer = CorpusIndexer(session, corpus, self)
        self.corpus = corpus  # the corpus the occurrences come from (the indexer's too)
        self.progress = self.indexer.progress  # the index builds' progress, and the on-demand fetches'
        self.message = QLabel("Load a contextual model (ELMo, GPT, BERT) to compare occurrences.")
        self.message.setWordWrap(True)
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
        self.message.setMinimumHeight(2 * self.message.fontMetrics().lineSpacing() + 6)
        self.by_layer = QLabel()  # the two typed occurrences' cosine at every layer
        self.by_layer.setWordWrap(True)
        self.by_layer.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
        self.results = QTextBrowser()
        self.map_page = MapPage(COLOURS)
        self.method = self.map_page.method
        self.views = tab_widget()
        self.views.addTab(self.results, "Nearest occurrences")
        self.views.addTab(self.map_page, "Map")
        self.views.currentChanged.connect(lambda index: self.map if index == 1 else None)
        self.compare = QTextBrowser()  # every indexed contextual model at once: the demo on one screen
        self.views.addTab(self.compare, "All models")
        self._others: list[tuple[str, int, list[tuple[str, list[Any]]]]] = []
        self._written: tuple[str, str, int] = ("", "", 0)  # the model, word and layer of the neighbours written
        self.presenting = False  # a talk's layout (set_presenting)
        # the neighbours written again in the colours of a new palette, at the next turn of the event loop. A timer
        # of the panel's own: ``QTimer.singleShot(0, self, self._rewrite)`` kept the panel, and the models it held,
        # for good when the panel was deleted before it fired (PySide 6.11; a closed talk window's panels: the
        # chaos bench's census found 25 models held so, 2.5 GB)
        self._rewrite_soon = QTimer(self, singleShot=True, interval=0)
        self._rewrite_soon.timeout.connect(self._rewrite)
        self._last_map: Any = None
        self._last_groups: list[tuple[str, list[Any]]] = []
        add_csv_export(self.results, self.contextual_rows, "contextual-neighbours")
        row = QHBoxLayout()
        row.addWidget(QLabel("Model:"))
        row.addWidget(self.model, 1)
        row.addWidget(self.layer_label)
        row.addWidget(self.layer, 1)
        # (its message says what is shown; a group box is at least as wide as its title, and the longer one set the
        # lens's width at a talk's zoom)
        contextual_box = self.contextual_box = QGroupBox("Contextual vectors")
        cl = QVBoxLayout(contextual_box)
        cl.addLayout(row)
        cl.addWidget(self.indexer)
        cl.addWidget(self.message)
        cl.addWidget(self.by_layer)
        cl.addWidget(self.views, 1)

        right = self.right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.static)
        right.addWidget(contextual_box)
        right.setSizes([180, 420])
        left_widget = self.left_widget = QWidget()
        left_widget.setLayout(left)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left_widget)
        split.addWidget(right)
        split.setSizes([300, 700])
        split.setStretchFactor(1, 2)
        self.typed = QLabel()  # a talk's static step: the sentences it is about, the word in bold
        self.typed.setWordWrap(True)
        self.typed.setVisible(False)
        self.typed.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        outer = QVBoxLayout(self)
        outer.addWidget(self.typed)
        outer.addWidget(split, 1)
        outer.addStretch(0)  # below a talk's static table, sized to its rows

        self.fetcher = OccurrenceFetcher(self)  # a clicked word's occurrences, encoded on demand
        self.fetcher.ready.connect(self._fetched)
        self.fetcher.progress.connect(self._fetch_progress)
        self.fetcher.failed.connect(self._contextual_failed)
        self.context_runner = TaskRunner(self)
        self.context_runner.finished.connect(self._show_contextual)
        self.context_runner.failed.connect(self._contextual_failed)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self._sentences_changed)
        self.sentences.textChanged.connect(self._debounce.start)
        self.model.currentIndexChanged.connect(lambda _: self._model_changed())
        self.layer.valueChanged.connect(self._layer_changed)
        self.method.currentIndexChanged.connect(lambda _: self.query_contextual())
        self.indexer.built.connect(lambda _name: self.query_contextual())
        self.indexer.status.connect(self.message.setText)
        self._models_seen: tuple[Any, ...] | None = None  # the picker's state at the last ask (ModelPicker.state)
        self._statics_seen: tuple[Any, ...] | None = None  # the static models at the last ask of the static column
        session.modelsChanged.connect(self._refresh_models)
        session.error.connect(self._model_failed)  # (a bound method: a lambda kept the panel alive for good)
        self._sentences_changed()
        self._model_changed()  # no model yet: the controls say why they are off

    @property
    def map(self) -> OccurrenceMapView:
        """The Map tab's plot, built (with the last answer's map) the first time it is needed."""
        return self.map_page.map

    @property
    def corpus(self) -> str:
        return self.indexer.corpus

    @corpus.setter
    def corpus(self, name: str) -> None:
        self.indexer.corpus = name

    # ------------------------------------------------------------ input

    def sentence_list(self) -> list[str]:
        return [s.strip() for s in self.sentences.toPlainText().splitlines() if s.strip()]

    def _sentences_changed(self) -> None:
        from engine.api import word_tokenize

        empty_layout(self.chips)
        tokens = [word_tokenize(s) for s in self.sentence_list()]  # (once: the chips and the shared word)
        shown = self.word
        if not self.word_chosen:
            self.word = shared_word(tokens)
        seen: list[str] = []
        for words in tokens:
            for w in words:
                if w not in seen and any(c.isalpha() for c in w):
                    seen.append(w)
        for w in seen[:40]:
            chip = word_chip(w, checkable=True)
            chip.setChecked(w == self.word)
            chip.clicked.connect(lambda _=False, word=w: self.select(word))
            self.chips.addWidget(chip)
            chip.show()  # children added to a visible widget must be shown
        if self.word or shown:
            self._ask(self.word)  # ("": the last word's answers go, and the lens asks for a click)

    def _static_shown(self, _result: object) -> None:
        self._maybe_shown()

    def _maybe_shown(self) -> None:
        """``shown`` once every column has answered: the static neighbours, and the contextual ones unless
        that column is hidden (a talk's static view) — a slide is never taken with one of them missing."""
        if self.static.runner.busy:
            return
        wanted = (self.model.currentText(), self.word, self.layer.value())
        if not self.contextual_box.isHidden() and (self.context_runner.busy or self._on_screen != wanted):
            return  # (an answer for another model, word or layer is not this slide's)
        self.shown.emit()

    def select(self, word: str) -> None:
        """Choose a word (a click on it): select it in every sentence where it occurs and query every model. It
        stays chosen as the sentences change; "" lets the lens show the word they share again."""
        self.word_chosen = bool(word)
        self._ask(word)

    def _ask(self, word: str) -> None:
        self.word = word.lower()
        for i in range(self.chips.count()):
            item = self.chips.itemAt(i)
            chip = item.widget() if item is not None else None
            if isinstance(chip, QToolButton):
                chip.setChecked(chip_word(chip) == self.word)
        self.static.query(self.word)
        self.query_contextual()

    # ------------------------------------------------------------ scenes

    def set_presenting(self, on: bool) -> None:
        """A talk's layout: the results fill the screen (the typed sentences head each group of
        neighbours), three neighbours per occurrence, no index buttons; only the scene's models."""
        self.left_widget.setVisible(not on)
        self.indexer.setVisible(not on)  # a talk prepares its steps before it starts
        self.hits = 3 if on else 4
        self.presenting = on
        self.scene_models_only = on
        self._scope_static()
        self._lay_out_static()
        self.static.hide_when_none = on and not self.contextual_box.isHidden()
        if not on:
            self.static.show()
        self.right.setSizes([1, 4] if on else [180, 420])
        self._show_typed()
        if self._last_groups:
            self._write_neighbours()  # in a talk's colours

    def _lay_out_static(self) -> None:
        """A talk's slide: the static table one line a model above the contextual column, or, alone on the slide
        (a static step), its lists whole and larger."""
        alone = self.presenting and self.contextual_box.isHidden()
        self.static.set_alone(alone)
        self.static.set_compact(self.presenting and not alone)  # (and the rows fitted, once)
        self.typed.setFont(scaled_font(self, ALONE_SCALE) if alone else QFont())  # the sentences it is about

    def _scope_static(self) -> None:
        """A talk's step: its static column lists only its own models (one loaded for another step is not on it)."""
        self.static.only = self.wanted_models if self.scene_models_only else None

    def _show_typed(self) -> None:
        """In a talk's static view (no contextual column to head the groups), the typed sentences."""
        show = self.left_widget.isHidden() and self.contextual_box.isHidden()
        self.typed.setVisible(show)
        if show:
            self.typed.setText("<br>".join(f"{i + 1}. {highlight(s, self.word)}" for i, s in enumerate(self.sentence_list())))

    def apply_scene(self, scene: Scene) -> None:
        self.wanted_model = scene.contextual_model or ""
        self.wanted_models = [model_name(m) for m in scene.models]  # (a folder's path: the name it loads as)
        self._scope_static()
        self.wanted_layer = scene.layer
        self.word = (scene.selection or "").lower()
        self.word_chosen = bool(self.word)  # (none named: the word its sentences share)
        self.sentences.setPlainText("\n".join(scene.sentences))
        self.views.setCurrentIndex(TABS.index(scene.view) if scene.view in TABS else 0)
        self.contextual_box.setVisible(scene.view != "static")  # static: one list whatever the sense
        self.static.hide_when_none = self.presenting and scene.view != "static"
        self._lay_out_static()
        self._show_typed()
        self._refresh_models(ask=True)

    def current_scene(self) -> Scene:
        return Scene("polysemy", self.sentence_list(), list(self.session.models), selection=self.word,
                     contextual_model=self.model.currentText() or None, layer=self.layer.value(), view=self._view())

    def _view(self) -> str:
        if self.contextual_box.isHidden():
            return "static"
        return TABS[self.views.currentIndex()]

    # ------------------------------------------------------------ models

    def _refresh_models(self, ask: bool = False) -> None:
        from engine.api import Capability

        for name, handle in self.session.models.items():  # a name now answered by another handle (the
            if self._handles.get(name, handle) is not handle:  # scrubber's checkpoint): its vectors are stale
                self.fetcher.forget(name)
                self.indexer.forget(name)
        for name in set(self._handles) - set(self.session.models):  # unloaded: its vectors go with it
            self.fetcher.forget(name)
            self.indexer.forget(name)
        self._handles = dict(self.session.models)
        self.model.set_models(self.session.models, prefer=self.wanted_model)
        # each column asks again only if its models changed (or ``ask``: a scene): every panel asked at every model
        # loaded or unloaded anywhere, and those answers queued before the user's on the one query thread
        seen = self.model.state(every_usable=True)  # (every usable one: the "All models" tab compares them)
        if ask or seen != self._models_seen:
            self._models_seen = seen
            self._model_changed()
        statics = handles_state({n: h for n, h in self.session.models.items() if Capability.STATIC in h.capabilities})
        if ask or statics != self._statics_seen:
            self._statics_seen = statics
            self.static.query(self.word)  # (a scene's contextual models fetch the word's occurrences on demand)

    def _handle(self) -> Any:
        return self.session.models.get(self.model.currentText())

    def _model_changed(self) -> None:
        handle = self._handle()
        for control in (self.layer, self.method):
            control.setEnabled(handle is not None)
        self.indexer.show_model(handle, "" if handle is not None else self.model.reason(), self.model.usable())
        if handle is None:  # say why the contextual column is empty
            reason = self.model.reason()
            self.message.setText(reason[:1].upper() + reason[1:] + ". Load ELMo, GPT or BERT to compare occurrences.")
            self._clear_contextual()
            return
        from engine.api import sense_layer

        top = max(0, int(handle.info.get("vector_layers", 1)) - 1)
        senses = sense_layer(handle.info)  # its last, unless an earlier one clearly tells senses apart better
        self.layer.blockSignals(True)
        self.layer.setMaximum(top)
        self.layer.setValue(senses if self.wanted_layer is None else min(self.wanted_layer, top))
        self.layer.blockSignals(False)
        self.layer.setToolTip(layer_tip(handle.name, senses, top))
        self.layer_label.setText(f"layer {self.layer.value()}")
        self.query_contextual()

    # ------------------------------------------------------------ contextual column

    def _model_failed(self, _message: str) -> None:
        self.query_contextual()  # a scene's model failed to load: answer with the models there are

    def _layer_changed(self, value: int) -> None:
        self.layer_label.setText(f"layer {value}")
        self.query_contextual()

    def _fetched(self, word: str) -> None:
        handle = self._handle()
        occurrences = self.fetcher.get(handle.name, word) if handle is not None else None
        if occurrences is not None and not self.indexer.running:
            self.progress.setValue(1000)
            n = len(occurrences.sentences)  # finished: a full bar that says done (not "290 of 421", as if loading)
            self.progress.setFormat(f"✓ {n:,} sentences sampled" if n < occurrences.total else f"✓ all {n:,} sentences")
            self.progress.setToolTip(f"“{word}” occurs in {occurrences.total:,} sentences of the corpus; "
                                     f"{handle.name if handle else ''} encoded {len(occurrences.sentences)} of them, "
                                     "sampled across it (kept on disk for the next time)")
        if word == self.word:
            self.query_contextual()

    def _fetch_progress(self, fraction: float, message: str) -> None:
        if self.indexer.running:
            return  # the index build's progress has the bar
        handle = self._handle()
        asked = self.fetcher.asked[1] if self.fetcher.asked else ()
        self.progress.setValue(int(fraction * 1000))
        self.progress.setToolTip(message)
        if handle is not None and handle.name in asked:  # the chosen model: its answer is what we wait for
            self.progress.setFormat("%p%")
            self.message.setText(message)
        else:  # the other models, for "All models": the bar says so and the answer above stays
            names = ", ".join(asked)  # ("All models: 1 more 10%" said little)
            self.progress.setFormat(f"All models: encoding for {names if len(names) <= 40 else f'{len(asked)} models'} %p%")
            self.progress.setToolTip(f"for the All models tab: {', '.join(asked)} — {message}")

    def query_contextual(self) -> None:
        handle = self._handle()
        if handle is None or self.contextual_box.isHidden():  # (a static view: nobody would see the answer)
            return
        if not self.word:
            self.message.setText("Click a word in the sentences.")
            return
        if self.wanted_model and self.wanted_model not in self.session.models and self.session.loading:
            # a scene's model is on its way: encoding the word with a stand-in would only delay it
            self.message.setText(f"waiting for {self.wanted_model} to load…")
            self.fetcher.cancel()  # a search or an answer under way (the first screen's word, say) is stale now
            self.context_runner.cancel()
            return
        word, layer, sentences, hits = self.word, self.layer.value(), self.sentence_list(), self.hits
        index = self.indexer.get(handle.name) or self.fetcher.get(handle.name, word)  # an index, or on demand
        if index is None:
            self.context_runner.cancel()  # an answer still coming for another model, word or layer is stale now
            if self._on_screen is not None and self._on_screen[:2] != (handle.name, word):
                self._clear_contextual()  # another model's or word's neighbours never stand under this one's name
            self.fetcher.fetch({handle.name: handle}, word, self.corpus)
            self.message.setText(f"finding the occurrences of “{word}” in the corpus with {handle.name}…")
            return
        contextual = {n: self.session.models[n] for n in self.model.usable() if n != handle.name
                      and (not self.scene_models_only or n in self.wanted_models)}
        pending = {n: h for n, h in contextual.items() if n not in self.indexer.indexes and not self.fetcher.get(n, word)}
        if pending and not self.fetcher.running:
            self.fetcher.fetch(pending, word, self.corpus)  # for "All models", after this model's answer
        method = self.map_page.method_name()
        last = self._last_map
        previous = last[1].points if last is not None and last[0] == (handle.name, word, method) else None
        others = [(name, other, self.indexer.get(name) or self.fetcher.get(name, word))
                  for name, other in contextual.items()]
        others = [(name, other, ix) for name, other, ix in others if ix is not None]

        def work() -> ContextualAnswer:
            return contextual_answer(handle, word, layer, sentences, hits, index, others, method, previous)

        self.context_runner.submit(work)

    def contextual_rows(self) -> list[list[str]]:
        rows = [["typed sentence", "rank", "similarity", "corpus sentence"]]
        for sentence, hits in self._last_groups:
            rows += [[sentence, str(i + 1), f"{h.similarity:.4f}", h.sentence] for i, h in enumerate(hits)]
        return rows

    def _show_contextual(self, answer: ContextualAnswer) -> None:
        word, layer, groups, key = answer.word, answer.layer, answer.groups, answer.map_key
        self.by_layer.setText(layers_html(answer.by_layer, layer))
        self._last_groups = groups
        self.map_page.draw(answer.occurrence_map, answer.map_error, word)
        self._last_map = None if answer.occurrence_map is None else (key, answer.occurrence_map)
        handle = self._handle()
        self.message.setText(f"“{word}” in {handle.name if handle else ''}, layer {layer}: for each typed occurrence, "
                             "the nearest occurrences in the corpus (cosine)")
        self._written = (handle.name if handle else "", word, layer)
        self._others = answer.others
        self._write_neighbours()
        self._on_screen = (key[0], word, layer)
        self._maybe_shown()

    def sentence_colours(self) -> list[str]:
        """The typed sentences' colours, readable on the neighbours' background: the theme's, or a talk's black,
        where a talk asks more contrast of them (explorer.widgets.readable)."""
        background = self.results.palette().color(QPalette.ColorRole.Base)
        return readable_all(COLOURS, background, TALK_TEXT if self.presenting else TEXT)

    def _write_neighbours(self) -> None:
        """The nearest occurrences of each typed one, and every model's side by side, in the sentences' colours."""
        name, word, layer = self._written
        colours = self.sentence_colours()
        self.results.setHtml(neighbours_html(word, self._last_groups, colours, GROUPS_SHOWN))
        from engine.api import sense_layer

        senses = {n: (h.info["sense_separation"], sense_layer(h.info)) for n, h in self.session.models.items()
                  if isinstance(h.info.get("sense_separation"), float)}  # (the catalog's, at the layer measured)
        self.compare.setHtml(compare_html(name, word, layer, self._last_groups[:GROUPS_SHOWN], self._others, colours,
                                          senses))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """A new theme, or a talk's black: the sentences' colours chosen again for it, once every widget has its
        new palette (a theme reaches the widgets one by one, the panel maybe before its neighbours' list)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_rewrite_soon"):
            self._rewrite_soon.start()

    def _rewrite(self) -> None:
        if self._last_groups:
            self._write_neighbours()

    def _clear_contextual(self) -> None:
        self._on_screen, self._last_groups, self._last_map = None, [], None
        self.by_layer.clear()
        self.results.clear()
        self.compare.clear()
        self._others = []
        self.map_page.draw(None, "", "")

    def _contextual_failed(self, message: str) -> None:
        self._clear_contextual()
        self.message.setText(message)
        self.failed.emit(message)
