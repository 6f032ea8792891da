"""The attention panel: every head of a Transformer (ours or a Hugging Face checkpoint) on a sentence
or a BERT pair — the head view (lines from queries to keys), the model view (all layers × heads as
thumbnails, one opens large), the head atlas (what each head attends to, sortable, over the sentence
or a corpus sample) and the average over heads / attention rollout per layer."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.panels.attention_atlas import AtlasPage
from explorer.panels.attention_mix import MixPage
from explorer.panels.attention_results import AttentionResult, attention_result, per_head_other
from explorer.scenes import SHOWS, VIEWS, Scene
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.block_spin import BlockSpin, block_label
from explorer.widgets.head_chip import HeadChip
from explorer.widgets.head_view import HEAD_COLOURS, HeadView
from explorer.widgets.heatmap import Heatmap, HeatmapGrid
from explorer.widgets.model_picker import ModelPicker, compared_preference
from explorer.widgets.model_row import model_row
from explorer.widgets.tabs import tab_widget

DEBOUNCE_MS = 150
DEFAULT_HEADS = 4  # heads shown in the head view at first ("all" shows every one)
# the widgets of the views built when first shown, and their view (AttentionPanel.__getattr__)
LAZY_WIDGETS = {**dict.fromkeys(("grid", "large", "grid_mode", "grid_note"), "model"),
                **dict.fromkeys(("atlas", "atlas_scope", "atlas_corpus"), "atlas"),
                **dict.fromkeys(("mix", "mix_layer", "mix_map"), "rollout")}
GRID_MODES = ("A: this model", "B: the compared model", "A − B: the difference")  # (short: one row at a talk's zoom)


class AttentionPanel(QWidget):
    shown = Signal()  # results are on screen (scenes' screenshots wait for it)
    failed = Signal(str)  # they cannot be shown: why
    VIEWS = VIEWS["attention"]

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        from engine.api import Capability

        super().__init__(parent)
        self.session = session
        self.result: AttentionResult | None = None
        self.pending_focus = -1
        self.pending_layer: int | None = None
        self.pending_heads: list[int] | None = None  # heads to show once the answer comes (the lab's knock-outs)
        self.wanted_model = ""
        self.wanted_compare = ""  # a scene's compared model (B), chosen as it loads
        self.wanted_show: str | None = None  # a scene's model-view grid: A, B or A − B (explorer.scenes.SHOWS)
        self.sentence = QLineEdit("The cat sat on the mat because it was tired.")
        self.pair = QLineEdit(placeholderText="second sentence (optional: a pair, as BERT reads it)")
        self.model = ModelPicker(Capability.ATTENTION, role="contextual")
        self.model.activated.connect(lambda _: setattr(self, "wanted_model", ""))  # by hand: a scene's let go
        self.compare = QCheckBox("compare with")  # a second model (or the same run at another step)
        self.model2 = ModelPicker(Capability.ATTENTION)
        self.model2.setEnabled(False)
        self.model2.activated.connect(lambda _: setattr(self, "wanted_compare", ""))  # by hand: a scene's B let go
        self.compare.toggled.connect(self._compare_toggled)
        self.model2.currentIndexChanged.connect(lambda _: self.query() if self.compare.isChecked() else None)
        self.message = QLabel()
        self.message.setWordWrap(True)
        top = QVBoxLayout()  # the sentences on one row, the models on the next (explorer.widgets.model_row)
        texts = QHBoxLayout()
        texts.addWidget(QLabel("Sentence:"))
        texts.addWidget(self.sentence, 3)
        texts.addWidget(self.pair, 2)
        top.addLayout(texts)
        top.addLayout(model_row(self.model, self.compare, self.model2))

        # head view
        self.layer = BlockSpin()
        self.head_buttons: list[QToolButton] = []
        self.head_row = QHBoxLayout()
        self.threshold = QSlider(Qt.Orientation.Horizontal)
        self.threshold.setMinimum(0)
        self.threshold.setMaximum(50)
        self.threshold.setValue(0)
        self.threshold.setToolTip("hide lines below this attention probability (far left: automatic, only "
                                  "lines above an even spread 1/n)")
        self.head_view = HeadView()
        controls = QHBoxLayout()
        controls.addWidget(QLabel("Layer"))
        controls.addWidget(self.layer)
        controls.addWidget(QLabel("Heads"))
        controls.addLayout(self.head_row)
        all_heads = QPushButton("all")
        no_heads = QPushButton("none")
        all_heads.clicked.connect(lambda: self.set_heads(list(range(len(self.head_buttons)))))
        no_heads.clicked.connect(lambda: self.set_heads([]))
        controls.addWidget(all_heads)
        controls.addWidget(no_heads)
        controls.addStretch(1)
        self.threshold_label = QLabel("hide < 1/n (auto)")
        controls.addWidget(self.threshold_label)
        controls.addWidget(self.threshold)
        head_page = QWidget()
        hl = QVBoxLayout(head_page)
        hl.addLayout(controls)
        hl.addWidget(self.head_view, 1)
        hover = QLabel("Hover a token on the left to see only where it looks. Blue: sentence A; red: B.")
        hover.setWordWrap(True)
        hl.addWidget(hover)

        # the other three views are built the first time they are shown (or asked for: ``__getattr__``): a talk's
        # step shows one, and the model view's heatmaps and the atlas were most of the panel's build
        self._pages: set[str] = {"head"}
        self.views = tab_widget()
        self.views.addTab(head_page, "Head view")
        self._page_layouts: dict[str, QVBoxLayout] = {}  # each later view's page: its widgets go there when built
        for view, title in zip(self.VIEWS[1:], ("Model view", "Head atlas", "Average / rollout"), strict=True):
            page = QWidget()
            self._page_layouts[view] = QVBoxLayout(page)
            self.views.addTab(page, title)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.message)
        layout.addWidget(self.views, 1)

        self._stale: set[str] = set()
        self.views.currentChanged.connect(lambda _: self._draw_visible())  # (building the view first)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._failed)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.query)
        for edit in (self.sentence, self.pair):
            edit.textChanged.connect(lambda _: self._debounce.start())
        self.model.currentIndexChanged.connect(lambda _: self.query())
        self.layer.valueChanged.connect(lambda _: self._draw_head_view())
        self.threshold.valueChanged.connect(self._threshold_changed)
        self._models_seen: tuple[Any, ...] | None = None  # the pickers' states at the last ask (ModelPicker.state)
        session.modelsChanged.connect(self._refresh_models)
        self._refresh_models()

    # ------------------------------------------------------------ the views built when first shown

    def __getattr__(self, name: str) -> Any:
        """A widget of a view not built yet (``grid``, ``atlas``, ``mix_map``…): its view is built now."""
        view = LAZY_WIDGETS.get(name)
        if view is None or view in self.__dict__.get("_pages", {view}):
            raise AttributeError(name)
        self._build(view)
        return self.__dict__[name]

    def _build(self, view: str) -> None:
        if view in self._pages:
            return
        self._pages.add(view)
        layout = self._page_layouts[view]
        if view == "model":
            self._build_model_view(layout)
        elif view == "atlas":
            self._build_atlas(layout)
        else:
            self._build_mix(layout)

    def _build_model_view(self, layout: Any) -> None:
        self.grid = HeatmapGrid()
        self.large = Heatmap()
        self.grid_mode = QComboBox()
        self.grid_mode.addItems(list(GRID_MODES))
        if self.wanted_show is not None:
            self.grid_mode.setCurrentIndex(SHOWS.index(self.wanted_show))
        self.grid_mode.setToolTip("with “compare with” ticked: the second model's heads, or the difference head by head")
        self.grid_note = QLabel("")
        self.grid_note.setWordWrap(True)
        maps_split = QSplitter(Qt.Orientation.Horizontal)
        maps_split.addWidget(self.grid)
        maps_split.addWidget(self.large)
        maps_split.setSizes([500, 400])
        mode_row = QHBoxLayout()
        mode_row.addWidget(QLabel("Show"))
        mode_row.addWidget(self.grid_mode)
        mode_row.addWidget(self.grid_note, 1)
        layout.addLayout(mode_row)
        layout.addWidget(maps_split, 1)
        self.grid.clicked.connect(self.open_head)
        self.grid_mode.currentIndexChanged.connect(lambda _: self._draw_model_view())

    def _build_atlas(self, layout: Any) -> None:
        self.atlas_page = AtlasPage(lambda: self.session.models.get(self.model.currentText()))
        self.atlas_page.head_chosen.connect(self._atlas_clicked)
        layout.addWidget(self.atlas_page)
        for name in ("atlas", "atlas_scope", "atlas_corpus"):  # (the panel's names for them, as before)
            self.__dict__[name] = getattr(self.atlas_page, name)

    def _build_mix(self, layout: Any) -> None:
        self.mix_page = MixPage(self.result.maps.weights.shape[0] if self.result is not None else 0)
        layout.addWidget(self.mix_page)
        for name in ("mix", "mix_layer", "mix_map"):
            self.__dict__[name] = getattr(self.mix_page, name)

    @property
    def atlas_job(self) -> Any:
        """The head atlas's corpus job (None before one is asked)."""
        return self.atlas_page.atlas_job if "atlas" in self._pages else None

    # ------------------------------------------------------------ input

    def _refresh_models(self, ask: bool = False) -> None:
        """The pickers list the models; asks again only if its models changed (or ``ask``: a scene)."""
        self.model.set_models(self.session.models, prefer=self.wanted_model)
        self.model2.set_models(self.session.models, prefer=compared_preference(self.model, self.model2,
                                                                               self.wanted_compare))
        seen = (self.model.state(), self.model2.state() if self.compare.isChecked() else None)  # (compared: B too)
        if ask or seen != self._models_seen:
            self._models_seen = seen
            self.query()

    def set_presenting(self, on: bool) -> None:
        """A talk's layout: the sentence fields get the compare controls' room (a step shows one model)."""
        for widget in (self.compare, self.model2):
            widget.setVisible(not on)

    def apply_scene(self, scene: Scene) -> None:
        sentences = list(scene.sentences or [""])
        self.wanted_model = scene.contextual_model or ""
        self.sentence.setText(sentences[0])
        self.pair.setText(sentences[1] if len(sentences) > 1 else "")
        for field in (self.sentence, self.pair):
            field.setCursorPosition(0)  # a long sentence shows its beginning, not its end
        view = scene.view or "head"
        self.views.setCurrentIndex(self.VIEWS.index(view) if view in self.VIEWS else 0)
        if scene.layer is not None:
            self.pending_layer = scene.layer
        self.wanted_compare = scene.compare or ""  # B, beside A: the model view's grid shows A, B or A − B
        self.wanted_show = scene.show
        if scene.show is not None and "model" in self._pages:
            self.grid_mode.setCurrentIndex(SHOWS.index(scene.show))
        self.compare.blockSignals(True)  # (one query below, not two)
        self.compare.setChecked(bool(scene.compare))
        self.compare.blockSignals(False)
        self.model2.setEnabled(bool(scene.compare))
        self._refresh_models(ask=True)

    def current_scene(self) -> Scene:
        compared = self.compare.isChecked() and bool(self.model2.currentText())
        show = SHOWS[self.grid_mode.currentIndex()] if compared and "model" in self._pages else None
        return Scene("attention", [t for t in (self.sentence.text(), self.pair.text()) if t], list(self.session.models),
                     selection="", contextual_model=self.model.currentText(), layer=self.layer.value(),
                     view=self.VIEWS[self.views.currentIndex()], compare=self.model2.currentText() if compared else None,
                     show=show)

    def _compare_toggled(self, on: bool) -> None:
        self.model2.setEnabled(on)
        self.query()

    def query(self) -> None:
        self._debounce.stop()  # asked now: a query the typing scheduled would only ask the same again
        handle = self.session.models.get(self.model.currentText())
        for control in (self.sentence, self.pair):
            control.setEnabled(handle is not None)
        if "atlas" in self._pages:
            self.atlas_corpus.setEnabled(handle is not None)
        if handle is None:
            reason = self.model.reason()
            self.message.setText(reason[:1].upper() + reason[1:] + ". Load BERT, GPT or a Hugging Face checkpoint.")
            self._clear_views()
            return
        a, b = self.sentence.text().strip(), self.pair.text().strip()
        if not a:
            self.message.setText("Type a sentence to see its attention.")
            self._clear_views()
            return
        second = self.session.models.get(self.model2.currentText()) if self.compare.isChecked() else None

        self.runner.submit(lambda: attention_result(handle, (a, b) if b else a, second))

    # ------------------------------------------------------------ results

    def _show(self, result: AttentionResult) -> None:
        self.result = result
        maps = result.maps
        layers, heads = maps.weights.shape[:2]
        self.message.setText(f"{result.name}: {layers} layers × {heads} heads on {len(maps.tokens)} tokens"
                             + (f" — {maps.notice}" if maps.notice else ""))
        if len(self.head_buttons) != heads:
            self._make_head_buttons(heads)
        if self.pending_heads is not None:
            for i, button in enumerate(self.head_buttons):
                button.blockSignals(True)
                button.setChecked(i in self.pending_heads)
                button.blockSignals(False)
            self.pending_heads = None
        self.layer.blockSignals(True)
        self.layer.setMaximum(layers - 1)
        self.layer.blockSignals(False)
        if "rollout" in self._pages:
            self.mix_page.set_layers(layers)
        if self.pending_layer is not None:
            self.layer.setValue(min(self.pending_layer, layers - 1))
            self.pending_layer = None
        self._stale = set(self.VIEWS)  # each view is drawn when it is on screen (long inputs stay fast)
        self._draw_visible()
        self.shown.emit()

    def _clear_views(self) -> None:
        """Nothing to show: no drawing of an earlier sentence stays on screen."""
        self.result = None
        self.head_view.show_layer((), (), np.zeros((0, 0, 0)), [])
        if "model" in self._pages:
            self.grid.clear_all()
            self.large.clear_matrix()
        if "rollout" in self._pages:
            self.mix_page.clear()

    def _draw_visible(self) -> None:
        view = self.VIEWS[self.views.currentIndex()]
        self._build(view)
        if self.result is None:
            return
        if view not in self._stale:
            return
        self._stale.discard(view)
        if view == "head":
            self._draw_head_view()
        elif view == "model":
            self._draw_model_view()
        elif view == "atlas":
            self.atlas_page.fill(self.result.stats, "over the sentence above")
        else:
            self.mix_page.draw(self.result)

    def _failed(self, message: str) -> None:
        self.message.setText(message)
        self.failed.emit(message)

    def _make_head_buttons(self, heads: int) -> None:
        for button in self.head_buttons:
            self.head_row.removeWidget(button)
            button.deleteLater()
        self.head_buttons = []
        for head in range(heads):
            # at first the first 4 heads: all 12 of a BERT-base at once are a tangle (and slow to draw)
            button = HeadChip(head, HEAD_COLOURS[head % len(HEAD_COLOURS)])
            button.setChecked(head < DEFAULT_HEADS)
            button.toggled.connect(lambda _: self._draw_head_view())
            self.head_row.addWidget(button)
            self.head_buttons.append(button)

    def selected_heads(self) -> list[int]:
        return [i for i, b in enumerate(self.head_buttons) if b.isChecked()]

    def set_heads(self, heads: list[int]) -> None:
        for i, button in enumerate(self.head_buttons):
            button.blockSignals(True)
            button.setChecked(i in heads)
            button.blockSignals(False)
        self._draw_head_view()

    def _first_head(self) -> int:
        heads = self.selected_heads()
        return heads[0] if heads else 0

    def _draw_head_view(self) -> None:
        if self.result is None:
            return
        maps = self.result.maps
        self.head_view.show_layer(maps.tokens, maps.segments, maps.weights[self.layer.value()], self.selected_heads())
        if self.pending_focus >= 0:
            self.head_view.focus = min(self.pending_focus, len(maps.tokens) - 1)
            self.pending_focus = -1

    def _threshold_changed(self, value: int) -> None:
        self.threshold_label.setText(f"hide < {value / 100:.2f}" if value else "hide < 1/n (auto)")
        self.head_view.set_threshold(value / 100)

    def _draw_model_view(self) -> None:
        """Every head as a thumbnail (this model's, the compared one's, or A − B), and one large."""
        if self.result is None:
            return
        mode = self.grid_mode.currentIndex()
        other, why = per_head_other(self.result)
        thumbs, note = self.result.thumbnails, ""
        if mode and other is None:
            mode, note = 0, why + " — showing this model's heads"
        elif mode == 1 and other is not None and other.thumbnails is not None:
            thumbs, note = other.thumbnails, f"{other.name}'s heads"
        elif mode == 2 and other is not None and other.difference is not None:
            thumbs = other.difference
            note = (f"{self.result.name} − {other.name}: red where A attends more, blue where B does; "
                    "one scale for every head")
        self.grid_note.setText(note)
        self.grid.show_all(thumbs, signed=mode == 2)
        layers = self.result.maps.weights.shape[0]
        self.open_head(min(self.layer.value(), layers - 1), self._first_head())

    def open_head(self, layer: int, head: int) -> None:
        """The model view's large map of one head (with token labels and values on hover): this model's,
        the compared model's, or their difference, as the model view's "Show" says."""
        if self.result is None:
            return
        maps = self.result.maps
        other, _ = per_head_other(self.result)
        mode = self.grid_mode.currentIndex() if other is not None else 0
        if other is None or other.weights is None or mode == 0:
            self.large.show_matrix(maps.weights[layer, head], maps.tokens, maps.tokens, f"{block_label(layer)}, head {head}")
        elif mode == 1:
            self.large.show_matrix(other.weights[layer, head], maps.tokens, maps.tokens,
                                   f"{other.name}: {block_label(layer)}, head {head}")
        elif mode == 2:
            self.large.show_matrix(maps.weights[layer, head] - other.weights[layer, head], maps.tokens, maps.tokens,
                                   f"{block_label(layer)}, head {head}: {self.result.name} − {other.name}", signed=True)

    def show_token(self, sentence: str, position: int, model: str = "", layer: int | None = None,
                   heads: list[int] | None = None) -> None:
        """Open the head view on ``sentence`` with the query token at ``position`` in focus (e.g. a [MASK]);
        ``model``, ``layer`` and ``heads``: that model's layer with those heads (the lab's knock-outs)."""
        if model and self.model.findText(model) >= 0:
            self.model.setCurrentIndex(self.model.findText(model))
        if layer is not None:
            self.pending_layer = layer
        self.pending_heads = heads
        self.pending_focus = position
        self.pair.setText("")
        self.sentence.setText(sentence)
        self.views.setCurrentIndex(0)
        self.query()

    # ------------------------------------------------------------ atlas

    def _atlas_clicked(self, layer: int, head: int) -> None:
        self.layer.setValue(layer)
        self.set_heads([head])
        self.views.setCurrentIndex(0)
