"""Opening a talk: how long the window freezes while the deck's steps are built, on two checkouts side by side.

The talk window builds one step's panel per turn of the event loop; a turn that takes long is a freeze the speaker
sees (and, in the chaos bench, a stall). In a fresh process per checkout and round (rounds alternate): the deck's
models loaded first (so only the building is measured), then the built-in deck opened at 1920×1080, once to warm
up and then ``--opens`` times. Per step: the time to build its panel (``TalkWindow.panel``); per open: the longest
gap of a 10 ms timer until every step is built. Optionally beside ``--busy`` threads running pure Python (the
worst case for the GUI thread: each holds the GIL until the switch interval ends).

    QT_QPA_PLATFORM=offscreen python bench/speed/talk_build.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3] [--busy 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def one(opens: int, busy: int) -> dict[str, list[float]]:
    """In this process (its checkout first on sys.path): build times per step kind, longest gap per open."""
    import threading
    import time

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from explorer.tasks import responsive_interpreter

    responsive_interpreter()  # the app's switch interval
    try:
        from explorer.pyside_imports import lighter_import_hook

        lighter_import_hook()
    except ImportError:
        pass
    from explorer.session import Session
    from explorer.talk import window as talk_window
    from explorer.talk.deck import load_deck

    session, deck = Session(), load_deck()
    for name in dict.fromkeys(m for step in deck.steps for m in step.models):
        session.load(name)
    start = time.monotonic()
    while session.loading and time.monotonic() - start < 600:
        app.processEvents()
        time.sleep(0.01)

    builds: dict[str, list[float]] = {}
    original = talk_window.TalkWindow.panel

    def timed(self, i):  # type: ignore[no-untyped-def]
        if self.panels[i] is not None:
            return self.panels[i]
        t = time.perf_counter()
        try:
            return original(self, i)
        finally:
            if measuring[0]:
                builds.setdefault(self.steps[i].panel, []).append((time.perf_counter() - t) * 1000)

    talk_window.TalkWindow.panel = timed  # type: ignore[method-assign]
    measuring = [False]
    stop = threading.Event()

    def spin() -> None:
        n = 0
        while not stop.is_set():
            n += 1

    threads = [threading.Thread(target=spin, daemon=True) for _ in range(busy)]
    for thread in threads:
        thread.start()
    worst: list[float] = []
    for round_ in range(opens + 1):
        measuring[0] = round_ > 0
        last, gaps = [time.perf_counter()], [0.0]

        def tick(last: list[float] = last, gaps: list[float] = gaps) -> None:
            now = time.perf_counter()
            gaps[0] = max(gaps[0], now - last[0])
            last[0] = now

        timer = QTimer(interval=10)
        timer.timeout.connect(tick)
        timer.start()
        talk = talk_window.TalkWindow(session, deck)
        talk.resize(talk_window.EXPORT_SIZE)
        talk.show()
        began = time.monotonic()
        while any(p is None for p in talk.panels) and time.monotonic() - began < 300:
            app.processEvents()
            time.sleep(0.001)
        timer.stop()
        if measuring[0]:
            worst.append(gaps[0] * 1000)
        talk.close()
        talk.deleteLater()
        for _ in range(50):
            app.processEvents()
            time.sleep(0.005)
    stop.set()
    return {"worst": worst, **{f"build {k}": v for k, v in builds.items()}}


def main() -> None:
    from bench._report import machine, write_section
    from bench.checkouts import alternate, label

    p = argparse.ArgumentParser()
    p.add_argument("checkouts", nargs=2, type=Path, help="the code before and after (each a checkout's root)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--opens", type=int, default=3, help="deck openings measured per round (after one to warm up)")
    p.add_argument("--busy", type=int, default=0, help="threads running pure Python beside the window")
    args = p.parse_args()
    names = [label(c) for c in args.checkouts]  # (before the runs: writing the results changes a checkout)
    results = alternate(args.checkouts, __file__, f"one({args.opens}, {args.busy})", args.rounds)
    keys = sorted({k for r in results for k in r if k != "worst"})
    lines = [f"## Opening a talk: the longest freeze while its steps are built{' beside busy threads' if args.busy else ''}",
             "", f"Machine: {machine()}", "",
             f"`python bench/speed/talk_build.py {' '.join(str(c) for c in args.checkouts)} --rounds {args.rounds} "
             f"--opens {args.opens}{f' --busy {args.busy}' if args.busy else ''}`: the built-in deck opened at 1920×1080 "
             f"with its models loaded, {args.rounds} rounds × {args.opens} openings per checkout, alternating, each "
             f"round in a fresh process{f', beside {args.busy} threads running pure Python' if args.busy else ''}.",
             "", f"| | {names[0]} | {names[1]} |", "|---|---:|---:|"]

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):.0f} ms (worst {max(values):.0f})" if values else "—"

    lines.append(f"| longest gap of a 10 ms timer while the steps are built, median of openings | "
                 f"{cell(results[0]['worst'])} | {cell(results[1]['worst'])} |")
    for key in keys:
        lines.append(f"| {key.removeprefix('build ')} step's panel built, median | {cell(results[0].get(key, []))} | "
                     f"{cell(results[1].get(key, []))} |")
    text = "\n".join(lines)
    print(text)
    write_section("talk_build" + ("_busy" if args.busy else ""), text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
