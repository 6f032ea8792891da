"""The head atlas: one row per attention head (layer, head) with what it attends to — entropy and the
share of attention to [CLS], [SEP], punctuation, the previous / next token, itself, and from a repeated token to
its earlier copy and to what followed it (induction) — sortable, the most extreme head of each column highlighted;
a double click chooses that head."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from explorer.widgets.export import add_csv_export, table_rows
from explorer.widgets.readable import highlight
from explorer.widgets.table_fill import fresh_rows

BEST = "#fff3b0"  # behind the most extreme head of each column

ATLAS_COLUMNS = ["layer", "head", "entropy", "→ [CLS]", "→ [SEP]", "→ punct.", "→ previous", "→ next", "→ itself",
                 "→ earlier copy", "induction"]  # (short: eleven columns in the panel's width)
TIPS = {"entropy": "the entropy of each token's attention, in bits (low: the head looks at one token)",
        "→ punct.": "the share of each token's attention on punctuation",
        "→ earlier copy": "from a token the text has had before: the share of its attention on those earlier copies "
                          "(duplicate-token heads); – where no token repeats",
        "induction": "from a token the text has had before: the share of its attention on the token that followed "
                     "each earlier copy (induction heads, Olsson et al. 2022: type a text twice to find them); – "
                     "where no token repeats"}


class _Number(QTableWidgetItem):
    """A table cell that sorts by its number."""

    def __init__(self, value: float, digits: int = 3) -> None:
        text = ("–" if math.isnan(value) else f"{value:.{digits}f}") if isinstance(value, float) else str(value)
        super().__init__(text)
        self.value = -math.inf if isinstance(value, float) and math.isnan(value) else value  # (sorted last)
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return self.value < getattr(other, "value", 0)


class HeadAtlas(QTableWidget):
    head_chosen = Signal(int, int)  # layer, head (a double click on its row)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(ATLAS_COLUMNS), parent)
        self.setHorizontalHeaderLabels(ATLAS_COLUMNS)
        for column, name in enumerate(ATLAS_COLUMNS):
            if name in TIPS:
                header = self.horizontalHeaderItem(column)
                if header is not None:
                    header.setToolTip(TIPS[name])
        self.verticalHeader().setVisible(False)
        # every column as wide as its heading and its numbers, empty or filled, at any zoom (a fixed width cut
        # "entropy (bits)" to "ropy (b" at a talk's zoom); the table scrolls sideways inside itself if it must
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.cellDoubleClicked.connect(self._clicked)
        add_csv_export(self, lambda: table_rows(self), "head-atlas")

    def fill(self, stats: list[Any]) -> None:
        """One row per head of ``stats`` (engine.api.head_table / corpus_head_table)."""
        self.setSortingEnabled(False)
        fresh_rows(self, len(stats))  # not its old rows' cells replaced: see table_fill
        best = {}
        for column in range(2, len(ATLAS_COLUMNS)):
            values = [v for v in (stat(h, column) for h in stats) if not math.isnan(v)]
            best[column] = (max(values) if column > 2 else min(values)) if values else math.nan
        for r, h in enumerate(stats):
            self.setItem(r, 0, _Number(h.layer + 1))  # counted as the app counts layers (block_spin)
            self.setItem(r, 1, _Number(h.head))
            for column in range(2, len(ATLAS_COLUMNS)):
                value = stat(h, column)
                item = _Number(value)
                if value == best[column]:
                    highlight(item, BEST)  # the most extreme head of each column, in either theme
                self.setItem(r, column, item)
        self.setSortingEnabled(True)

    def _clicked(self, row: int, _column: int) -> None:
        layer, head = self.item(row, 0), self.item(row, 1)
        if isinstance(layer, _Number) and isinstance(head, _Number):
            self.head_chosen.emit(int(layer.value) - 1, int(head.value))


def stat(h: Any, column: int) -> float:
    from engine.api import STATISTICS

    return float(getattr(h, STATISTICS[column - 2]))
