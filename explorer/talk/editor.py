"""The deck editor: the steps the speaker added from the main window ("Add this view to the deck"),
listed by title (double-click to retitle), moved up or down, deleted, saved as JSON or presented."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from explorer.failures import explain
from explorer.scenes import SceneError
from explorer.talk.deck import Deck


class DeckEditor(QDialog):
    present = Signal(object)  # the Deck, to show now

    def __init__(self, deck: Deck, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Talk deck")
        self.deck = deck  # shared with the main window: edits land there
        self.list = QListWidget()
        self.list.itemChanged.connect(self._retitled)
        self.message = QLabel()
        self.message.setWordWrap(True)
        buttons = QHBoxLayout()
        for text, slot in (("Up", lambda: self.move_step(-1)), ("Down", lambda: self.move_step(+1)), ("Delete", self.delete),
                           ("Open…", self.open_file), ("Save as…", self.save_file), ("Present", self._present)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Steps (double-click a title to edit it):"))
        layout.addWidget(self.list, 1)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.refresh()

    def refresh(self) -> None:
        self.list.blockSignals(True)
        row = self.list.currentRow()
        self.list.clear()
        for step in self.deck.steps:
            item = QListWidgetItem(step.title or "")
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
        self.list.setCurrentRow(min(max(row, 0), self.list.count() - 1))
        self.list.blockSignals(False)
        n = len(self.deck.steps)
        self.message.setText(f"{n} step{'s' if n != 1 else ''}" if n else
                             "No steps yet: open a view in the main window and choose Talk → Add this view to the deck.")

    def _retitled(self, item: QListWidgetItem) -> None:
        self.deck.steps[self.list.row(item)].title = item.text().strip()

    def move_step(self, delta: int) -> None:
        row, steps = self.list.currentRow(), self.deck.steps
        target = row + delta
        if row < 0 or not 0 <= target < len(steps):
            return
        steps[row], steps[target] = steps[target], steps[row]
        self.list.setCurrentRow(target)
        self.refresh()
        self.list.setCurrentRow(target)

    def delete(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.deck.steps):
            del self.deck.steps[row]
            self.refresh()

    def save_file(self, path: str = "") -> None:
        from explorer.talk.deck import save_deck

        path = path or QFileDialog.getSaveFileName(self, "Save the deck", "talk.json", "Decks (*.json)")[0]
        if not path:
            return
        try:
            save_deck(path, self.deck)
            self.message.setText(f"saved {path}")
        except (OSError, SceneError) as e:
            self.message.setText(f"could not save the deck: {e}")

    def open_file(self, path: str = "") -> None:
        from explorer.talk.deck import load_deck

        path = path or QFileDialog.getOpenFileName(self, "Open a deck", filter="Decks (*.json)")[0]
        if not path:
            return
        try:
            deck = load_deck(path)
        except SceneError as e:
            self.message.setText(explain(e))
            return
        self.deck.title, self.deck.steps = deck.title, deck.steps  # the main window's deck, in place
        self.refresh()

    def _present(self) -> None:
        if not self.deck.steps:
            self.message.setText("The deck has no steps to present yet.")
            return
        self.present.emit(self.deck)
