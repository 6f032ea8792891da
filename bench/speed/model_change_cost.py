"""What one model loaded and unloaded elsewhere costs the window, on two checkouts side by side.

A speaker's setting: the main window with every tab shown once and the talk window open on the built-in deck
(each step's panel prepared, the deck's models loaded), then a model that no step shows is loaded and unloaded
``--changes`` times. Per change: the queries the panels asked (their runners' submits), the time until the query
thread and the pool are idle again (what a question the user asks next waits behind), and the window thread's CPU
time in that while. Each round in a fresh process per checkout, rounds alternating; medians over the changes.

    QT_QPA_PLATFORM=offscreen python bench/speed/model_change_cost.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 2]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
CANDIDATES = ("minilm-gpt", "all-minilm-l6-v2", "tuned-lens-minilm-mlm", "elmo-tiny", "gpt-tiny", "word2vec-sgns")


def one(changes: int) -> dict[str, list[float]]:
    """In this process (its checkout first on sys.path): per change, queries asked, ms until idle, GUI CPU ms."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    try:
        from explorer.pyside_imports import lighter_import_hook

        lighter_import_hook()
    except ImportError:
        pass
    from PySide6.QtCore import QThreadPool

    from explorer.main_window import MainWindow
    from explorer.session import Session
    from explorer.talk import window as talk_window
    from explorer.talk.deck import load_deck
    from explorer.tasks import TaskRunner, query_pool

    def pump(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.002)

    def idle() -> bool:
        return not (query_pool().activeThreadCount() or QThreadPool.globalInstance().activeThreadCount())

    session, deck = Session(), load_deck()
    window = MainWindow(session)
    window.resize(1400, 900)
    window.show()
    shown = list(dict.fromkeys(m for step in deck.steps for m in step.models))
    for name in shown:
        session.load(name)
    began = time.monotonic()
    while session.loading and time.monotonic() - began < 600:
        pump(0.05)
    for i in range(window.tabs.count()):  # every tab shown once: its views built, its pickers listing
        window.tabs.setCurrentIndex(i)
        pump(0.5)
    talk = talk_window.TalkWindow(session, deck)
    talk.resize(talk_window.EXPORT_SIZE)
    talk.show()
    began = time.monotonic()
    while (any(p is None for p in talk.panels) or not idle()) and time.monotonic() - began < 300:
        pump(0.05)
    pump(2)
    other = next(n for n in CANDIDATES if n not in session.models)

    asked = [0]
    submit = TaskRunner.submit

    def counted(runner, fn):  # type: ignore[no-untyped-def]
        asked[0] += 1
        return submit(runner, fn)

    TaskRunner.submit = counted  # type: ignore[method-assign]
    out: dict[str, list[float]] = {"queries": [], "idle ms": [], "gui cpu ms": []}
    for i in range(2 * changes):
        asked[0] = 0
        cpu, t0 = time.thread_time(), time.perf_counter()
        if i % 2 == 0:
            session.load(other)
            while other not in session.models and time.perf_counter() - t0 < 120:
                pump(0.002)
        else:
            session.unload(other)
        pump(0.05)
        while not idle() and time.perf_counter() - t0 < 300:
            pump(0.002)
        out["queries"].append(float(asked[0]))
        out["idle ms"].append((time.perf_counter() - t0) * 1000)
        out["gui cpu ms"].append((time.thread_time() - cpu) * 1000)
        pump(0.5)
    out["panels"] = [float(sum(p is not None for p in talk.panels))]
    out["other"] = [float(CANDIDATES.index(other))]
    return out


def main() -> None:
    from bench._report import machine, write_section
    from bench.checkouts import side_by_side, side_by_side_parser

    p = side_by_side_parser()
    p.add_argument("--changes", type=int, default=4, help="loads and unloads per round (each one a change)")
    args = p.parse_args()
    names, results = side_by_side(args, __file__, f"one({args.changes})")
    other = CANDIDATES[int(results[0]["other"][0])]

    def cell(values: list[float], unit: str = "") -> str:
        return f"{statistics.median(values):,.0f}{unit} (worst {max(values):,.0f})"

    lines = ["## A model loaded or unloaded beside an open talk: what the other panels do", "",
             f"Machine: {machine()}", "",
             f"`QT_QPA_PLATFORM=offscreen python bench/speed/model_change_cost.py OLD NEW --rounds {args.rounds} "
             f"--changes {args.changes}`: the main window (1400×900, every tab shown once) and the talk window on "
             f"the built-in deck ({results[0]['panels'][0]:.0f} steps' panels prepared, the deck's models loaded); "
             f"then {other}, which no step shows, loaded and unloaded {args.changes} times each; each round in a "
             "fresh process per checkout, alternating; medians over the changes. Idle: from the change until the "
             "query thread and the pool have nothing left to run (what the user's next question waits behind).",
             "", f"| per change | {names[0]} | {names[1]} |", "|---|---:|---:|",
             f"| queries the panels asked | {cell(results[0]['queries'])} | {cell(results[1]['queries'])} |",
             f"| until the workers are idle | {cell(results[0]['idle ms'], ' ms')} | "
             f"{cell(results[1]['idle ms'], ' ms')} |",
             f"| the window thread's CPU | {cell(results[0]['gui cpu ms'], ' ms')} | "
             f"{cell(results[1]['gui cpu ms'], ' ms')} |"]
    text = "\n".join(lines)
    print(text)
    write_section("model-change-cost", text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
