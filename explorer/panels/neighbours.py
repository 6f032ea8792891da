"""Static neighbours: type a word, see its nearest words in each loaded static model, with bars."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export, table_rows
from explorer.widgets.model_picker import ModelPicker

DEBOUNCE_MS = 150


class NeighboursPanel(QWidget):
    shown = Signal()  # neighbours are on screen (talk decks and screenshots wait for it)

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.wanted_model = ""
        self.word = QLineEdit(placeholderText="type a word, e.g. bank")
        from engine.api import Capability

        self.model = ModelPicker(Capability.STATIC)
        self.k = 15
        self.message = QLabel("Load a model with static vectors to see neighbours.")
        self.message.setWordWrap(True)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["neighbour", "similarity", ""])
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        add_csv_export(self.table, lambda: table_rows(self.table), "neighbours")
        top = QHBoxLayout()
        top.addWidget(QLabel("Word:"))
        top.addWidget(self.word, 2)
        top.addWidget(QLabel("Model:"))
        top.addWidget(self.model, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.message)
        layout.addWidget(self.table, 1)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._fail)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.query)
        self.word.textChanged.connect(lambda _: self._debounce.start())
        self.model.currentIndexChanged.connect(lambda _: self.query())
        session.modelsChanged.connect(self._refresh_models)
        self._refresh_models()

    def _refresh_models(self) -> None:
        self.model.set_models(self.session.models, prefer=self.wanted_model)
        self.query()

    def apply_scene(self, scene: dict[str, Any]) -> None:
        self.wanted_model = str(scene.get("contextual_model") or "")
        self.word.setText(str(scene.get("selection") or ""))
        self._refresh_models()

    def current_scene(self) -> dict[str, Any]:
        return {"panel": "neighbours", "sentences": [], "selection": self.word.text().strip(),
                "models": list(self.session.models), "contextual_model": self.model.currentText(),
                "layer": None, "view": "neighbours"}

    def query(self) -> None:
        word, name = self.word.text().strip(), self.model.currentText()
        handle = self.session.models.get(name)
        self.word.setEnabled(handle is not None)
        if handle is None:
            reason = self.model.reason()
            self.message.setText(reason[:1].upper() + reason[1:] + ". Load GloVe, word2vec or a vectors file.")
            self.table.setRowCount(0)
            return
        if not word:
            self.message.setText(f"Type a word to see its neighbours in {name}.")
            self.table.setRowCount(0)
            return
        self.message.setText(f"searching {name}…")
        k = self.k
        self.runner.submit(lambda: (word, name, handle.static_neighbours(word, k)))

    def _show(self, result) -> None:
        word, name, neighbours = result
        self.message.setText(f"Nearest words to “{word}” in {name} (cosine similarity)")
        self.table.setRowCount(len(neighbours))
        for row, n in enumerate(neighbours):
            self.table.setItem(row, 0, QTableWidgetItem(n.word))
            sim = QTableWidgetItem(f"{n.similarity:.3f}")
            sim.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, 1, sim)
            bar = QProgressBar(maximum=1000, value=int(max(0.0, n.similarity) * 1000), textVisible=False)
            self.table.setCellWidget(row, 2, bar)
        self.shown.emit()

    def _fail(self, message: str) -> None:
        self.table.setRowCount(0)
        self.message.setText(message)
