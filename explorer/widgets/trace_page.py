"""The lab's second page: why the prediction happens (causal tracing, Meng et al. 2022): the subject's words
noised, each layer × token state of the clean run restored in turn, the heatmap of the probability that comes
back; or a contrast sentence run instead and the text's states put back one at a time (activation patching).
The lab (explorer/widgets/lens_lab.py) asks and decides what an answer is still worth."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export
from explorer.widgets.lens_grid import LayerTokenTable, layer_label, value_text

CONTRAST_TIP = ("Activation patching: the contrast sentence (as many tokens as the text, the [MASK] in the same place) "
                "is run instead of noise, and one state of the text's own run is put in its place at a time — which "
                "layer and token carry what makes the text's prediction? The subject is then where the two differ.")
ABOUT = ("noise the subject's words, then restore one state at a time: which layer and token carry the prediction? "
         "(Meng et al. 2022) Or run a contrast sentence and put the text's states back one at a time (activation "
         "patching).")


def trace_text(name: str, trace: Any) -> str:
    """What a trace's heatmap shows, under it: the prediction, how much the corruption cost, what a cell is."""
    head = f"{name} predicts '{trace.target.strip()}' at '{trace.tokens[trace.position].strip()}' with P = {trace.p_clean:.1%}"
    if trace.contrast:
        weak = ("" if trace.informative else " The contrast sentence predicts it almost as well: this shows little; "
                "change the words that should matter.")
        return (f"{head}; run as '{trace.contrast}' (the tokens that differ: *), {trace.p_corrupt:.1%}. Each cell: P "
                f"after putting the text's state at that layer and token in the contrast run's place: yellow where "
                f"it brings the prediction back.{weak}")
    lost = ("" if trace.informative else " The noise hardly changed the prediction: this trace shows little; try "
            "other subject words.")
    return (f"{head}; with the subject (*) noised, {trace.p_corrupt:.1%}. Each cell: P after restoring that layer's "
            f"state at that token (mean of {trace.samples} noise draws): yellow where it brings the prediction "
            f"back.{lost}")


class TracePage(QWidget):
    asked = Signal()  # the Trace button, or Return in a field: the lab asks with its model and text
    answered = Signal(object)  # (model name, text, CausalTrace) of a trace asked with ``ask``
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.traced = ""  # the model of the trace asked last
        self.subject = QLineEdit()
        self.subject.setPlaceholderText("the subject's words, e.g. France")
        self.contrast = QLineEdit()
        self.contrast.setPlaceholderText("or a contrast sentence of as many tokens (Paris for Tokyo): no noise")
        self.contrast.setToolTip(CONTRAST_TIP)
        self.button = QPushButton("Trace")
        self.note = QLabel(ABOUT)
        self.note.setWordWrap(True)
        self.map = LayerTokenTable()
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        row.addWidget(QLabel("subject"))
        row.addWidget(self.subject, 1)
        row.addWidget(QLabel("contrast"))
        row.addWidget(self.contrast, 2)
        row.addWidget(self.button)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addWidget(self.map, 1)
        add_csv_export(self.map, self.map.export_rows, "causal-trace", png=True)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self.answered.emit)
        self.runner.failed.connect(self._failed)
        for signal in (self.button.clicked, self.subject.returnPressed, self.contrast.returnPressed):
            signal.connect(self.asked.emit)
        # with a contrast sentence the tokens that differ are the subject
        self.contrast.textChanged.connect(lambda text: self.subject.setEnabled(not text.strip()))

    def ask(self, handle: Any, text: str) -> None:
        """Trace ``handle``'s prediction on ``text`` with the page's subject or contrast sentence."""
        subject, contrast = self.subject.text(), self.contrast.text().strip()
        self.traced = handle.name
        self.note.setText(f"tracing {handle.name}: {text!r}, " + (f"run as {contrast!r}…" if contrast else
                                                                 f"the subject '{subject}' noised…"))
        self.runner.submit(lambda: (handle.name, text, handle.causal_trace(text, subject, 3,
                                                                           contrast=contrast or None)))

    def _failed(self, message: str) -> None:
        self.note.setText(message)
        self.failed.emit(message)

    def draw(self, name: str, trace: Any) -> None:
        """The heatmap of ``trace``: coloured from the noised run's probability (dark) to the clean run's (yellow);
        a trace whose noise cost nothing is drawn on 0..1, all dark, rather than stretching a rounding error over
        the colours."""
        n = len(trace.tokens)
        layers = trace.restored.shape[0]
        texts = [[value_text(float(trace.restored[layer, t]), "probability") for t in range(n)] for layer in range(layers)]
        tips = [[f"{layer_label(layer, layers - 1)}, token '{trace.tokens[t].strip()}' restored: "
                 f"P({trace.target.strip()}) = {trace.restored[layer, t]:.1%}" for t in range(n)] for layer in range(layers)]
        tokens = tuple(f"{tok}*" if i in trace.subject else tok for i, tok in enumerate(trace.tokens))
        top = max(trace.p_clean, float(trace.restored.max()))
        scale = (trace.p_corrupt, top) if trace.informative else (0.0, 1.0)
        self.map.show_cells(texts, trace.restored, tokens, tips, value_range=scale)
        self.note.setText(trace_text(name, trace))
