"""Layer similarity: model against model, layer by layer. Two contextual models (or a run's checkpoint and the
model it became, or one model against itself) read the same held-out sentences; every layer of A is set against
every layer of B by linear CKA over the words (engine.api.layer_similarity), a table coloured 0 to 1 with each row's
closest layer of B in bold."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.scenes import Scene
from explorer.session import Session
from explorer.tasks import BackgroundJob
from explorer.widgets.export import add_csv_export
from explorer.widgets.lens_grid import LayerTokenTable
from explorer.widgets.model_picker import ModelPicker
from explorer.widgets.progress_bar import ProgressBar

DEBOUNCE_MS = 400
WHAT = ("Linear CKA (Kornblith et al. 2019) of every layer of A with every layer of B, over the words of the same "
        "held-out sentences of the default corpus: 1 when the two layers arrange the words alike (up to a rotation "
        "and a scale, whatever their widths), near 0 when they have nothing in common. In bold: the layer of B "
        "closest to each layer of A (a model against itself: the closest other layer).")


def layer_names(layers: int) -> list[str]:
    """Row or column names, the input layer first: "input", "layer 1", …"""
    return ["input", *(f"layer {i}" for i in range(1, layers))]


def reading(result: Any) -> str:
    """What the table says, in a sentence or two."""
    a, b, cka = result.model_a, result.model_b, result.cka
    over = (("Debiased CKA over " if result.debiased else "Over ") + f"{result.words:,} words of {result.sentences} "
            "held-out sentences"
            + (f" ({result.skipped} left out: the two models split them into different words)" if result.skipped else ""))
    if a == b:
        steps = [cka[i, i + 1] for i in range(len(cka) - 1)]
        names = layer_names(len(cka))
        most = int(np.nanargmin(steps)) if steps else 0
        return (f"{over}: {a}'s layers against one another (the diagonal is 1). Each layer against the one below it: "
                + ", ".join(f"{v:.2f}" for v in steps)
                + (f" — {names[most + 1]} changes the words' arrangement most." if steps else "."))
    if cka.shape[0] == cka.shape[1]:
        diagonal = np.diag(cka)
        least = int(np.nanargmin(diagonal))
        return (f"{over}: layer by layer (the same depth in both), "
                + ", ".join(f"{v:.2f}" for v in diagonal)
                + (" — as alike at every depth." if np.nanmax(diagonal) - np.nanmin(diagonal) < 0.02
                   else f" — least alike at {layer_names(len(diagonal))[least]}."))
    best = result.best_match()
    names = layer_names(cka.shape[1])
    return (f"{over}: {a}'s layers are closest to {b}'s "
            + ", ".join(f"{names[j]} ({cka[i, j]:.2f})" for i, j in enumerate(best)) + ", from the input up.")


def who(handle: Any) -> str:
    """A model as the table names it: the Run history's scrubber model with the checkpoint it holds now."""
    name = str(handle.name)
    if not name.endswith("(scrubber)") or not getattr(handle, "path", None):
        return name
    step = re.search(r"(?:step|checkpoint)-0*(\d+)$", str(handle.path).rstrip("/\\"))
    return f"{name} at step {int(step.group(1)):,}" if step else f"{name} at {Path(str(handle.path)).name}"


def closest(result: Any) -> np.ndarray:
    """For each layer of A, B's closest layer; against itself, the closest other layer (its own is 1)."""
    if result.model_a != result.model_b or len(result.cka) < 2:
        return result.best_match()
    cka = result.cka.copy()
    np.fill_diagonal(cka, -np.inf)
    return cka.argmax(axis=1)


