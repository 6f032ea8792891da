"""The app window against real models: typing a word fills the neighbours table off the GUI thread."""

from pathlib import Path

import pytest

from tests.conftest import settle_layout

SHOTS = Path(__file__).resolve().parents[3] / "test-output" / "screenshots"


def load(qtbot, win, name):
    with qtbot.waitSignal(win.session.modelsChanged, timeout=60_000):
        win.session.load(name)


def test_typing_a_word_shows_glove_neighbours(qtbot, window):
    load(qtbot, window, "glove-6b-50d")
    panel = window.neighbours
    window.tabs.setCurrentWidget(panel)  # (its screenshot below was of the polysemy lens)
    assert panel.model.currentText() == "glove-6b-50d"
    with qtbot.waitSignal(panel.runner.finished, timeout=30_000):
        qtbot.keyClicks(panel.word, "river")
    words = [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]
    assert len(words) == panel.k and "river" not in words
    assert {"rivers", "creek", "lake", "valley", "tributary"} & set(words)
    sims = [float(panel.table.item(r, 1).text()) for r in range(panel.table.rowCount())]
    assert sims == sorted(sims, reverse=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "neighbours-glove-river.png"))


def test_unknown_word_shows_a_message_and_the_panel_goes_on(qtbot, window):
    load(qtbot, window, "glove-6b-50d")
    panel = window.neighbours
    with qtbot.waitSignal(panel.runner.failed, timeout=30_000):
        qtbot.keyClicks(panel.word, "qqzzxxwv")
    assert "not in the vocabulary" in panel.message.text()
    assert panel.table.rowCount() == 0
    panel.word.clear()
    with qtbot.waitSignal(panel.runner.finished, timeout=30_000):
        qtbot.keyClicks(panel.word, "bank")
    assert panel.table.rowCount() == panel.k


def test_fast_edits_leave_the_last_words_result(qtbot, window):
    load(qtbot, window, "glove-6b-50d")
    panel = window.neighbours
    for word in ("piano", "guitar", "violin"):
        panel.word.setText(word)
        panel.query()  # bypass the debounce: three requests in flight
    qtbot.waitUntil(lambda: panel.message.text().startswith("Nearest words to “violin”"), timeout=30_000)
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)  # every request has ended: stale results came and were dropped
    settle_layout()  # their queued signals are delivered
    assert panel.message.text().startswith("Nearest words to “violin”")


def test_a_bad_model_path_is_reported_not_fatal(qtbot, window):
    with qtbot.waitSignal(window.session.error, timeout=30_000) as blocker:
        window.session.load("/no/such/run")
    assert "no run folder" in blocker.args[0]


def test_an_analogy_is_read_as_word_arithmetic():
    from explorer.panels.neighbours import parse_analogy

    assert parse_analogy("bank") is None and parse_analogy("well-known") is None
    assert parse_analogy("king - man + woman") == ("man", "king", "woman")  # man : king :: woman : ?
    assert parse_analogy("king+woman-man") == ("man", "king", "woman")
    assert parse_analogy(" paris - france + italy ") == ("france", "paris", "italy")
    from engine.api import InputError

    for bad in ("king + woman", "king - man - woman", "king + + woman", "a - b + c + d", "+ king - man"):
        with pytest.raises(InputError, match="three words"):  # the user's input, not a bug to log
            parse_analogy(bad)


def test_typing_king_minus_man_plus_woman_gives_queen_in_glove(qtbot, window):
    load(qtbot, window, "glove-6b-50d")
    panel = window.neighbours
    window.tabs.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.runner.finished, timeout=30_000):
        qtbot.keyClicks(panel.word, "King - man + woman")  # (GloVe's words are lowercase)
    assert panel.table.item(0, 0).text() == "queen"
    words = {panel.table.item(r, 0).text() for r in range(panel.table.rowCount())}
    assert not words & {"king", "man", "woman"} and "− man + woman" in panel.message.text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "neighbours-glove-analogy.png"))
    panel.word.setText("king - man +")  # half typed: says how to write one, keeps going
    panel.query()
    assert "three words" in panel.message.text() and panel.table.rowCount() == 0
    with qtbot.waitSignal(panel.runner.failed, timeout=30_000):
        panel.word.setText("king - man + qqzzxxwv")
        panel.query()
    assert "qqzzxxwv" in panel.message.text()


