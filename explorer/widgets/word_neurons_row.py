"""The neuron window's search by word (engine.api.word_neurons): type a word, and the layer's MLP neurons most
selective for it in the corpus come as a row of cells (selectivity: their output at the word against the same
sentences' other tokens, in units of its spread there); click one to see what makes it fire. Asked in a background
job (the first word of a corpus builds its word index: progress in the note); a newer word replaces one on its way."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from explorer.tasks import BackgroundJob, superseding_job
from explorer.widgets.export import add_csv_export
from explorer.widgets.lens_grid import LayerTokenTable, fit_one_row


def word_text(name: str, result: Any) -> str:
    return (f"{name}'s layer {result.layer + 1} MLP neurons most selective for '{result.word}', over its {result.tokens:,} "
            f"tokens in {result.sentences:,} sentences of the {result.corpus} corpus: each cell its output there "
            "less its mean at the sentences' other tokens, in units of its spread there. Click one to see what "
            "makes it fire.")


class WordNeuronsRow(QWidget):
    """``ask(handle, layer, word)``; ``neuron_chosen(neuron)`` when a cell is clicked."""

    neuron_chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self.asked: tuple[str, int, str] | None = None
        self.job: BackgroundJob | None = None
        self.word = QLineEdit()
        self.word.setPlaceholderText("a word (bank, play, my), then Enter")
        self.find_button = QPushButton("Find neurons")
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.table = LayerTokenTable()
        self.table.setVisible(False)
        self.table.cell_clicked.connect(self._clicked)
        add_csv_export(self.table, self.table.export_rows, "word-neurons", png=True)
        row = QHBoxLayout()
        row.addWidget(QLabel("the neurons for a word"))
        row.addWidget(self.word, 1)
        row.addWidget(self.find_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addWidget(self.table)

    def ask(self, handle: Any, layer: int) -> None:
        """The typed word's most selective neurons of ``handle``'s layer ``layer`` (from 0)."""
        word = self.word.text().strip()
        if not word or handle is None:
            return
        asked = (handle.name, layer, word)
        if asked == self.asked and (self.result is not None or (self.job is not None and self.job.running)):
            return
        self.asked, self.result = asked, None
        self.table.setVisible(False)
        self.note.setText(f"finding {handle.name}'s layer {layer + 1} neurons for '{word}'…")

        def work(progress: Any, stop: Any) -> Any:
            from engine.api import word_neurons

            return word_neurons(handle, layer, word, progress=progress)

        self.job = superseding_job(self.job, work, self, asked, self._progress, self._answered, self._failed)

    def _progress(self, asked: tuple[str, int, str], fraction: float, message: str) -> None:
        if asked == self.asked:
            self.note.setText(f"{message} ({fraction:.0%})")

    def _failed(self, asked: tuple[str, int, str], message: str) -> None:
        if asked == self.asked:
            self.note.setText(message)

    def _answered(self, asked: tuple[str, int, str], result: Any) -> None:
        if asked != self.asked:
            return
        self.result = result
        values = np.asarray(result.selectivity, np.float64)[None, :]
        tips = [[f"neuron {n}: mean {a:+.3f} at '{result.word}', {e:+.3f} elsewhere; above 0 at {f:.0%} of "
                 f"'{result.word}'" for n, a, e, f in zip(result.neurons, result.at_word, result.elsewhere,
                                                          result.fires, strict=True)]]
        self.table.show_cells([[f"{v:+.1f}" for v in values[0]]], values / (float(np.abs(values).max()) or 1.0),
                              tuple(f"#{n}" for n in result.neurons), tips, signed=True,
                              labels=[f"layer {result.layer + 1}"])
        self.table.values = values
        self.table.setVisible(True)
        fit_one_row(self.table)
        self.note.setText(word_text(asked[0], result))

    def _clicked(self, _row: int, column: int) -> None:
        if self.result is not None and 0 <= column < len(self.result.neurons):
            self.neuron_chosen.emit(int(self.result.neurons[column]))
