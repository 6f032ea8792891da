"""Opening a talk: how long the window freezes while the deck's steps are prepared, on two checkouts side by side.

The talk window prepares its steps in turns of the event loop (each step's panel built, then asked for its answers,
which it draws when they come); a turn that takes long is a freeze the speaker sees (and, in the chaos bench, a
stall). In a fresh process per checkout and round (rounds alternate): the deck's models loaded first (so only the
preparation is measured) and the objects alive then frozen out of the garbage collector's way (the app's freezer
does the same, explorer/garbage.py), then the built-in deck opened at 1920×1080, once to warm up and then ``--opens``
times, each in the app's own event loop (``exec``, as the window runs: Qt's glib loop runs its timers once per pass
of posted events, which a loop of ``processEvents`` calls does not show) until every step is ready (its answers
drawn). Per open: the longest gap of a 10 ms timer, the gaps of 100 ms or more, the time until ready. Optionally
beside ``--busy`` threads running pure Python (the worst case for the GUI thread: each holds the GIL until the
switch interval ends).

    QT_QPA_PLATFORM=offscreen python bench/speed/talk_build.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3] [--busy 2]
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def one(opens: int, busy: int) -> dict[str, list[float]]:
    """In this process (its checkout first on sys.path): per open, the longest gap, the gaps of 100 ms or more and
    the time until every step is ready."""
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

    import gc

    gc.collect()
    gc.freeze()
    stop = threading.Event()

    def spin() -> None:
        n = 0
        while not stop.is_set():
            n += 1

    threads = [threading.Thread(target=spin, daemon=True) for _ in range(busy)]
    for thread in threads:
        thread.start()
    out: dict[str, list[float]] = {"worst": [], "over 100": [], "ready": []}
    for round_ in range(opens + 1):
        last, gaps = [time.perf_counter()], list[float]()

        def tick(last: list[float] = last, gaps: list[float] = gaps) -> None:
            now = time.perf_counter()
            gaps.append(now - last[0])
            last[0] = now

        timer = QTimer(interval=10)
        timer.timeout.connect(tick)
        talk = talk_window.TalkWindow(session, deck)
        talk.resize(talk_window.EXPORT_SIZE)
        talk.show()
        began = time.perf_counter()
        last[0] = began  # (from the loop's first turn: the window's construction is the same on both)
        timer.start()

        def ready(talk: object = talk, began: float = began) -> None:
            if talk.all_ready or time.perf_counter() - began > 120:  # type: ignore[attr-defined]
                app.quit()

        poll = QTimer(interval=5)
        poll.timeout.connect(ready)
        poll.start()
        app.exec()
        poll.stop()
        timer.stop()
        if round_ > 0:
            out["worst"].append(max(gaps) * 1000)
            out["over 100"].append(sum(g >= 0.1 for g in gaps))
            out["ready"].append((time.perf_counter() - began) * 1000)
        talk.close()
        talk.deleteLater()
        QTimer.singleShot(1000, app.quit)
        app.exec()
    stop.set()
    return out


def main() -> None:
    from bench._report import machine, write_section
    from bench.checkouts import checkouts_said, side_by_side, side_by_side_parser

    p = side_by_side_parser(rounds=3)
    p.add_argument("--opens", type=int, default=3, help="deck openings measured per round (after one to warm up)")
    p.add_argument("--busy", type=int, default=0, help="threads running pure Python beside the window")
    args = p.parse_args()
    names, results = side_by_side(args, __file__, f"one({args.opens}, {args.busy})")
    threads = "thread" if args.busy == 1 else "threads"
    lines = [f"## Opening a talk: the longest freeze while its steps are prepared{' beside busy threads' if args.busy else ''}",
             "", f"Machine: {machine()}", "",
             f"`python bench/speed/talk_build.py {checkouts_said(args)} "
             f"--opens {args.opens}{f' --busy {args.busy}' if args.busy else ''}`: the built-in deck opened at 1920×1080 "
             f"with its models loaded, in the app's event loop until every step is ready, {args.rounds} rounds × "
             f"{args.opens} openings per checkout, alternating, each round in a fresh process"
             f"{f', beside {args.busy} {threads} running pure Python' if args.busy else ''}.",
             "", f"| | {names[0]} | {names[1]} |", "|---|---:|---:|"]

    def cell(values: list[float], unit: str = " ms") -> str:
        return f"{statistics.median(values):.0f}{unit} (worst {max(values):.0f})" if values else "—"

    lines.append(f"| longest gap of a 10 ms timer until every step is ready, median of openings | "
                 f"{cell(results[0]['worst'])} | {cell(results[1]['worst'])} |")
    lines.append(f"| gaps of 100 ms or more, median of openings | {cell(results[0]['over 100'], '')} | "
                 f"{cell(results[1]['over 100'], '')} |")
    lines.append(f"| until every step is ready, median of openings | {cell(results[0]['ready'])} | "
                 f"{cell(results[1]['ready'])} |")
    text = "\n".join(lines)
    print(text)
    write_section("talk_build" + ("_busy" if args.busy else ""), text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
