"""The window's longest freeze after each kind of action, on two checkouts side by side: the chaos bench's stalls
(bench/robustness/chaos.py) one kind at a time, without its thirty minutes' noise.

In a fresh process per checkout and round (rounds alternating): the chaos bench's window (its size, GloVe, MiniLM and
the default models loaded), every tab and inner view shown once, and a deck of one step per tab. Then phases of
``--actions`` actions each, done by the chaos bench's monkey with a fixed seed, so both checkouts get the same ones:
a change of theme, each followed by a tab switch (a plot hidden when the theme changed takes its colours as its tab is
shown, so the switch after a change pays for it); the zoom, each followed by a tab switch; the talk window opened and
closed in turn; a small training started from the Pretrain tab (its tab shown, n-gram or word2vec chosen) and stopped
in turn, each followed by a tab switch; text typed into the tab shown; a click on a button, a list or a word of the
tab shown; a scene opened. Each action is the user's, said as the windows' input filter says it
(``explorer.user_input.note_input``) before it is done. After each action the window is left to run for ``PUMP_S``, and its figure is the longest gap of a
10 ms timer from the action's start until then: the action's own work and all it set off (layouts, repaints, a deck
step's panel built).

The chaos bench's stalls come on two cores shared with the app's query threads and a training process. ``--busy N``
runs N threads of pure Python beside the window at the app's worker threads' nice value (each holds the GIL for a
switch interval at a time, as a query's Python does) and ``--burners M`` M processes spinning at the nice value the
checkout starts its trainings at (``engine.cli.runner.BACKGROUND_NICE``).

    QT_QPA_PLATFORM=offscreen python bench/speed/action_gaps.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 2] [--actions 20]
        [--busy 1] [--burners 2] [--phases theme zoom talk train type click scene]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
PUMP_S = 1.0  # how long the window runs after each action before the next
RATE = "the busy threads' Python, million loops a second"  # (the table's last row, with ``--busy``)
PHASES = (("theme", ("theme", "tab")), ("zoom", ("zoom", "tab")), ("talk", ("talk",)), ("train", ("training", "tab")),
          ("type", ("type",)), ("click", ("click",)), ("scene", ("scene",)))


def one(actions: int, busy: int, burners: int, seed: int = 7, phases: tuple[str, ...] = ()) -> dict[str, list[float]]:
    """In this process (its checkout first on sys.path): per phase and kind of action, the longest gap after each
    (the phases named in ``phases``; none named: all)."""
    import os
    import subprocess
    import threading
    import time

    from explorer.worker_threads import sleeping_worker_threads

    sleeping_worker_threads()  # as the app does, before torch is imported
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QTabWidget

    app = QApplication.instance() or QApplication([])
    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()
    from bench.robustness.chaos import chaos_window
    from bench.robustness.monkey import Monkey, wait

    session, window = chaos_window(app)
    monkey = Monkey(window, seed)  # (not started: only its actions are used)
    for index in range(window.tabs.count()):  # every tab and inner view built and shown once; a deck step of each tab
        window.tabs.setCurrentIndex(index)
        wait(app, 0.3)
        for inner in window.tabs.currentWidget().findChildren(QTabWidget):
            for view in range(inner.count()):
                inner.setCurrentIndex(view)
                wait(app, 0.2)
        monkey.add_to_deck()
    window.tabs.setCurrentIndex(0)
    wait(app, 3)

    stop = threading.Event()

    # (each checkout's own: the nice value of its trainings, and its workers')
    import engine.api
    from engine.cli.runner import BACKGROUND_NICE
    from explorer.tasks import below_the_window

    loops = [0] * busy  # each busy thread's work done: what the window's freezes cost the queries beside it
    # where a checkout's workers wait while the window works (``engine.api.yield_point``: the branch
    # workers-wait-prototype's, at each torch module's forward), the stand-in waits too, every thousand loops; a
    # no-op for a checkout without it (main)
    pause = getattr(engine.api, "yield_point", lambda: None)

    def spin(which: int) -> None:
        below_the_window()  # (at the workers' nice value, as the app's query threads run)
        n = 0
        while not stop.is_set():
            n += 1
            if n % 1000 == 0:
                pause()
                if n % 10_000 == 0:
                    loops[which] = n

    spinners = [threading.Thread(target=spin, args=(i,), daemon=True) for i in range(busy)]
    for thread in spinners:
        thread.start()
    burning = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.nice(BACKGROUND_NICE))
               for _ in range(burners)]
    ticks: list[float] = []
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    out: dict[str, list[float]] = {}
    from explorer.user_input import note_input

    do = {"theme": monkey.theme, "tab": monkey.switch_tab, "zoom": monkey.zoom, "talk": monkey.talk,
          "training": monkey.training, "type": monkey.type_text, "click": monkey.click, "scene": monkey.open_scene}
    began_all = time.perf_counter()
    try:
        for phase, kinds in [(name, kinds) for name, kinds in PHASES if not phases or name in phases]:
            for _ in range(actions):
                for kind in kinds:
                    began = time.perf_counter()
                    ticks.clear()
                    note_input()  # (each action is the user's: said as the windows' input filter says it)
                    do[kind]()
                    wait(app, PUMP_S)
                    stamps = [began, *ticks]
                    out.setdefault(f"{phase}: {kind}", []).append(
                        max(b - a for a, b in zip(stamps, stamps[1:], strict=False)) * 1000)
            monkey.close_talk()
            if window.train.job is not None and window.train.job.running:
                window.train.stop.click()
            wait(app, 1)
        if busy:  # (a rate, not a freeze: its own line of the table)
            out[RATE] = [sum(loops) / (time.perf_counter() - began_all) / 1e6]
    finally:
        timer.stop()
        stop.set()
        for process in burning:
            process.kill()
    return out


def main() -> None:
    from bench._report import machine, write_section
    from bench.checkouts import checkouts_said, side_by_side, side_by_side_parser, spread

    p = side_by_side_parser()
    p.add_argument("--actions", type=int, default=20, help="actions of each kind per phase and round")
    p.add_argument("--busy", type=int, default=0, help="threads running pure Python beside the window")
    p.add_argument("--burners", type=int, default=0, help="processes spinning at the checkout's trainings' nice value (a training's stand-in)")
    p.add_argument("--phases", nargs="+", choices=[name for name, _ in PHASES], default=[],
                   help="only these phases (default: all)")
    args = p.parse_args()
    names, results = side_by_side(args, __file__,
                                  f"one({args.actions}, {args.busy}, {args.burners}, phases={tuple(args.phases)!r})")
    beside = ", ".join(part for part in (f"{args.busy} thread{'s' * (args.busy > 1)} of pure Python" if args.busy else "",
                                         f"{args.burners} process{'es' * (args.burners > 1)} spinning at the checkout's trainings' nice value" if args.burners else "") if part)
    lines = [f"## The window's longest freeze after each kind of action{' beside busy work' if beside else ''}", "",
             f"Machine: {machine()}", "",
             f"`python bench/speed/action_gaps.py {checkouts_said(args)} "
             f"--actions {args.actions}{f' --busy {args.busy}' if args.busy else ''}"
             f"{f' --burners {args.burners}' if args.burners else ''}"
             f"{f' --phases {chr(32).join(args.phases)}' if args.phases else ''}`: the chaos bench's window, every tab built, "
             f"{args.rounds} rounds × {args.actions} actions of each kind per checkout (the monkey's, seeded: the same "
             f"on both), alternating, each round in a fresh process{f', beside {beside}' if beside else ''}. Each "
             f"figure is the longest gap of a 10 ms timer from the action's start to {PUMP_S:g} s after: median, 90th "
             "percentile, worst, and how many of 250 ms or more (the chaos bench's stall).", "",
             f"| phase: action | {names[0]} | {names[1]} |", "|---|---:|---:|"]

    def cell(values: list[float], key: str = "") -> str:
        if not values:
            return "—"
        if key == RATE:
            return " / ".join(f"{v:.2f}" for v in values) + " (each round)"
        stalls = sum(v >= 250 for v in values)
        return f"{spread(values)} ms ({stalls} of {len(values)})"

    for key in dict.fromkeys(k for r in results for k in r):
        lines.append(f"| {key} | {cell(results[0].get(key, []), key)} | {cell(results[1].get(key, []), key)} |")
    text = "\n".join(lines)
    print(text)
    write_section("action-gaps" + ("-busy" if beside else ""), text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
