"""A model loaded or unloaded elsewhere does not make every panel ask again: each asks only when the models it
shows changed — its choice, the models it could choose, or the handle under a name (a model loaded again, the
scrubber's next checkpoint). Every panel used to ask at every change, and those answers queued on the one query
thread before the user's next one (bench/robustness/RESULTS.md: 8,000 of 10,500 queries in 6 minutes of the
chaos bench came from model changes)."""

from collections import Counter


def change(qtbot, win, do):
    from explorer.tasks import wait_for_workers

    with qtbot.waitSignal(win.session.modelsChanged, timeout=60_000):
        do()
    qtbot.wait(50)
    assert wait_for_workers(30_000)


def test_panels_ask_again_only_when_their_models_changed(qtbot, window, monkeypatch):
    from explorer.tasks import TaskRunner

    session = window.session
    for name in ("word2vec-sgns", "bert-tiny"):
        change(qtbot, window, lambda n=name: session.load(n))
    window.tabs.setCurrentWidget(window.neighbours)
    with qtbot.waitSignal(window.neighbours.runner.finished, timeout=30_000):
        qtbot.keyClicks(window.neighbours.word, "bank")
    window.tabs.setCurrentWidget(window.predictions)  # the masked view, built when shown, answers
    masked = window.predictions.masked
    qtbot.waitUntil(lambda: not masked.runner.busy, timeout=30_000)
    window.polysemy.select("bank")  # the static column asks word2vec for "bank"
    qtbot.waitUntil(lambda: not window.polysemy.static.runner.busy, timeout=30_000)

    asked: Counter[str] = Counter()
    submit = TaskRunner.submit

    def counted(runner, fn):
        asked[type(runner.parent()).__name__] += 1
        return submit(runner, fn)

    monkeypatch.setattr(TaskRunner, "submit", counted)
    panels = ("NeighboursPanel", "StaticNeighbours", "MaskedView", "AttentionPanel")  # (nothing compared)
    change(qtbot, window, lambda: session.load("gpt-tiny"))  # neither static nor a masked LM
    change(qtbot, window, lambda: session.unload("gpt-tiny"))
    assert {p: asked[p] for p in panels} == dict.fromkeys(panels, 0), asked
    assert window.neighbours.table.rowCount() == window.neighbours.k  # the answer shown stays
    assert masked.model.currentText() == "bert-tiny"

    # the same name answered by another handle (loaded again): its panels ask it
    change(qtbot, window, lambda: session.unload("word2vec-sgns"))
    change(qtbot, window, lambda: session.load("word2vec-sgns"))
    assert asked["NeighboursPanel"] >= 1 and asked["StaticNeighbours"] >= 1, asked
    qtbot.waitUntil(lambda: window.neighbours.table.rowCount() == window.neighbours.k, timeout=30_000)
    assert asked["MaskedView"] == 0, asked
