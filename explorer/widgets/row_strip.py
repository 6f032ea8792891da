"""What the heads page's strips under its table share (explorer/widgets/head_positions.py: a head token by token;
explorer/widgets/neuron_strip.py: an MLP neuron by neuron): a note over one row of signed cells, asked of a worker, a
newer question superseding, the cells' values exported."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.failures import Outcome, attempt
from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export
from explorer.widgets.lens_grid import LayerTokenTable, fit_one_row


class RowStrip(QWidget):
    """``ask`` a question (its key and the call that answers it); ``show_answer`` fills the row from the answer."""

    shown = Signal()

    def __init__(self, note: str, tip: str, export: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self.asked: tuple[Any, ...] | None = None  # the question on screen or on its way (its model's name first)
        self.note = QLabel(note)
        self.note.setWordWrap(True)
        self.table = LayerTokenTable()
        self.table.setToolTip(tip)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table)
        add_csv_export(self.table, self.table.export_rows, export, png=True)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._answered)
        self.runner.failed.connect(self._failed)

    def ask(self, asked: tuple[Any, ...], waiting: str, call: Callable[[], Any]) -> None:
        """Ask ``call`` (in a worker) unless ``asked`` is the question on screen; ``waiting`` is said meanwhile."""
        if asked == self.asked and self.result is not None:
            return
        self.asked = asked
        self.note.setText(waiting)
        work = functools.partial(attempt, call)
        self.runner.submit(lambda: (asked, work()))

    def clear(self) -> None:
        self.asked = self.result = None
        self.table.setRowCount(0)
        self.note.setText("")

    def _failed(self, message: str) -> None:
        self.result = None
        self.table.setRowCount(0)
        self.note.setText(message)

    def _answered(self, answer: tuple[tuple[Any, ...], Outcome[Any]]) -> None:
        asked, outcome = answer
        if asked != self.asked:
            return  # asked again since: that answer follows
        if outcome.failed:
            self._failed(outcome.message)
            return
        self.result = outcome.value
        self.show_answer(asked, outcome.value)
        self.shown.emit()

    def show_answer(self, asked: tuple[Any, ...], result: Any) -> None:
        raise NotImplementedError

    def fill(self, values: np.ndarray, columns: tuple[str, ...], tips: list[str], label: str) -> None:
        """The row: ``values`` (n,) as signed cells under ``columns``, coloured on their own largest size."""
        row = np.asarray(values, np.float64)[None, :]
        span = float(np.abs(row).max()) or 1.0
        self.table.show_cells([[f"{v:+.2f}" for v in row[0]]], row / span, columns, [tips], signed=True,
                              labels=[label])
        self.table.values = row  # the export gives the values, not the colours' scale
        fit_one_row(self.table)
