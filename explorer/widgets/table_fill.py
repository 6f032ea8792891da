"""Giving a table new rows to fill: the old rows dropped first.

A ``QTableWidget`` whose header sizes its sections to their contents (``ResizeToContents``) measures a whole
column again each time a cell of a row it has laid out changes, so filling the cells of rows it already had takes
time in the square of the rows: refilling the head atlas's 72 rows of 9 columns (a 6-layer, 12-head model) took
about a second on the window's thread, where the same cells put into rows just added take about 15 ms
(bench/speed/table_refill.py)."""

from __future__ import annotations

from PySide6.QtWidgets import QTableWidget


def fresh_rows(table: QTableWidget, rows: int, columns: int | None = None) -> None:
    """Empty ``table`` and give it ``rows`` new rows (and ``columns`` new columns), for its cells to be set."""
    table.setRowCount(0)
    if columns is not None:
        table.setColumnCount(0)
        table.setColumnCount(columns)
    table.setRowCount(rows)