def test_similarity_bars_fill_their_cell_in_proportion(qtbot):
    """The bar column: each row's cell is filled from the left to its similarity, a negative one not at all;
    the table holds no widget per row."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication, QTableWidget

    from explorer.panels.neighbours import SimilarityBars, similarity_bar

    table = QTableWidget(3, 2)  # the bars in the second column, as in the panel: cells not at the left edge
    qtbot.addWidget(table)
    table.horizontalHeader().setStretchLastSection(True)
    table.setItemDelegateForColumn(1, SimilarityBars(table))
    table.resize(520, 200)
    for row, sim in enumerate((0.9, 0.45, -0.2)):
        table.setItem(row, 1, similarity_bar(sim))
    table.show()
    settle_layout()
    image = table.viewport().grab().toImage()
    highlight = QApplication.palette().color(QPalette.ColorRole.Highlight)
    left, width = table.columnViewportPosition(1), table.columnWidth(1) - 4  # (the bar's 2-px margins)

    def filled(row: int) -> float:
        y = table.rowViewportPosition(row) + table.rowHeight(row) // 2
        def near(c) -> bool:  # (a gradient's colours are rounded: within a step or two)
            return max(abs(c.red() - highlight.red()), abs(c.green() - highlight.green()),
                       abs(c.blue() - highlight.blue())) <= 3

        return sum(near(image.pixelColor(left + 2 + x, y)) for x in range(width)) / width

    assert filled(0) == pytest.approx(0.9, abs=0.02)
    assert filled(1) == pytest.approx(0.45, abs=0.02)
    assert filled(2) == 0
    assert table.cellWidget(0, 1) is None


def test_rare_words_are_left_out_of_static_neighbours_unless_asked(qtbot, window):
    """word2vec-sgns saw "zach" and "braff" 6-7 times in 4.8M words: by default they are not among the neighbours
    of "star" (the threshold bench/quality/rare_neighbours.py chose); "every word" brings them back, here and in
    the polysemy lens's static column, which follows the same setting."""
    from engine import api

    load(qtbot, window, "word2vec-sgns")
    panel, lens = window.neighbours, window.polysemy.static
    window.tabs.setCurrentWidget(panel)
    assert panel.seen.value() == api.SEEN_AT_LEAST and panel.seen.isEnabled()
    with qtbot.waitSignal(panel.runner.finished, timeout=30_000):
        panel.word.setText("star")
    words = [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]
    assert "constellation" in words and not {"zach", "braff"} & set(words)
    assert f"words it saw {api.SEEN_AT_LEAST} times or more" in panel.message.text()
    with qtbot.waitSignal(lens.runner.finished, timeout=30_000):
        lens.query("star")
    assert "zach" not in lens.table.item(0, 1).text() and "left out" in lens.table.item(0, 1).toolTip()
    with qtbot.waitSignals([panel.runner.finished, lens.runner.finished], timeout=30_000):
        panel.seen.setValue(1)  # "every word": the lens asks again too
    assert panel.seen.text() == "every word"
    assert {"zach", "braff"} <= {panel.table.item(r, 0).text() for r in range(panel.table.rowCount())}
    assert "zach" in lens.table.item(0, 1).text() and not lens.table.item(0, 1).toolTip()
    # how often the word itself was seen, before its neighbours: "bat", seen a few dozen times, has neighbours that
    # mean little beside "star"'s
    handle = window.session.models["word2vec-sgns"]
    seen = {word: handle.word_count(word) for word in ("star", "bat")}
    assert seen["bat"] < seen["star"] // 10
    assert f"“star” itself seen {seen['star']:,} times" in panel.message.text()
    with qtbot.waitSignal(lens.runner.finished, timeout=30_000):
        lens.query("bat")
    assert lens.table.item(0, 1).text().startswith(f"(“bat” seen {seen['bat']:,}×) ")
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "neighbours-every-word.png"))


def test_a_model_without_counts_shows_every_word_and_says_why(qtbot, window):
    load(qtbot, window, "glove-6b-50d")
    panel = window.neighbours
    with qtbot.waitSignal(panel.runner.finished, timeout=30_000):
        panel.word.setText("star")
    assert not panel.seen.isEnabled() and "kept no counts" in panel.seen.toolTip()
    assert "times or more" not in panel.message.text() and "itself seen" not in panel.message.text()
