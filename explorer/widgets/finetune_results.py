"""What a fine-tuning run shows besides its curves: the probe sentences' predictions as training goes,
the evaluation of the best checkpoint (confusion matrix or per-tag F1), the ablation table, and
"Try it" on the finished model. Each takes plain data; none reaches into the panel."""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.shortened import shortened
from explorer.widgets.export import add_csv_export, cell_text, table_rows
from explorer.widgets.heatmap import Heatmap
from explorer.widgets.readable import highlight


def _table(headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.horizontalHeader().setStretchLastSection(True)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    return table


def _item(text: str, colour: str | None = None) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    if colour:
        highlight(item, colour)
    return item


class ProbeTable(QWidget):
    """One row per probe sentence (its text stays in view as the row header); a column per step at which
    it was predicted, newest last. A prediction that differs from the one before it is highlighted: a
    label flipping during training."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = _table([])
        self.table.verticalHeader().setVisible(True)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.note = QLabel("Type probe sentences in the form (one per line): every validation, the model being "
                           "trained says what it thinks of each.")
        self.note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        add_csv_export(self.table, lambda: table_rows(self.table), "probes.csv")
        self.texts: list[str] = []
        self.last: dict[str, str] = {}

    def reset(self, texts: list[str], run: str) -> None:
        self.texts = list(texts)
        self.table.setColumnCount(0)
        self.table.setRowCount(len(texts))
        self.table.setVerticalHeaderLabels([shortened(t, 48) for t in texts])
        for row, text in enumerate(texts):
            self.table.verticalHeaderItem(row).setToolTip(text)
        self.last = {}
        self.note.setText(f"{run}: the prediction for each probe at each validation step (changes highlighted)")

    def add(self, step: int, texts: list[str], labels: list[str], probabilities: list[float], run: str = "") -> None:
        """One column of predictions; ``run`` labels it when several runs share the table (an ablation)."""
        if self.texts != list(texts):
            self.reset(texts, "")
        column = self.table.columnCount()
        self.table.insertColumn(column)
        self.table.setHorizontalHeaderItem(column, QTableWidgetItem(f"{run} step {step}".strip()))
        for row, (text, label, p) in enumerate(zip(texts, labels, probabilities, strict=True)):
            key = f"{run}\n{text}"
            changed = key in self.last and self.last[key] != label
            self.table.setItem(row, column, _item(f"{label} ({p:.2f})", "#ffe8a8" if changed else None))
            self.last[key] = label
        self.table.resizeColumnsToContents()
        first = self.table.item(0, column)
        if first is not None:
            self.table.scrollToItem(first)

    def predictions(self) -> dict[str, str]:
        """sentence -> the latest prediction (of the latest run)."""
        return {key.split("\n", 1)[1]: label for key, label in self.last.items()}


class EvaluationView(QWidget):
    """The best checkpoint's evaluation: a confusion matrix (classification) or per-type F1 (tagging)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("The evaluation of the best checkpoint appears here when a run ends.")
        self.title.setWordWrap(True)
        self.heatmap = Heatmap()
        self.heatmap.plot.setLabel("left", "true label")
        self.heatmap.plot.setLabel("bottom", "predicted")
        self.table = _table(["entity type", "F1", "support"])
        add_csv_export(self.table, lambda: table_rows(self.table), "per-type-f1.csv")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.heatmap, 1)
        layout.addWidget(self.table, 1)
        self.heatmap.hide()
        self.table.hide()
        self.report: dict[str, Any] = {}

    def show_report(self, run: str, report: dict[str, Any]) -> None:
        self.report = report
        metrics = report.get("metrics", {})
        from engine import api

        summary = api.metrics_text(metrics)
        self.title.setText(f"{run}, best checkpoint (step {report.get('step', '?')}): {summary}")
        if "confusion_matrix" in report:
            labels = tuple(report["labels"])
            matrix = np.asarray(report["confusion_matrix"], np.float32)
            self.heatmap.show_matrix(matrix, labels, labels, "confusion matrix (rows: true, columns: predicted)")
            self._write_counts(matrix)
            self.heatmap.show()
            self.table.hide()
        elif "per_type_f1" in report:
            f1, support = report["per_type_f1"], report.get("per_type_support", {})
            self.table.setRowCount(len(f1))
            for row, (kind, value) in enumerate(sorted(f1.items(), key=lambda kv: -kv[1])):
                self.table.setItem(row, 0, _item(kind))
                self.table.setItem(row, 1, _item(f"{value:.3f}"))
                self.table.setItem(row, 2, _item(str(support.get(kind, ""))))
            self.table.show()
            self.heatmap.hide()


    def _write_counts(self, matrix: np.ndarray) -> None:
        """The count in each cell (small matrices only), dark on light cells and light on dark ones."""
        import pyqtgraph as pg

        for item in getattr(self, "_counts", []):
            self.heatmap.plot.removeItem(item)
        self._counts = []
        if matrix.shape[0] > 15:
            return
        top = max(float(matrix.max()), 1.0)
        for (row, col), value in np.ndenumerate(matrix):
            text = pg.TextItem(f"{int(value)}", color="k" if value > 0.6 * top else "w", anchor=(0.5, 0.5))
            text.setPos(col + 0.5, row + 0.5)
            self.heatmap.plot.addItem(text)
            self._counts.append(text)


