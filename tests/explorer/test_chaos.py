"""Chaos in the window (issue 37, item 4): a seeded monkey (bench/robustness/monkey.py) drives random
user actions on every tab — hostile text typed key by key, word buttons, models, layers, views, scenes,
zoom, the theme, the talk deck, its window and a speaker's keys in it, dialogs — for about 40 s with the
small shipped models loaded: no uncaught exception, no failure logged as unexpected, and no freeze: the
event loop never kept from a 10 ms timer for FREEZE_MS or more. The issue's goal, no gap of 250 ms, is a
timing figure and lives in the 30-minute bench (none in its runs Z59, Z60 and Z63 on a 2-core Xeon; one each
in Z61 and Z62, two in Z64, of 253-317 ms: bench/robustness/CHAOS-HISTORY.md); a
test on a shared or slower machine cannot hold it, so this bound catches what a person would call a hang —
a model loaded or an index built on the GUI thread — not every hitch. Once a second, no widget is laid out
more than three times as wide as the window (the user's text pushing a view past its edge).
``WORD2BERT_MONKEY_SEED=N`` replays another seed; the failure message lists the last actions. The
30-minute run, with trainings and the scrubber, is bench/robustness/chaos.py."""

import os

from bench.robustness.monkey import Monkey, wait

SEED = int(os.environ.get("WORD2BERT_MONKEY_SEED", "1"))
SECONDS = 40
FREEZE_MS = 3000


def test_random_use_of_every_tab_raises_nothing_and_never_stalls(qtbot):
    from PySide6.QtWidgets import QApplication

    from explorer.main_window import MainWindow
    from explorer.session import Session
    from explorer.tasks import wait_for_workers

    session = Session()
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    small = ("bert-tiny", "gpt-tiny", "elmo-tiny", "word2vec-sgns")
    for name in small:
        session.load(name)
    qtbot.waitUntil(lambda: all(n in session.models for n in small), timeout=120_000)
    monkey = Monkey(window, SEED, pace_ms=80)
    sprawled: list[str] = []  # widgets laid out far wider than the window, with the action before (once a second)
    try:
        monkey.start()
        wait(QApplication.instance(), 3)  # the first queries warm up (one-time compilations)
        monkey.measure()
        for _ in range(SECONDS):
            wait(QApplication.instance(), 1)
            sprawled += [f"{found} (after {monkey.log[-1]})" for found in monkey.sprawling()[:1]]
    finally:
        monkey.stop()
        window.zoom(0)
        window.set_theme("light")  # (the application's palette outlives the window: the next tests' is light)
    assert wait_for_workers(60_000)  # every query and long job it started has ended
    last = "\n".join(monkey.log[-25:])
    assert not monkey.exceptions, f"seed {SEED}: {monkey.exceptions[0]}\nlast actions:\n{last}"
    # a failure the app caught and showed, but logged as unexpected (not the engine refusing): a bug too
    assert not monkey.unexpected, f"seed {SEED}: {monkey.unexpected[0]}\nlast actions:\n{last}"
    assert monkey.stalls.worst_ms < FREEZE_MS, (f"seed {SEED}: the window froze {monkey.stalls.worst_ms:.0f} ms; "
                                                f"where: {monkey.culprits}; last actions:\n{last}")
    assert not sprawled, f"seed {SEED}: {sprawled[0]}; last actions:\n{last}"
    assert monkey.steps >= SECONDS * 5, monkey.steps  # it did act, on every kind of widget
    kinds = {line.split(":")[0].split()[-1] for line in monkey.log}
    assert {"tab", "type", "click", "choose", "scene", "zoom", "talk", "present", "theme"} <= kinds, kinds
    assert any(": talk key " in line for line in monkey.log)  # a talk was stepped through, not only opened
