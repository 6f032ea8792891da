"""What makes one MLP neuron fire (engine.api.neuron_examples), in a window of its own beside the main one: the
held-out sentences of the corpus where its output is highest, each token shaded by the neuron's output there against
its highest, and (pre-LN networks) the tokens it pushes up and down in the logits at its highest. Opened by clicking a
neuron under the heads page's direct table, or from a loaded Transformer's menu in the model library; any neuron of
the model's layers can be asked from it. The corpus is read
once per model and layer in a background job (progress, Cancel); a neuron asked while another is on its way replaces
it."""

from __future__ import annotations

import html
import weakref
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from explorer.tasks import BackgroundJob, superseding_job
from explorer.widgets.export import add_csv_export
from explorer.widgets.progress_bar import ProgressBar
from explorer.widgets.word_neurons_row import WordNeuronsRow

EXAMPLES = 12  # the sentences shown
SHADE = (214, 39, 40)  # the red of a cell that pushes a prediction up (explorer.widgets.lens_grid)


def sentence_html(example: Any, highest: float) -> str:
    """One sentence, each token shaded by the neuron's output there (0 to ``highest``: clear to full red; negative
    outputs clear), the token where it is highest in bold; its highest output in front. Word pieces that carry no
    space of their own (BERT's ##) join their word; byte-level and metaspace tokens carry theirs."""
    carried = any(t.startswith(" ") for t, s in zip(example.tokens, example.special, strict=True) if not s)
    parts = []
    for i, (token, special) in enumerate(zip(example.tokens, example.special, strict=True)):
        if special:
            continue
        text = token if carried else token[2:] if token.startswith("##") else f" {token}"
        share = max(0.0, float(example.activation[i])) / highest if highest > 0 else 0.0
        lead = len(text) - len(text.lstrip(" "))
        word = html.escape(text.lstrip(" ")) if text.strip() else "␣"  # (a token of spaces alone: seen)
        if i == example.peak:
            word = f"<b><u>{word}</u></b>"
        parts.append(" " * lead + f'<span style="background-color: rgba({SHADE[0]}, {SHADE[1]}, {SHADE[2]}, '
                     f'{min(1.0, share):.2f})">{word}</span>')
    more = " …" if example.cut else ""  # (read up to engine's MAX_TOKENS)
    return (f"<tr><td align='right' style='padding-right: 10px'><tt>{float(example.activation[example.peak]):+.2f}"
            f"</tt></td><td>{''.join(parts).strip()}{more}</td></tr>")


def summary_text(name: str, result: Any) -> str:
    return (f"{name}, layer {result.layer + 1}'s MLP, neuron {result.neuron} of {result.neurons:,}: above 0 at "
            f"{result.fires:.1%} of {result.tokens:,} tokens of {result.sentences:,} held-out sentences of the "
            f"{result.corpus} corpus (mean {result.mean:+.3f}); highest {result.highest:+.2f}. The sentences where it "
            "is highest, each token shaded by its output there (full red: its highest); bold: where the sentence's "
            "is.")


def writes_text(result: Any) -> str:
    if not result.promotes:
        return f"What it writes into the logits is not read here: {result.writes_refusal}"

    def named(pairs: tuple[tuple[str, float], ...]) -> str:
        return ", ".join(f"'{html.escape(t.strip() or t)}' {v:+.2f}" for t, v in pairs)

    return (f"At its highest it writes straight into the logits (read through the final norm and the head): up "
            f"{named(result.promotes)}; down {named(result.suppresses)}.")