class LayersPanel(QWidget):
    shown = Signal()  # a table is on screen
    failed = Signal(str)

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from engine.api import Capability

        self.session = session
        self.model_a = ModelPicker(Capability.CONTEXTUAL, role="contextual")
        self.model_b = ModelPicker(Capability.CONTEXTUAL, role="contextual")
        self.count = QSpinBox(minimum=20, maximum=2000, value=200, singleStep=50)
        self.count.setSuffix(" held-out sentences")
        self.count.setToolTip("how many sentences of the default corpus's held-out part both models read (spread over "
                              "it, the same ones for every pair): more words, a steadier figure, a longer wait")
        self.debiased = QCheckBox("debiased")
        self.debiased.setToolTip("the unbiased estimate of CKA (Song et al. 2012): plain linear CKA of two unrelated "
                                 "layers sits above 0 when the words are few beside the layers' widths; the debiased "
                                 "one stays near 0 (and can dip below it). Over 200 sentences the two differ by at "
                                 "most 0.03 on the shipped models (bench/quality/RESULTS.md)")
        self.stop = QPushButton("Stop")
        self.stop.setEnabled(False)
        self.stop.clicked.connect(self.cancel)
        self.progress = ProgressBar(maximum=1000, textVisible=True)
        self.progress.setFormat("")
        self.message = QLabel(WHAT)
        self.message.setWordWrap(True)
        self.axes = QLabel()
        self.axes.setWordWrap(True)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.table = LayerTokenTable()
        for header in (self.table.horizontalHeader(), self.table.verticalHeader()):  # the grid fills the panel
            header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        add_csv_export(self.table, self.table.export_rows, "layer-similarity", png=True)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Model A:"))
        pick.addWidget(self.model_a, 1)
        pick.addWidget(QLabel("against B:"))
        pick.addWidget(self.model_b, 1)
        run = QHBoxLayout()
        run.addWidget(self.count)
        run.addWidget(self.debiased)
        run.addWidget(self.progress, 1)
        run.addWidget(self.stop)
        layout = QVBoxLayout(self)
        layout.addLayout(pick)
        layout.addLayout(run)
        layout.addWidget(self.message)
        layout.addWidget(self.axes)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.summary)
        self.job: BackgroundJob | None = None
        self.wanted: tuple[str, str] = ("", "")  # a scene's A and B, chosen once they load
        self.always = False  # a scene's or a talk step's panel computes while hidden (a talk prepares its steps)
        self._asked: tuple[Any, ...] | None = None  # what the table on screen (or the job running) answers
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.query)
        self.debiased.toggled.connect(lambda _: self._debounce.start())
        self.model_a.currentIndexChanged.connect(lambda _: self._a_changed())
        self.model_b.currentIndexChanged.connect(lambda _: self._debounce.start())
        # a model picked by hand stays picked: the scene's choice no longer comes back as models load
        self.model_a.activated.connect(lambda _: setattr(self, "wanted", ("", self.wanted[1])))
        self.model_b.activated.connect(lambda _: setattr(self, "wanted", (self.wanted[0], "")))
        self.count.valueChanged.connect(lambda _: self._debounce.start())
        session.modelsChanged.connect(self._refresh_models)
        self._refresh_models()

    def _b_preferred(self) -> str:
        """B opens on the best contextual model other than A (a model against itself is a choice, not a default)."""
        if self.wanted[1]:
            return self.wanted[1]
        if self.model_b.user_chose:
            return ""
        a = self.model_a.currentText()
        others = [n for n in self.model_b.usable() if n != a]
        ranked = [n for n in self.model_b.role_models() if n in others]
        return (ranked or others or [""])[0]

    def _refresh_models(self) -> None:
        self.model_a.set_models(self.session.models, prefer=self.wanted[0])
        self.model_b.set_models(self.session.models)  # (first: B's usable models known)
        self.model_b.set_models(self.session.models, prefer=self._b_preferred())
        self.query()

    def _a_changed(self) -> None:
        prefer = self._b_preferred()
        if prefer and prefer != self.model_b.currentText() and self.model_b.currentText() == self.model_a.currentText():
            self.model_b.set_models(self.session.models, prefer=prefer)
        self._debounce.start()

    def apply_scene(self, scene: Scene) -> None:
        self.always = self.always or not self.isVisible()  # (the main window shows it; a talk prepares it hidden)
        self.wanted = (scene.contextual_model or "", scene.compare or "")
        if scene.count is not None:
            self.count.blockSignals(True)
            self.count.setValue(scene.count)
            self.count.blockSignals(False)
        self.debiased.blockSignals(True)
        self.debiased.setChecked(bool(scene.debiased))  # (not named: plain CKA, the panel's default)
        self.debiased.blockSignals(False)
        self._refresh_models()

    def current_scene(self) -> Scene:
        a, b = self.model_a.currentText(), self.model_b.currentText()
        return Scene("layers", [], [m for m in dict.fromkeys((a, b)) if m], contextual_model=a or None,
                     compare=b or None, count=self.count.value(), debiased=self.debiased.isChecked() or None)

    def set_presenting(self, on: bool) -> None:
        """A talk's step: the keys step the talk, not its pickers; no Stop button on the slide."""
        self.always = self.always or on
        for widget in (self.model_a, self.model_b, self.count, self.debiased):  # (enabled: a talk reads what its pickers can do)
            widget.setFocusPolicy(Qt.FocusPolicy.NoFocus if on else Qt.FocusPolicy.StrongFocus)
        self.stop.setVisible(not on)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.query()  # (while hidden nothing is computed: a pair costs seconds of every core but one)

    def _state(self) -> tuple[Any, ...]:
        return self.model_a.state(), self.model_b.state(), self.count.value(), self.debiased.isChecked()

    def query(self) -> None:
        self._debounce.stop()  # asked now: a query the typing scheduled would only ask the same again
        a, b = self.session.models.get(self.model_a.currentText()), self.session.models.get(self.model_b.currentText())
        if a is None or b is None:
            self.cancel()
            reason = self.model_a.reason() or self.model_b.reason()
            # said, not failed: models may still be loading (a talk or screenshot waits for them)
            self._clear((reason[:1].upper() + reason[1:] + ". " if reason else "")
                        + "Load two contextual models (ELMo, GPT, BERT, a Hugging Face folder) — or one, to see its "
                        "layers against one another.")
            self._asked = None
            return
        state = self._state()
        if state == self._asked or not (self.isVisible() or self.always):
            return
        self.cancel()
        self._asked = state
        n, debiased = self.count.value(), self.debiased.isChecked()

        def work(progress: Any, stop: Any) -> Any:
            from engine import api

            progress(0.0, "reading the held-out sentences")
            sentences = api.corpus_sample("default", n=n, part="heldout")
            return api.layer_similarity(a, b, sentences, debiased=debiased, progress=progress), who(a), who(b)

        job = BackgroundJob(work, self)
        job.progress.connect(lambda f, m: self._progress(job, f, m))
        job.finished.connect(lambda result: self._show(job, result))
        job.failed.connect(lambda m: self._failed(job, m))
        self.job = job
        self.stop.setEnabled(True)
        self.progress.setValue(0)
        self.progress.setFormat(f"{a.name} against {b.name}…")

    def cancel(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()
            self.progress.setFormat("stopped")
            self._asked = None  # asking again computes again
        self.job = None
        self.stop.setEnabled(False)

    def _progress(self, job: BackgroundJob, fraction: float, message: str) -> None:
        if job is self.job:
            self.progress.setValue(int(fraction * 1000))
            self.progress.setFormat(message)

    def _show(self, job: BackgroundJob, answer: Any) -> None:
        if job is not self.job:
            return
        result, name_a, name_b = answer
        self.job = None
        self.stop.setEnabled(False)
        self.progress.setValue(1000)
        self.progress.setFormat(f"{result.model_a} against {result.model_b}: {result.words:,} words")
        cka = result.cka
        rows, cols = layer_names(cka.shape[0]), layer_names(cka.shape[1])
        best = closest(result)
        texts = [[f"{v:.2f}" if np.isfinite(v) else "–" for v in row] for row in cka]
        tips = [[f"{result.model_a} {rows[i]} against {result.model_b} {cols[j]}: CKA {cka[i, j]:.3f}"
                 + (f" (the layer of {result.model_b} closest to it)" if j == best[i] else "")
                 for j in range(cka.shape[1])] for i in range(cka.shape[0])]
        self.table.show_cells(texts, cka, tuple(cols), tips, value_range=(0.0, 1.0), labels=rows)
        bold = QFont(self.table.font())
        bold.setBold(True)
        for i, j in enumerate(best):
            item = self.table.item(cka.shape[0] - 1 - i, int(j))
            if item is not None:
                item.setFont(bold)
        self.axes.setText(f"Rows: {name_a}'s layers, its top layer on top · columns: {name_b}'s layers, the input "
                          "at the left.")
        self.summary.setText(reading(result))
        self.shown.emit()

    def _failed(self, job: BackgroundJob, message: str) -> None:
        if job is self.job:
            self.job = None
            self.stop.setEnabled(False)
            self._asked = None
            self.progress.setFormat("")
            self._fail(message)

    def _fail(self, message: str) -> None:
        self._clear(message)
        self.failed.emit(message)

    def _clear(self, message: str) -> None:
        self.table.setRowCount(0)
        self.table.setColumnCount(0)
        self.axes.setText("")
        self.summary.setText(message)
