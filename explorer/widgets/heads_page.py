"""The lab's fourth page: which attention heads the prediction needs (engine.api.head_ablation). Each head of each
layer is knocked out in turn (its output replaced by its mean over the text's tokens) and the table shows what
that costs log P(target), or log P(target) − log P(foil): layers as rows (the first at the bottom, as the lens
grid), heads as columns, red where a head pushed the prediction up, blue where it held it down. Model A's
heads, and a compared model B's (its table, or A − B) where it has as many layers and heads; a word to explain and a
foil are optional; it answers as the text changes while the page is open. Under the table, where the head clicked
(the strongest at first) matters, token by token (explorer/widgets/head_positions.py)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.failures import Outcome, attempt
from explorer.tasks import TaskRunner
from explorer.widgets.direct_table import EFFECT_TIP, EFFECTS, direct_cells, direct_text
from explorer.widgets.export import add_csv_export
from explorer.widgets.head_positions import HeadPositionsStrip
from explorer.widgets.lens_grid import LayerTokenTable
from explorer.widgets.neuron_strip import NeuronStrip
from explorer.widgets.neuron_window import NeuronWindow
from explorer.widgets.word_and_foil import WordAndFoil

ABOUT = ("Which attention heads the prediction needs: each head of each layer knocked out in turn (its output at "
         "every token replaced by its mean over the text's tokens, as TransformerLens's head ablations do) and the "
         "prediction measured again. Each cell: what that head's knock-out costs log P of the word (red: the head "
         "pushed it up; blue: it held it down). Name a word to explain another prediction, and a foil to ask why "
         "it rather than the foil.")
SHOWN_TOP = 3  # the heads named in the note
# the choice's words -> engine.api.head_ablation's mean_over ("contrast": its output on the sentence typed beside it)
MEANS = {"its mean over the text": "text", "its mean over the corpus": "corpus",
         "its output on another sentence": "contrast"}


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
        corpus = " (knocked out to their means over the corpus)" if result.mean_over == "corpus" else \
            f" (patched from “{result.contrast}”)" if result.mean_over == "contrast" else ""
        return f"{head}. Heads it needs most{corpus}: {strongest}.{notice}"
    layers, heads = result.effect.shape
    to = "its mean over held-out sentences of the corpus" if result.mean_over == "corpus" else \
        f"its output on “{result.contrast}”, token by token" if result.mean_over == "contrast" else \
        "its mean over the text's tokens"
    return (f"{head}. Explained: {result.explained} = {result.value:+.2f}, each of {layers} × {heads} heads knocked out "
            f"in turn (to {to}). Heads it needs most: {strongest}{against}.{notice} Click a head to see at which tokens it "
            "matters (below); double-click to see where it attends.")


SHOW = ("A", "B", "A − B")


class HeadsPage(QWidget, WordAndFoil):
    shown = Signal()  # a table is on screen
    failed = Signal(str)  # the question cannot be answered: why
    head_chosen = Signal(int, int)  # (layer from 0, head): a cell double-clicked, to see where that head attends

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None  # model A's HeadAblation on screen
        self.compared: Any = None  # model B's, where it has as many layers and heads
        self.asked: tuple[tuple[str, ...], str, str, str] | None = None  # (models, text, target, foil) asked last
        self.names: tuple[str, ...] = ()  # the models whose heads are on screen (A first)
        self.brief = False  # a talk's step: the note says only the heads that matter
        self.b_note = ""  # what is said of model B under A's note
        self.handles: list[Any] = []  # the models on screen (A first), whose heads the strip below knocks out
        self.pending: list[Any] = []  # the models asked last
        self.asked_over = ("text", "")  # ... and what their heads were knocked out to (mean_over, a contrast)
        self.chosen: tuple[int, int] | None = None  # the head clicked or a scene's (layer from 0, head); None: the
        # strongest shown (kept while the text or the word changes, as long as the model has that head)
        self.head_named = False  # a scene named the head it shows token by token (a talk's step then shows the strip)
        row = self.make_fields()
        self.show_which = QComboBox()
        self.show_which.addItems(list(SHOW))
        self.show_which.setVisible(False)  # shown while a compared model B answers with as many layers and heads
        self.show_which.setToolTip("with a compared model B of as many layers and heads: its table, or A − B (red: "
                                   "A needs the head more)")
        self.button = QPushButton("Knock out")
        self.over = QComboBox()
        self.over.addItems(list(MEANS))
        self.over.setToolTip("what a knocked-out head's output is replaced by: its mean over the text's own tokens, "
                             "or over 128 held-out sentences of the default corpus (a dataset's mean, as in "
                             "TransformerLens's demos; read once per model, a second or so), or its output on another "
                             "sentence of as many tokens, token by token (activation patching: which heads carry "
                             "what tells the two apart)")
        self.contrast = QLineEdit()
        self.contrast.setPlaceholderText("a sentence of as many tokens (The dogs in the garden), then Enter")
        self.contrast_row = QWidget()  # (its own row: a sentence is wider than the room left beside the choices)
        contrast_row = QHBoxLayout(self.contrast_row)
        contrast_row.setContentsMargins(0, 0, 0, 0)
        contrast_row.addWidget(QLabel("the other sentence"))
        contrast_row.addWidget(self.contrast, 1)
        self.contrast_row.setVisible(False)
        self.over.currentIndexChanged.connect(lambda _: self.contrast_row.setVisible(self.mean_over == "contrast"))
        self.effect = QComboBox()
        self.effect.addItems(list(EFFECTS))
        self.effect.setToolTip(EFFECT_TIP)
        self.note = QLabel(ABOUT)
        self.note.setWordWrap(True)
        self.table = LayerTokenTable()
        self.show_label = QLabel("show")
        self.show_label.setVisible(False)
        row.addWidget(self.button)
        self.second_row = QWidget()  # (one row of all of it is too wide at a talk's zoom)
        second = QHBoxLayout(self.second_row)
        second.setContentsMargins(0, 0, 0, 0)
        second.addWidget(QLabel("knock a head out to"))
        second.addWidget(self.over)
        second.addWidget(QLabel("effect"))
        second.addWidget(self.effect)
        second.addWidget(self.show_label)
        second.addWidget(self.show_which)
        second.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.second_row)
        layout.addWidget(self.contrast_row)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        self.where = HeadPositionsStrip()  # where the chosen head matters, token by token
        layout.addWidget(self.where)
        self.neurons = NeuronStrip()  # in its place, for an MLP's cell of the direct table: its neurons
        self.neurons.setVisible(False)
        self.neurons.neuron_chosen.connect(self._open_neuron)
        self.neuron_window: NeuronWindow | None = None  # what makes a neuron clicked fire (made at the first click)
        layout.addWidget(self.neurons)
        add_csv_export(self.table, self.table.export_rows, "head-knock-outs", png=True)
        self.table.cellDoubleClicked.connect(self._double_clicked)
        self.table.cell_clicked.connect(self._clicked)
        self.show_which.currentIndexChanged.connect(lambda _: self._render())
        self.effect.currentIndexChanged.connect(lambda _: self._render())  # (every answer carries both)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._failed)

    @property
    def name(self) -> str:
        """The model whose heads a double-click opens: B's while B's table is shown, else A's."""
        if not self.names:
            return ""
        return self.names[1] if self.compared is not None and self.show_which.currentText() == "B" else self.names[0]

    @property
    def shown_result(self) -> Any:
        """The knock-outs whose model a double-click opens: B's while B's table is shown, else A's."""
        return self.compared if self.compared is not None and self.show_which.currentText() == "B" else self.result

    def _double_clicked(self, row: int, column: int) -> None:
        if self.result is not None and column < self.result.effect.shape[1]:  # (not the direct table's MLP)
            self.head_chosen.emit(self.result.effect.shape[0] - 1 - row, column)  # (drawn with layer 1 at the bottom)

    @property
    def mean_over(self) -> str:
        """What a knocked-out head is replaced by, as engine.api.head_ablation's ``mean_over`` names it."""
        return MEANS[self.over.currentText()]

    @property
    def effect_shown(self) -> str:
        """"knockout" (each head's whole effect) or "direct" (what it writes straight into the logits)."""
        return EFFECTS[self.effect.currentText()]

    def set_effect(self, effect: str | None) -> None:
        """A scene's measure ("knockout" or "direct"; None: the knock-outs)."""
        values = list(EFFECTS.values())
        self.effect.setCurrentIndex(values.index(effect) if isinstance(effect, str) and effect in values else 0)

    @property
    def replacement(self) -> tuple[str, str]:
        """(mean_over, the contrast sentence or "") as chosen now."""
        return self.mean_over, self.contrast.text().strip() if self.mean_over == "contrast" else ""

    def set_mean_over(self, mean_over: str | None, contrast: str | None = None) -> None:
        """A scene's choice ("text", "corpus" or "contrast" with its sentence; None: the text's)."""
        values = list(MEANS.values())
        self.contrast.setText((contrast or "") if mean_over == "contrast" else "")
        self.over.setCurrentIndex(values.index(mean_over) if isinstance(mean_over, str) and mean_over in values else 0)
        self.contrast_row.setVisible(self.mean_over == "contrast")  # (a scene's choice comes with the combo's signals
        # off)

    def answers(self, names: tuple[str, ...], text: str) -> bool:
        return WordAndFoil.answers(self, names, text) and self.asked_over == self.replacement

    def _clicked(self, layer: int, head: int) -> None:
        if self.result is None:
            return
        if head >= self.result.effect.shape[1]:  # the direct table's MLP: its neurons, in the strip's place
            self._ask_neurons(layer)
            return
        self._show_where()
        self.chosen = (layer, head)
        self._ask_where()

    def _ask_neurons(self, layer: int) -> None:
        if self.asked is None or len(self.handles) < len(self.names) or self.effect_shown != "direct":
            return
        show = self.show_which.currentText() if self.compared is not None else "A"
        _, text, target, foil = self.asked
        self.neurons.ask(self.handles[1] if show == "B" else self.handles[0], text, layer, target, foil)
        self.where.setVisible(False)
        self.neurons.setVisible(True)

    def _open_neuron(self, handle: Any, layer: int, neuron: int) -> None:
        if self.neuron_window is None:
            self.neuron_window = NeuronWindow(self.window())
        self.neuron_window.show_neuron(handle, layer, neuron)

    def _show_where(self) -> None:
        """The head's strip again (an MLP's neurons were shown in its place)."""
        self.neurons.setVisible(False)
        self.where.setVisible(not self.brief or self.head_named)

    def _ask_where(self) -> None:
        """The strip below: where the head clicked (or the shown table's strongest) matters, token by token."""
        if self.result is None or self.asked is None or len(self.handles) < len(self.names):
            return
        show = self.show_which.currentText() if self.compared is not None else "A"
        a, b = self.result, self.compared
        effect = a.effect - b.effect if show == "A − B" else self.shown_result.effect
        if self.effect_shown == "direct" and a.direct is not None and (show == "A" or b.direct is not None):
            effect = a.direct.effect - b.direct.effect if show == "A − B" else self.shown_result.direct.effect
        layer, head = self.chosen or np.unravel_index(int(np.argmax(effect)), effect.shape)
        handle = self.handles[1] if show == "B" else self.handles[0]
        _, text, target, foil = self.asked
        self.where.ask(handle, text, int(layer), int(head), target, foil, *self.asked_over)

    def set_scene_head(self, head: list[int] | None) -> None:
        """A scene's head shown token by token ([layer from 0, head]; None: the strongest), shown in a talk too."""
        self.chosen = (head[0], head[1]) if head else None
        self.head_named = bool(head)
        self.where.setVisible(not self.brief or self.head_named)

    def set_brief(self, on: bool) -> None:
        """A talk's step (on): the notes short, the table given the room — the choice of mean left out (the note
        says a corpus's), and the strip of one head's tokens only where the scene named that head."""
        self.brief = on
        self.where.set_brief(on)
        self.second_row.setVisible(not on)
        self.contrast_row.setVisible(not on and self.mean_over == "contrast")  # (the note names the sentence)
        self.where.setVisible(not on or self.head_named)
        self._render()

    def set_show(self, show: str | None) -> None:
        """A scene's table: A, B or A − B (B's while a compared model answers)."""
        if show in SHOW:
            self.show_which.setCurrentIndex(SHOW.index(show))

    def ask(self, handles: list[Any], text: str) -> None:
        """Knock out model A's heads (and a compared B's) on ``text`` with the page's target and foil; a newer
        question supersedes it."""
        if not handles or not text.strip():
            return
        target, foil = self.fields()
        names = tuple(h.name for h in handles)
        over = self.replacement
        if over == ("contrast", ""):
            self.note.setText("Type a sentence of as many tokens as the text beside “its output on another "
                              "sentence”, then Enter: each head's output on it is put in place of its output on the "
                              "text, one head at a time.")
            return
        self.asked, self.asked_over = (names, text, target, foil), over
        self.pending = list(handles)
        first = " (each head's mean over the corpus read first, once a model)" if over[0] == "corpus" else ""
        self.note.setText(f"knocking out {' and '.join(names)}'s heads one by one{first}…")
        mean_over, contrast = ("text", over[1]) if over[0] == "contrast" else (over[0], None)

        def work() -> tuple[tuple[tuple[str, ...], str, str, str], tuple[str, str], list[Outcome[Any]]]:
            return (names, text, target, foil), over, [attempt(functools.partial(
                h.head_ablation, text, target or None, foil or None, mean_over, contrast)) for h in handles]

        self.runner.submit(work)

    def _failed(self, message: str) -> None:
        self.result = self.compared = None
        self.table.setRowCount(0)
        self.where.clear()
        self.note.setText(message)
        self.failed.emit(message)

    def _show(self, answer: tuple[tuple[tuple[str, ...], str, str, str], tuple[str, str], list[Outcome[Any]]]) -> None:
        asked, over, outcomes = answer
        if (asked, over) != (self.asked, self.asked_over):
            return  # a question asked since: its answer follows
        if outcomes[0].failed:
            self._failed(outcomes[0].message)
            return
        names = asked[0]
        self.result, self.compared, self.names, self.b_note = outcomes[0].value, None, names, ""
        self.handles = self.pending
        self._show_where()  # (a new answer: an MLP's neurons shown for the old one go)
        if self.chosen is not None and not (self.chosen[0] < self.result.effect.shape[0]
                                            and self.chosen[1] < self.result.effect.shape[1]):
            self.chosen = None  # a model without that head: its strongest
        if len(outcomes) > 1:
            other: Any = outcomes[1].value
            if outcomes[1].failed:
                self.b_note = f"{names[1]}: {outcomes[1].message}"
            elif other.effect.shape != self.result.effect.shape:
                self.b_note = (f"{names[1]} has {other.effect.shape[0]} layers × {other.effect.shape[1]} heads, "
                               f"{names[0]} {self.result.effect.shape[0]} × {self.result.effect.shape[1]}: only "
                               f"{names[0]}'s are shown")
            else:
                self.compared = other
                self.b_note = heads_text(names[1], other, self.brief)
        for widget in (self.show_label, self.show_which):
            widget.setVisible(self.compared is not None)
        self._render()
        self.shown.emit()

    def _render(self) -> None:
        """The table of A, of B, or of A − B, as ``show`` says (A's where there is no B to show)."""
        a, b = self.result, self.compared
        if a is None:
            return
        if self.effect_shown == "direct":
            self._render_direct()
            return
        self._show_where()
        show = self.show_which.currentText() if b is not None else "A"
        shown, name = (b, self.names[1]) if show == "B" else (a, self.names[0])
        effect = a.effect - b.effect if show == "A − B" else shown.effect
        layers, heads = effect.shape
        span = float(np.abs(effect).max()) or 1.0
        texts = [[f"{effect[layer, h]:+.2f}" for h in range(heads)] for layer in range(layers)]
        if show == "A − B":
            tips = [[f"layer {layer + 1}, head {h}: knocked out, it costs {self.names[0]} {a.effect[layer, h]:+.3f} "
                     f"and {self.names[1]} {b.effect[layer, h]:+.3f} of {a.explained} (red: {self.names[0]} needs "
                     "it more). Double-click: where it attends, in the Attention tab"
                     for h in range(heads)] for layer in range(layers)]
        else:
            tips = [[f"{name}, layer {layer + 1}, head {h} knocked out: {shown.explained} changes by "
                     f"{-shown.effect[layer, h]:+.3f}; P('{shown.target.strip()}') {shown.p_target:.1%} → "
                     f"{shown.p_ablated[layer, h]:.1%}. Double-click: where it attends, in the Attention tab"
                     for h in range(heads)] for layer in range(layers)]
        self.table.show_cells(texts, effect / span, tuple(f"head {h}" for h in range(heads)), tips,
                              signed=True, labels=[f"layer {layer + 1}" for layer in range(layers)])
        self.table.values = effect  # the export gives the effects, not the colours' scale
        notes = [heads_text(self.names[0], a, self.brief)]
        if b is not None:
            notes.append(heads_text(self.names[1], b, self.brief))
            if not self.brief:
                notes.append(f"Shown: {show if show != 'A − B' else self.names[0] + ' − ' + self.names[1]}"
                             + (" (red: the head matters more to A)" if show == "A − B" else "") + ".")
        elif self.b_note:
            notes.append(self.b_note)
        self.note.setText("\n".join(notes))
        self._ask_where()

    def _render_direct(self) -> None:
        """Each head's direct effect on the logits, with each layer's MLP's (A's, B's or A − B's where B has them);
        a post-LN model's reason where it has none."""
        a, b = self.result, self.compared
        if a.direct is None:
            self.table.setRowCount(0)
            self.note.setText(direct_text(self.names[0], a) + " Its knock-outs: \"knocked out\" above.")
            return
        show = self.show_which.currentText() if b is not None and b.direct is not None else "A"
        texts, colours, values, columns, tips = direct_cells(self.names, a, b, show)
        layers = values.shape[0]
        self.table.show_cells(texts, colours, columns, tips, signed=True,
                              labels=[f"layer {layer + 1}" for layer in range(layers)])
        self.table.values = values  # the export gives the effects, the MLPs' last
        notes = [direct_text(self.names[0], a, self.brief)]
        if b is not None:
            notes.append(direct_text(self.names[1], b, self.brief))
        elif self.b_note:
            notes.append(self.b_note)
        self.note.setText("\n".join(notes))
        self._ask_where()
