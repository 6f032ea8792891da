"""The polysemy lens's map drawn again (a new word or sentence, a zoom, a theme), on two checkouts side by side:
the GUI thread's time for ``OccurrenceMapView.show_map`` and the paint after it, alone and beside threads of pure
Python (as the app's query workers run beside the window).

Each redraw's figure is the wall time from the call to the end of the paint. Beside busy threads it is mostly
waiting: the GUI thread gives the GIL up around each call into Qt and waits for it on the way back, so a redraw's
cost there grows with its calls into Qt, not only with its own time (explorer/tasks.py, responsive_interpreter).
The map is ``tests/explorer/widgets/test_occurrence_map.py``'s: 291 corpus occurrences in two clusters and the two
typed ones, PCA.

    QT_QPA_PLATFORM=offscreen python bench/speed/map_redraw.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3] [--redraws 40]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
BUSY = (0, 1, 2)  # threads of pure Python beside the window


def one(redraws: int) -> dict[str, list[float]]:
    """In this process (its checkout first on sys.path): each redraw's milliseconds, per count of busy threads."""
    import threading
    import time

    import numpy as np
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from engine.api import occurrence_map
    from explorer.tasks import below_the_window, responsive_interpreter
    from explorer.widgets.occurrence_map import OccurrenceMapView

    responsive_interpreter()  # (the app's switch interval)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=32), rng.normal(size=32)
    corpus = np.concatenate([a + 0.3 * rng.normal(size=(150, 32)), b + 0.3 * rng.normal(size=(141, 32))])
    occ = occurrence_map(corpus, [f"s{i}" for i in range(291)], np.stack([a, b]), ["river", "money"], "pca")
    view = OccurrenceMapView()
    view.resize(700, 460)
    view.show()
    app.processEvents()

    def redraw() -> float:
        began = time.perf_counter()
        view.show_map(occ, "bank", ["#1f77b4", "#d62728"])
        view.repaint()
        return (time.perf_counter() - began) * 1000

    for _ in range(5):  # (warm: the first draws make the symbols' atlas and the text items' fonts)
        redraw()
    def spin(stop: threading.Event) -> None:
        below_the_window()  # (at the workers' nice value)
        while not stop.is_set():
            pass

    out: dict[str, list[float]] = {}
    for busy in BUSY:
        stop = threading.Event()

        threads = [threading.Thread(target=spin, args=(stop,), daemon=True) for _ in range(busy)]
        for thread in threads:
            thread.start()
        time.sleep(0.2)
        out[f"{busy} busy thread{'s' * (busy != 1)}"] = [redraw() for _ in range(redraws)]
        stop.set()
        for thread in threads:
            thread.join()
    view.deleteLater()
    return out


def main() -> None:
    from bench._report import machine, write_section
    from bench.checkouts import checkouts_said, ratio_table, side_by_side, side_by_side_parser

    p = side_by_side_parser(rounds=3)
    p.add_argument("--redraws", type=int, default=40, help="redraws per count of busy threads, per round")
    args = p.parse_args()
    names, results = side_by_side(args, __file__, f"one({args.redraws})")

    lines = ["## The polysemy map drawn again", "", f"Machine: {machine()}", "",
             f"`QT_QPA_PLATFORM=offscreen python bench/speed/map_redraw.py {checkouts_said(args)} --redraws "
             f"{args.redraws}`: the map view (700 × 460) of 291 corpus occurrences and 2 typed ones, drawn again "
             f"{args.redraws} times per round and count of busy threads, {args.rounds} rounds per checkout, "
             "alternating, each in a fresh process with the app's switch interval; beside 0, 1 and 2 threads of "
             "pure Python at the app's workers' nice value. Each figure: milliseconds from `show_map` to the end of "
             "the paint after it, median / 90th percentile / worst.", "",
             *ratio_table("beside", names, results, 1)]
    text = "\n".join(lines)
    print(text)
    write_section("map-redraw", text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