class AblationTable(QWidget):
    """The best validation metric of each strategy on the same split: what pre-training buys."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Ablation: press “Ablation” to run pretrained-full, pretrained-frozen and from-scratch "
                            "back to back on the same split.")
        self.title.setWordWrap(True)
        self.table = _table(["run", "strategy", "best validation", "at step", "status"])
        add_csv_export(self.table, lambda: table_rows(self.table), "ablation.csv")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.table, 1)
        self.rows: dict[str, int] = {}

    def start(self, task: str, runs: list[tuple[str, str]]) -> None:
        self.title.setText(f"Ablation on {task}: the best validation metric (accuracy, entity F1 or span F1) of "
                           "each strategy, on the same split")
        self.table.setRowCount(len(runs))
        self.rows = {}
        for row, (run, strategy) in enumerate(runs):
            self.rows[run] = row
            for col, text in enumerate((run, strategy, "", "", "queued")):
                self.table.setItem(row, col, _item(text))

    def update_run(self, run: str, best: float | None, step: int | None, status: str) -> None:
        if run not in self.rows:
            return
        row = self.rows[run]
        if best is not None:
            self.table.setItem(row, 2, _item(f"{best:.3f}"))
        if step is not None:
            self.table.setItem(row, 3, _item(str(step)))
        self.table.setItem(row, 4, _item(status))
        values = [(r, float(cell_text(self.table, r, 2))) for r in range(self.table.rowCount())
                  if cell_text(self.table, r, 2)]
        if values:
            top = max(v for _, v in values)
            for r, v in values:
                cell = self.table.item(r, 2)
                if cell is not None:
                    highlight(cell, "#c8f0c8" if v == top else None)  # (not white: the dark theme's cells)

    def values(self) -> dict[str, str]:
        return {cell_text(self.table, r, 1): cell_text(self.table, r, 2) for r in range(self.table.rowCount())}


IDLE = "When a run ends, its best checkpoint answers here (so does a fine-tuned model opened from the library)."


class TryIt(QWidget):
    """Type a sentence, see the fine-tuned model's prediction (the panel runs it in a worker)."""

    asked = Signal(str)
    run_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run = QComboBox()
        self.run.setToolTip("the finished run that answers (after an ablation: the best one), or a fine-tuned model "
                            "opened from the library")
        self.run.currentTextChanged.connect(self._chosen)
        self.input = QLineEdit(placeholderText="Type a sentence for the fine-tuned model (pairs: A ||| B)")
        self.button = QPushButton("Predict")
        self.button.setEnabled(False)
        self.result = QLabel(IDLE)
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.scores = _table(["label", "probability"])
        row = QHBoxLayout()
        row.addWidget(QLabel("Model:"))
        row.addWidget(self.run)
        row.addWidget(self.input, 1)
        row.addWidget(self.button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.result)
        layout.addWidget(self.scores, 1)
        self.button.clicked.connect(lambda: self.asked.emit(self.input.text()))
        self.input.returnPressed.connect(lambda: self.asked.emit(self.input.text()))

    def _chosen(self, name: str) -> None:
        if name:
            self.run_chosen.emit(name)

    def add_run(self, name: str, choose: str) -> None:
        """List a finished run; choose ``choose`` (emits ``run_chosen`` when the choice changes)."""
        if self.run.findText(name) < 0:
            self.run.blockSignals(True)
            self.run.addItem(name)
            self.run.blockSignals(False)
        if self.run.currentText() == choose:
            self.run_chosen.emit(choose)
        else:
            self.run.setCurrentText(choose)

    def set_loaded(self, names: list[str]) -> None:
        """List the loaded fine-tuned models (after the runs that finished here) and only them: one unloaded goes."""
        loaded = set(names)
        self.run.blockSignals(True)
        for i in reversed(range(self.run.count())):
            if self.run.itemData(i) == "loaded" and self.run.itemText(i) not in loaded:
                self.run.removeItem(i)
        for name in names:
            if self.run.findText(name) < 0:
                self.run.addItem(name, "loaded")
        self.run.blockSignals(False)

    def set_idle(self) -> None:
        self.button.setEnabled(False)
        self.result.setText(IDLE)

    def set_ready(self, run: str) -> None:
        self.button.setEnabled(True)
        self.result.setText(f"{run} is ready: type a sentence and press Enter.")

    def show_result(self, result: Any) -> None:
        kind = type(result).__name__  # (the user's words and the model's labels shown as text, never as markup)
        notice = f" \u2014 {escape(result.notice)}" if result.notice else ""
        if kind == "Classification":
            self.result.setText(f"<b>{escape(result.label)}</b> ({result.probs[0]:.1%}){notice}")
            self.scores.setRowCount(len(result.labels))
            for row, (label, p) in enumerate(zip(result.labels, result.probs, strict=True)):
                self.scores.setItem(row, 0, _item(label))
                self.scores.setItem(row, 1, _item(f"{p:.3f}"))
        elif kind == "Tagging":
            words = " ".join(escape(w) if t == "O" else f"<b>{escape(w)}</b><sub>{escape(t)}</sub>"
                             for w, t in zip(result.words, result.tags, strict=True))
            found = "; ".join(f"{escape(k)}: {escape(w)}" for k, w in result.entities) or "no entities"
            self.result.setText(f"{words}<br>{found}{notice}")
            self.scores.setRowCount(0)
        else:
            self.result.setText(f"answer: <b>{escape(result.text)}</b>{notice}")

    def show_error(self, message: str) -> None:
        self.result.setText(message)
