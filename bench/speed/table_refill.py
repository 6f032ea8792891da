"""Refilling the window's tables: the cells put into rows just added (explorer/widgets/table_fill.py) against the
cells of the old rows replaced in place, side by side in one process.

The head atlas is filled again at every new sentence, model or corpus sample; the neighbours table at every
query. Both fit their columns to their contents. For each table and size: the first fill, then ``--rounds``
refills each way (alternating), each timed from the call to the end of the paint that follows; medians.

    QT_QPA_PLATFORM=offscreen python bench/speed/table_refill.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench._report import machine, write_section  # noqa: E402


def in_place(table: Any, rows: int, columns: int | None = None) -> None:
    """The old way: the row count set, the old rows' cells to be replaced."""
    if columns is not None:
        table.setColumnCount(columns)
    table.setRowCount(rows)


def timed(app: Any, table: Any, fill: Any) -> float:
    t0 = time.perf_counter()
    fill()
    app.processEvents()
    table.repaint()
    return (time.perf_counter() - t0) * 1000


def atlas_case(app: Any, heads: tuple[int, int], rounds: int) -> tuple[float, float, float]:
    import numpy as np

    from engine.api import HeadStats
    from explorer.widgets import head_atlas
    from explorer.widgets.table_fill import fresh_rows

    rng = np.random.default_rng(0)
    stats = [HeadStats(layer, head, *rng.random(9)) for layer in range(heads[0]) for head in range(heads[1])]
    atlas = head_atlas.HeadAtlas()
    atlas.resize(900, 500)
    atlas.show()
    first = timed(app, atlas, lambda: atlas.fill(stats))
    times: dict[str, list[float]] = {"fresh": [], "in place": []}
    for _ in range(rounds):
        for way, fn in (("fresh", fresh_rows), ("in place", in_place)):
            head_atlas.fresh_rows = fn  # type: ignore[assignment]
            times[way].append(timed(app, atlas, lambda: atlas.fill(stats)))
    head_atlas.fresh_rows = fresh_rows
    atlas.deleteLater()
    return first, statistics.median(times["fresh"]), statistics.median(times["in place"])


def neighbours_case(app: Any, k: int, rounds: int) -> tuple[float, float, float]:
    """The neighbours panel's table as it is set up (two columns fitted to their contents) and filled."""
    from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem

    from explorer.widgets.table_fill import fresh_rows

    table = QTableWidget(0, 3)
    header = table.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
    table.resize(600, 500)
    table.show()

    def fill(rows_of: Any) -> None:
        rows_of(table, k)
        for r in range(k):
            table.setItem(r, 0, QTableWidgetItem(f"word{r}"))
            table.setItem(r, 1, QTableWidgetItem(f"{1 - r / k:.3f}"))
            table.setItem(r, 2, QTableWidgetItem("█" * (10 - 10 * r // k)))

    first = timed(app, table, lambda: fill(fresh_rows))
    times: dict[str, list[float]] = {"fresh": [], "in place": []}
    for _ in range(rounds):
        for way, fn in (("fresh", fresh_rows), ("in place", in_place)):
            times[way].append(timed(app, table, lambda f=fn: fill(f)))
    table.deleteLater()
    return first, statistics.median(times["fresh"]), statistics.median(times["in place"])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    rows = []
    for label, heads in (("head atlas, 2 layers × 2 heads (bert-tiny)", (2, 2)),
                         ("head atlas, 6 × 12 (MiniLM)", (6, 12)),
                         ("head atlas, 12 × 12 (BERT-base)", (12, 12))):
        first, fresh, old = atlas_case(app, heads, args.rounds)
        rows.append(f"| {label} | {heads[0] * heads[1]} × 9 | {first:,.1f} | {fresh:,.1f} | {old:,.1f} | "
                    f"{old / fresh:,.0f}× |")
        print(rows[-1], flush=True)
    for k in (15, 50, 100):
        first, fresh, old = neighbours_case(app, k, args.rounds)
        rows.append(f"| neighbours table, k = {k} | {k} × 3 | {first:,.1f} | {fresh:,.1f} | {old:,.1f} | "
                    f"{old / fresh:,.1f}× |")
        print(rows[-1], flush=True)
    body = "\n".join([
        "## Refilling the window's tables", "",
        f"`QT_QPA_PLATFORM=offscreen python bench/speed/table_refill.py --rounds {args.rounds}`: the head atlas "
        "(explorer/widgets/head_atlas.py, random statistics) and a table set up as the neighbours panel's, filled "
        f"once, then {args.rounds} refills each way, alternating, in one process; each timed from the call to the "
        "end of the paint after it; medians. **Fresh rows**: the old rows dropped, the cells put into rows just "
        "added (explorer/widgets/table_fill.py, the app's way now); **in place**: the row count kept and the old "
        "rows' cells replaced (the app's way before).",
        f"Machine: {machine()}", "",
        "| table | cells | first fill ms | refill, fresh rows ms | refill, in place ms | in place / fresh |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
    ])
    write_section("table-refill", body)


if __name__ == "__main__":
    main()
