"""Context menus that export what a view shows: tables and result lists to CSV (plots already offer
PNG, SVG and CSV through pyqtgraph's own "Export..." entry)."""

from __future__ import annotations

import csv
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QTableWidget, QWidget


def cell_text(table: QTableWidget, row: int, column: int) -> str:
    """A cell's text on one line (a cell drawn on two lines: its lines joined by a space); "" for no item."""
    item = table.item(row, column)
    return item.text().replace("\n", " ") if item is not None else ""


def table_rows(table: QTableWidget) -> list[list[str]]:
    headers = [table.horizontalHeaderItem(c) for c in range(table.columnCount())]
    rows = [[h.text().replace("\n", " ") if h is not None else "" for h in headers]]
    for r in range(table.rowCount()):
        rows.append([cell_text(table, r, c) for c in range(table.columnCount())])
    return rows


def write_csv(path: str, rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


def add_csv_export(widget: QWidget, rows: Callable[[], list[list[str]]], name: str, png: bool = False) -> None:
    """Right-click on ``widget``: copy as tab-separated text, or save as CSV (with ``png``: or as a picture
    of the widget, for a table drawn in colours)."""
    widget.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def menu(pos) -> None:
        m = QMenu(widget)
        copy = m.addAction("Copy as text")
        save = m.addAction("Save as CSV…")
        picture = m.addAction("Save as PNG…") if png else None
        chosen = m.exec(widget.mapToGlobal(pos))
        if chosen is copy:
            QApplication.clipboard().setText("\n".join("\t".join(r) for r in rows()))
        elif chosen is save:
            path, _ = QFileDialog.getSaveFileName(widget, f"Save {name} as CSV", f"{name}.csv", "CSV (*.csv)")
            if path:
                write_csv(path, rows())
        elif picture is not None and chosen is picture:
            path, _ = QFileDialog.getSaveFileName(widget, f"Save {name} as PNG", f"{name}.png", "PNG (*.png)")
            if path:
                widget.grab().save(path)

    widget.customContextMenuRequested.connect(menu)