class NeuronWindow(QDialog):
    """``show_neuron(handle, layer, neuron)``; the layer and neuron boxes ask another of the same model."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("What makes a neuron fire")
        self.setWindowFlag(Qt.WindowType.WindowContextHelpButtonHint, False)
        self._handle: Any = None  # a weak reference: a model unloaded from the session goes (its memory with it)
        self.asked: tuple[str, int, int] | None = None  # (model, layer, neuron) on screen or on its way
        self.result: Any = None
        self.job: BackgroundJob | None = None
        self.model = QLabel("")
        self.layer = QSpinBox()
        self.layer.setMinimum(1)
        self.neuron = QSpinBox()
        self.neuron.setMinimum(0)
        self.neuron.setToolTip("which of the layer's MLP neurons (from 0)")
        self.show_button = QPushButton("Show")
        self.show_button.clicked.connect(self._ask_boxes)
        self.neuron.editingFinished.connect(self._ask_boxes)
        row = QHBoxLayout()
        row.addWidget(self.model)
        row.addWidget(QLabel("layer"))
        row.addWidget(self.layer)
        row.addWidget(QLabel("neuron"))
        row.addWidget(self.neuron)
        row.addWidget(self.show_button)
        row.addStretch(1)
        self.progress = ProgressBar()
        self.progress.setRange(0, 1000)
        self.cancel = QPushButton("Cancel")
        self.cancel.clicked.connect(self._cancel)
        busy = QHBoxLayout()
        busy.addWidget(self.progress, 1)
        busy.addWidget(self.cancel)
        self.busy = QWidget()
        self.busy.setLayout(busy)
        self.busy.setVisible(False)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.writes = QLabel("")
        self.writes.setWordWrap(True)
        self.writes.setTextFormat(Qt.TextFormat.RichText)
        self.sentences = QTextBrowser()
        self.by_word = WordNeuronsRow()  # the neurons of the layer most selective for a word typed
        self.by_word.word.returnPressed.connect(self._find)
        self.by_word.find_button.clicked.connect(self._find)
        self.by_word.neuron_chosen.connect(self._chosen)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.by_word)
        layout.addWidget(self.busy)
        layout.addWidget(self.summary)
        layout.addWidget(self.writes)
        layout.addWidget(self.sentences, 1)
        add_csv_export(self.sentences, self.export_rows, "neuron-sentences", png=True)
        self.resize(860, 640)

    def export_rows(self) -> list[list[str]]:
        """The sentences shown, a row a token: its rank, position, text and the neuron's output there."""
        rows = [["model", "layer", "neuron", "sentence", "token", "text", "output", "highest here"]]
        if self.result is None or self.asked is None:
            return rows
        for rank, e in enumerate(self.result.examples, 1):
            rows += [[self.asked[0], str(self.result.layer + 1), str(self.result.neuron), str(rank), str(i), token,
                      f"{float(e.activation[i]):.6g}", "yes" if i == e.peak else ""]
                     for i, (token, special) in enumerate(zip(e.tokens, e.special, strict=True)) if not special]
        return rows

    @property
    def handle(self) -> Any:
        """The model shown, while it is loaded (None once it is unloaded, or before one is shown)."""
        return self._handle() if self._handle is not None else None

    def show_neuron(self, handle: Any, layer: int, neuron: int) -> None:
        """Neuron ``neuron`` of layer ``layer``'s MLP (both from 0) of ``handle``: the window shown and raised."""
        self._handle = weakref.ref(handle)
        self.model.setText(handle.name)
        self.layer.setMaximum(max(1, layer + 1, int(handle.info.get("layers") or 0)))
        self.layer.setValue(layer + 1)
        self.neuron.setMaximum(max(neuron, self.neuron.maximum(), 1 << 20))
        self.neuron.setValue(neuron)
        self.show()
        self.raise_()
        self._ask(layer, neuron)

    def _find(self) -> None:
        if self._gone():
            return
        self.by_word.ask(self.handle, self.layer.value() - 1)

    def _gone(self) -> bool:
        """Whether the model shown was unloaded since (then the window says so)."""
        if self._handle is None or self.handle is not None:
            return False
        self.summary.setText(f"{self.model.text()} was unloaded: load it again, then open its neurons.")
        return True

    def _chosen(self, neuron: int) -> None:
        self.neuron.setValue(neuron)
        if not self._gone():
            self._ask(self.by_word.result.layer, neuron)

    def _ask_boxes(self) -> None:
        if not self._gone() and self.handle is not None:
            self._ask(self.layer.value() - 1, self.neuron.value())

    def _ask(self, layer: int, neuron: int) -> None:
        asked = (self.handle.name, layer, neuron)
        if asked == self.asked and (self.result is not None or self.busy.isVisible()):
            return
        self.asked, self.result = asked, None
        handle = self.handle
        self.summary.setText(f"reading what makes {handle.name}'s layer {layer + 1} MLP neuron {neuron} fire…")
        self.writes.setText("")
        self.sentences.clear()
        self.progress.setValue(0)
        self.busy.setVisible(True)

        def work(progress: Any, stop: Any) -> Any:
            return handle.neuron_examples(layer, neuron, EXAMPLES, "default", progress)

        self.job = superseding_job(self.job, work, self, asked, self._progress, self._answered, self._failed)

    def _progress(self, asked: tuple[str, int, int], fraction: float, message: str) -> None:
        if asked == self.asked:
            self.progress.setValue(int(1000 * fraction))
            self.summary.setText(message)

    def _cancel(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()
        self.asked = None
        self.busy.setVisible(False)
        self.summary.setText("Cancelled: Show to ask again.")

    def _failed(self, asked: tuple[str, int, int], message: str) -> None:
        if asked != self.asked:
            return
        self.busy.setVisible(False)
        self.summary.setText(message)

    def _answered(self, asked: tuple[str, int, int], result: Any) -> None:
        if asked != self.asked:
            return  # asked again since
        self.result = result
        self.busy.setVisible(False)
        self.neuron.setMaximum(result.neurons - 1)
        self.summary.setText(summary_text(asked[0], result))
        self.writes.setText(writes_text(result))
        rows = "".join(sentence_html(e, result.highest) for e in result.examples)
        self.sentences.setHtml(f"<table cellspacing='4'>{rows}</table>")
