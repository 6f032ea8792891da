"""The polysemy lens against real models: static neighbours beside contextual neighbours — from the clicked
word's occurrences encoded on demand, or from a whole-corpus index — which differ for the same word in two
senses."""

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtWidgets import QToolButton

from explorer.panels.polysemy.answer import ContextualAnswer
from explorer.panels.polysemy.panel import DEFAULT_SENTENCES
from explorer.scenes import check_scene
from tests.conftest import settle_layout

SHOTS = Path(__file__).resolve().parents[4] / "test-output" / "screenshots"


@pytest.fixture
def window(qtbot, contextual_runs, topic_corpus):
    from explorer.main_window import MainWindow
    from explorer.session import Session

    session = Session()
    win = MainWindow(session)
    win.polysemy.corpus = str(topic_corpus)
    win.polysemy.indexer.settings = {"per_word": 8, "max_words": 200, "min_count": 3, "max_sentences": 2000}
    qtbot.addWidget(win)
    win.show()
    # no sentences, so no word: the lens's first word ("bank", the word its default sentences share) is not in this
    # corpus, and its search would answer beside each test's own (a test of the first screen types them again)
    win.polysemy.sentences.setPlainText("")
    qtbot.waitUntil(lambda: win.polysemy.word == "", timeout=5_000)
    yield win
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(20_000)


def test_two_senses_pull_different_corpus_neighbours(qtbot, window, contextual_runs):
    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["bert"][0]))
    assert panel.model.currentText() == "bert" and panel.layer.maximum() == 2
    assert "Click a word" in panel.message.text()
    panel.indexer.build.click()  # the whole-corpus index: an option, for every frequent word at once
    assert not panel.indexer.build.isEnabled() and panel.indexer.cancel.isEnabled()
    qtbot.waitUntil(lambda: "bert" in panel.indexer.indexes, timeout=120_000)
    assert panel.indexer.build.isEnabled() and panel.progress.value() == 1000
    panel.sentences.setPlainText("She played the piano on stage.\nHe drove the truck past the piano shop.")
    with qtbot.waitSignal(panel.context_runner.finished, timeout=60_000) as blocker:
        panel.select("piano")
    answer = blocker.args[0]
    word, layer, groups, occ_map, by_layer = answer.word, answer.layer, answer.groups, answer.occurrence_map, answer.by_layer
    assert occ_map.points.shape[0] == occ_map.typed.size and occ_map.typed.sum() == 2
    assert len(by_layer) == 3 and all(-1 <= s <= 1 for s in by_layer)  # the two pianos' cosine at each layer
    assert "cosine by layer" in panel.by_layer.text() and f"<b>2: {by_layer[2]:.2f}</b>" in panel.by_layer.text()
    assert word == "piano" and layer == 2 and len(groups) == 2
    first = [h.sentence for h in groups[0][1]]
    second = [h.sentence for h in groups[1][1]]
    assert first != second  # each typed occurrence has its own nearest occurrences
    assert "piano" in panel.results.toPlainText()
    def chips():
        return [panel.chips.itemAt(i).widget().text() for i in range(panel.chips.count()) if panel.chips.itemAt(i).widget()]

    qtbot.waitUntil(lambda: "truck" in chips(), timeout=5_000)
    assert "piano" in chips() and "bank" not in chips()
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "polysemy-tiny-bert.png"))
    panel.views.setCurrentIndex(1)
    with qtbot.waitSignal(panel.context_runner.finished, timeout=60_000):
        panel.layer.setValue(1)  # the map is aligned to the previous layer's
    assert panel.map.scatter.data.size == occ_map.points.shape[0]
    window.grab().save(str(SHOTS / "polysemy-map-tiny-bert.png"))


def test_until_a_word_is_clicked_the_lens_shows_the_word_the_sentences_share(qtbot, window, contextual_runs):
    """The first screen answers without a click: "bank" in the default sentences; in sentences kept from the last
    run, the word they share. A word the user clicks stays as the sentences change."""
    panel = window.polysemy

    def chips():  # the chips under the sentences now (those of earlier sentences may wait to be deleted)
        return [panel.chips.itemAt(i).widget() for i in range(panel.chips.count())]

    def checked():
        return [c.text() for c in chips() if isinstance(c, QToolButton) and c.isChecked()]

    panel.sentences.setPlainText(DEFAULT_SENTENCES)  # (the fixture cleared them)
    qtbot.waitUntil(lambda: panel.word == "bank", timeout=5_000)
    assert checked() == ["bank"]
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["bert"][0]))
    # asked of the model at once (this corpus has no bank: it says so)
    qtbot.waitUntil(lambda: "'bank' is not in the vocabulary of the corpus" in panel.message.text(), timeout=60_000)
    panel.sentences.setPlainText("The bus stopped near the market.\nWe took the bus home.")
    qtbot.waitUntil(lambda: panel.word == "bus", timeout=5_000)
    assert checked() == ["bus"]
    panel.select("market")  # a click
    panel.sentences.setPlainText("The bus stopped near the market.\nWe took the bus home.\nThe market closed.")
    qtbot.waitUntil(lambda: "closed" in [c.text() for c in chips()], timeout=5_000)
    assert panel.word == "market" and checked() == ["market"]
    panel.select("")  # nothing chosen: the shared word again once the sentences change
    panel.sentences.setPlainText("I like tea.\nShe likes coffee.")
    qtbot.waitUntil(lambda: "coffee" in [c.text() for c in chips()], timeout=5_000)
    assert panel.word == "" and checked() == []
    assert panel.static.table.item(0, 1).text() in ("click a word", "no static model loaded (GloVe, word2vec)")


def test_static_column_lists_one_neighbour_list_and_says_when_a_word_is_unknown(qtbot, window):
    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load("glove-6b-50d")
    with qtbot.waitSignal(panel.static.runner.finished, timeout=30_000):
        panel.select("bank")
    assert panel.static.table.rowCount() == 1
    assert "banks" in panel.static.table.item(0, 1).text()
    with qtbot.waitSignal(panel.static.runner.finished, timeout=30_000):
        panel.select("qqzzxxwv")
    assert "not in the vocabulary" in panel.static.table.item(0, 1).text()


def test_the_static_column_lists_the_best_vectors_first_whatever_loaded_first(qtbot, window):
    """The plain app loads every default: nnlm-tiny (whose word features are a next-word model's by-product) came
    before GloVe and word2vec in the column, and the Neighbours tab opened on whichever static model loaded first."""
    panel = window.polysemy
    for name in ("nnlm-tiny", "word2vec-sgns", "glove-6b-50d"):  # the catalog's best last
        with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
            window.session.load(name)
    with qtbot.waitSignal(panel.static.runner.finished, timeout=30_000):
        panel.select("bank")
    table = panel.static.table
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["glove-6b-50d", "word2vec-sgns", "nnlm-tiny"]
    assert "Bengio" in table.item(2, 0).toolTip()  # hovering a name says what the model is (the catalog's "what")
    # beside each list, how far its vectors agree with people (WordSim-353's ρ): the NNLM's by-product vectors, whose
    # "bank" neighbours are rare names, measured well below the vectors trained to be neighbours
    agreement = [float(table.item(r, 2).text()) for r in range(3)]
    assert min(agreement[:2]) > 0.4 and agreement[2] < min(agreement[:2]) - 0.15, agreement
    assert "word pairs whose words it knows" in table.item(2, 2).toolTip()
    panel.static.set_compact(True)  # a talk's one-line rows: the lists get the slide's width
    assert table.isColumnHidden(2)
    panel.static.set_alone(True)  # a talk's static step (the lists alone on the slide, whole): theirs too
    panel.static.set_compact(False)
    assert table.isColumnHidden(2)
    panel.static.set_alone(False)
    panel.static.set_compact(False)
    assert not table.isColumnHidden(2)
    assert window.neighbours.model.currentText() == "glove-6b-50d"


def test_controls_a_model_cannot_serve_are_disabled_with_the_reason(qtbot, window, contextual_runs):
    panel, words = window.polysemy, window.neighbours
    assert not panel.indexer.build.isEnabled() and "no model is loaded" in panel.message.text().lower()
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load("glove-6b-50d")
    assert not panel.indexer.build.isEnabled() and not panel.layer.isEnabled()
    assert "whatever the sentence" in panel.message.text() and "glove-6b-50d" in panel.indexer.build.toolTip()
    assert panel.model.itemText(0) == "glove-6b-50d (cannot)"
    assert words.word.isEnabled() and words.model.currentText() == "glove-6b-50d"
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["gpt"][0]))
    assert panel.model.currentText() == "gpt" and panel.indexer.build.isEnabled() and panel.layer.isEnabled()
    assert words.model.currentText() == "glove-6b-50d" and words.model.usable() == ["glove-6b-50d"]
    assert "one vector per occurrence" in words.model.reasons["gpt"]
    from engine.api import Capability

    gpt = window.session.models["gpt"]
    assert "left to right" in gpt.missing(Capability.MASKED_LM) and gpt.missing(Capability.ATTENTION) == ""
    window.session.models.pop("glove-6b-50d")
    window.session.modelsChanged.emit()
    assert not words.word.isEnabled() and "one vector per occurrence" in words.message.text()


def test_cancelled_index_build_says_so(qtbot, window, contextual_runs):
    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["gpt"][0]))
    panel.indexer.settings = {**panel.indexer.settings, "max_sentences": 2000, "per_word": 10_000}
    import engine.inspection.corpus_index as ci

    original = ci.index_folder
    ci.index_folder = lambda *a, **k: Path("/nonexistent-cache-for-test")
    try:
        panel.indexer.build.click()
        panel.indexer.job.cancel()
        with qtbot.waitSignal(panel.indexer.job.failed, timeout=60_000):
            pass
    finally:
        ci.index_folder = original
    assert "cancelled" in panel.message.text()
    assert panel.indexer.build.isEnabled()


def test_unloading_the_model_being_indexed_stops_its_build_and_lets_the_model_go(qtbot, window, contextual_runs):
    """The build held the unloaded model to its end (minutes of encoding), and stored its index under a name that
    no longer answered: now it stops, says why, stores nothing, and the model goes by its reference count."""
    import gc
    import weakref

    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["gpt"][0]))
    panel.indexer.settings = {**panel.indexer.settings, "max_sentences": 2000, "per_word": 10_000}
    import engine.inspection.corpus_index as ci

    original = ci.index_folder
    ci.index_folder = lambda *a, **k: Path("/nonexistent-cache-for-test")  # (built, not read from the cache)
    try:
        panel.indexer.build.click()
        job = panel.indexer.job
        gone = weakref.ref(window.session.models["gpt"])
        collecting = gc.isenabled()
        gc.disable()  # (only its reference count may free it)
        try:
            with qtbot.waitSignal(job.failed, timeout=60_000):
                window.session.unload("gpt")
            qtbot.waitUntil(lambda: not job.running, timeout=10_000)
            qtbot.wait(50)
            assert gone() is None
        finally:
            if collecting:
                gc.enable()
    finally:
        ci.index_folder = original
    assert "gpt" not in panel.indexer.indexes
    assert "unloaded or changed" in panel.message.text()
    assert panel.indexer.building == "gpt" and not panel.indexer.running


def test_scenes_open_and_round_trip(qtbot, window, contextual_runs, tmp_path):
    from explorer.scenes import Scene, SceneError, builtin_scenes, load_scene, save_scene

    assert {"bank", "play", "star", "bat", "spring"} <= set(builtin_scenes())
    assert load_scene("play").selection == "play"
    scene = Scene("polysemy", ["He tuned the piano.", "The piano was loud."], [str(contextual_runs["elmo"][0])],
                  selection="piano", contextual_model="elmo", layer=1, view="map")
    save_scene(tmp_path / "mine.json", scene)
    panel = window.polysemy
    window.open_scene(str(tmp_path / "mine.json"))
    qtbot.waitUntil(lambda: "piano" in panel.results.toPlainText(), timeout=120_000)  # occurrences on demand
    assert not panel.indexer.indexes  # no whole-corpus index was needed
    assert panel.layer.value() == 1 and panel.views.currentIndex() == 1
    assert panel.current_scene().sentences == scene.sentences and panel.current_scene().view == "map"
    panel.views.setCurrentWidget(panel.compare)  # saved on "All models", it opens there again
    save_scene(tmp_path / "models.json", panel.current_scene())
    panel.views.setCurrentIndex(0)
    window.open_scene(str(tmp_path / "models.json"))
    assert panel.views.currentWidget() is panel.compare and panel.current_scene().view == "models"
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(SceneError):
        load_scene(str(tmp_path / "bad.json"))
    window.open_scene(str(tmp_path / "bad.json"))
    assert "not a scene file" in window.statusBar().currentMessage()


def test_tables_export_to_csv(qtbot, window, tmp_path):
    from explorer.widgets.export import table_rows, write_csv

    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load("glove-6b-50d")
    with qtbot.waitSignal(panel.static.runner.finished, timeout=30_000):
        panel.select("bank")
    write_csv(str(tmp_path / "t.csv"), table_rows(panel.static.table))
    text = (tmp_path / "t.csv").read_text()
    assert text.startswith("static model,") and "glove-6b-50d" in text and "banks" in text


def test_all_models_tab_compares_every_indexed_model(qtbot, window, contextual_runs):
    panel = window.polysemy
    for kind in ("bert", "gpt"):
        with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
            window.session.load(str(contextual_runs[kind][0]))
    panel.sentences.setPlainText("She played the piano on stage.\nHe drove the truck past the piano shop.")
    panel.indexer.index_all()
    assert panel.indexer.queue == ["gpt"]  # one build at a time: the second waits
    qtbot.waitUntil(lambda: {"bert", "gpt"} <= set(panel.indexer.indexes), timeout=180_000)
    with qtbot.waitSignal(panel.context_runner.finished, timeout=60_000) as blocker:
        panel.select("piano")
    others = blocker.args[0].others
    assert [name for name, _, _ in others] == ["gpt"] and len(others[0][2]) == 2  # two typed occurrences
    text = panel.compare.toPlainText()
    assert "bert (layer 2)" in text and "gpt (layer 2)" in text and "piano" in text
    panel.views.setCurrentWidget(panel.compare)
    settle_layout()
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "polysemy-all-models-tiny.png"))


@pytest.mark.parametrize("scene", ["bank", "play"])
def test_scene_with_the_default_models_shows_static_and_contextual_neighbours(qtbot, window, scene):
    """The speaker's demo: the shipped default models on the default corpus (a small index, for speed)."""
    panel = window.polysemy
    panel.corpus = "default"
    panel.indexer.settings = {"per_word": 10, "max_words": 1500, "min_count": 3, "max_sentences": 3000}
    window.open_scene(scene)
    qtbot.waitUntil(lambda: len(window.session.models) == 7 and panel.model.currentText() == "minilm-mlm",
                    timeout=240_000)  # the scene opens on the strongest contextual model: MiniLM, adapted here
    assert "all-minilm-l6-v2" in window.session.models  # the real BERT as it ships, beside it
    qtbot.waitUntil(lambda: panel.fetcher.get("minilm-mlm", scene) is not None, timeout=120_000)
    with qtbot.waitSignal(panel.context_runner.finished, timeout=60_000) as blocker:
        panel.query_contextual()
    word, groups = blocker.args[0].word, blocker.args[0].groups
    assert word == scene and len(groups) == len(panel.sentence_list())
    assert [h.sentence for h in groups[0][1]] != [h.sentence for h in groups[1][1]]
    assert len({h.sentence for h in groups[0][1]}) == len(groups[0][1])  # each corpus sentence once
    cues = {"bank": ("river", "money"), "play": ("theatre", "match")}[scene]  # each sense's own neighbours
    senses = [" ".join(h.sentence.lower() for h in group[1]) for group in groups]
    if scene == "bank":  # the river's bank beside rivers (named or not), the money's beside money
        river = ("river", "seine", "rhine", "volga", "danube", "thames", "río", "nile", "shore", "stream", "canal")
        money = ("money", "loan", "cash", "fund", "deposit", "account", "credit", "interest", "payment", "financ")
        assert any(w in senses[0] for w in river) and not any(w in senses[1] for w in river), (cues, senses)
        assert any(w in senses[1] for w in money) and not any(w in senses[0] for w in money), (cues, senses)
    qtbot.waitUntil(lambda: panel.static.table.rowCount() == 2, timeout=30_000)  # GloVe and word2vec
    statics = {panel.static.table.item(r, 0).text() for r in range(2)}
    assert statics == {"glove-6b-50d", "word2vec-sgns"}
    settle_layout()
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / f"scene-{scene}-defaults.png"))
    panel.views.setCurrentIndex(1)  # the map
    with qtbot.waitSignal(panel.context_runner.finished, timeout=60_000):
        panel.query_contextual()
    settle_layout()
    window.grab().save(str(SHOTS / f"scene-{scene}-defaults-map.png"))
    # "All models": the other contextual models fetch the word's occurrences after the chosen one
    qtbot.waitUntil(lambda: all(panel.fetcher.get(n, scene) is not None for n in ("elmo-tiny", "gpt-tiny", "bert-tiny")),
                    timeout=240_000)
    assert not panel.indexer.indexes  # no whole-corpus index was built
    panel.views.setCurrentWidget(panel.compare)
    with qtbot.waitSignal(panel.context_runner.finished, timeout=60_000):
        panel.query_contextual()
    settle_layout()
    assert "elmo-tiny" in panel.compare.toPlainText() and "gpt-tiny" in panel.compare.toPlainText()
    # each model at the layer the lens opens it at (api.sense_layer): today every one at its last
    assert "bert-tiny (layer 4" in panel.compare.toPlainText() and "gpt-tiny (layer 4" in panel.compare.toPlainText()
    # beside each shipped model, its measured sense separation (the catalog's): the room sees which confuses them
    bert = window.session.models["bert-tiny"].info["sense_separation"]
    assert f"bert-tiny (layer 4 · senses {bert:.2f})" in panel.compare.toPlainText()
    assert "0.47 by chance" in panel.compare.toPlainText()
    window.grab().save(str(SHOTS / f"scene-{scene}-defaults-all-models.png"))
    panel.model.setCurrentText("bert-tiny")  # chosen by hand
    assert panel.layer.value() == 4 and "opens at its last layer, 4" in panel.layer.toolTip()


def bus_clicked(qtbot, window, contextual_runs):
    """bert loaded, two sentences typed, "bus" clicked and its occurrences fetched on demand: the lens."""
    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["bert"][0]))
    panel.sentences.setPlainText("The bus stopped near the market.\nShe played the piano on stage.")
    with qtbot.waitSignal(panel.fetcher.ready, timeout=60_000):
        panel.select("bus")
    return panel


def test_a_clicked_words_occurrences_come_on_demand_without_an_index(qtbot, window, contextual_runs):
    panel = bus_clicked(qtbot, window, contextual_runs)
    qtbot.waitUntil(lambda: "bus" in panel.results.toPlainText(), timeout=30_000)
    assert not panel.indexer.indexes and panel.fetcher.get("bert", "bus").sentences
    assert panel.progress.value() == 1000
    with qtbot.waitSignal(panel.fetcher.failed, timeout=30_000):
        panel.select("zebra")  # typed in no sentence above, and in no sentence of the corpus either
    assert "no sentence" in panel.message.text()


def test_an_answer_for_an_earlier_click_is_not_shown_while_the_new_words_occurrences_come(qtbot, window,
                                                                                         contextual_runs):
    import time

    from explorer.screenshot import pending

    panel = bus_clicked(qtbot, window, contextual_runs)
    qtbot.waitUntil(lambda: "bus" in panel.results.toPlainText() and not pending(panel), timeout=30_000)
    shown = []
    panel.context_runner.finished.connect(shown.append)
    def old_answer() -> ContextualAnswer:
        """An answer about "bus" that arrives while the occurrences of the next click are being encoded."""
        deadline = time.monotonic() + 10
        while not panel.fetcher.running and time.monotonic() < deadline:
            time.sleep(0.005)
        return ContextualAnswer("bus", 1, [], ("bert", "bus", "pca"), None, "old", [], [])

    panel.context_runner.submit(old_answer)
    panel.select("piano")  # its occurrences are not fetched yet: the answer about "bus" above is stale
    assert pending(panel)  # a screenshot waits for the occurrences being encoded
    with qtbot.waitSignal(panel.fetcher.ready, timeout=60_000):
        pass
    qtbot.waitUntil(lambda: bool(shown) and not pending(panel), timeout=30_000)
    assert all(result.word == "piano" for result in shown)
    assert "piano" in panel.message.text() and "“bus”" not in panel.message.text()


def test_switching_model_never_leaves_the_old_models_neighbours_under_the_new_name(qtbot, window, contextual_runs):
    """A talk's bank slide once showed elmo-tiny's neighbours labelled minilm-mlm: the step's model loaded
    last, its occurrences were still being encoded, and the slide was taken with the earlier model's answer."""
    from explorer.screenshot import pending

    panel = bus_clicked(qtbot, window, contextual_runs)
    qtbot.waitUntil(lambda: "bus" in panel.results.toPlainText() and not pending(panel), timeout=30_000)
    bert_answer = panel.results.toPlainText()
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["elmo"][0]))
    shown = []
    panel.shown.connect(lambda: shown.append((panel.model.currentText(), panel.results.toPlainText())))
    panel.model.setCurrentText("elmo")  # its occurrences of "bus" are not encoded yet
    assert panel.fetcher.running and panel.results.toPlainText() == ""
    assert "elmo" in panel.message.text()
    panel._maybe_shown()  # what the static column's answer calls, arriving meanwhile: not the whole slide yet
    assert not shown
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        pass
    model, text = shown[-1]
    assert model == "elmo" and "bus" in text and text != bert_answer


def test_the_lens_opens_on_the_catalogs_best_contextual_model_whatever_loads_first(qtbot, window, contextual_runs,
                                                                                    monkeypatch):
    """At start the lens showed bert-tiny, the first model to finish loading, instead of minilm-mlm."""
    import engine.api

    monkeypatch.setattr(engine.api, "preferred_models", lambda role: ["elmo", "bert"] if role == "contextual" else [])
    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["bert"][0]))
    assert panel.model.currentText() == "bert"
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["elmo"][0]))
    assert panel.model.currentText() == "elmo"  # the catalog ranks it first


def test_a_scene_waits_for_its_own_model_instead_of_encoding_with_a_stand_in(qtbot, window, contextual_runs):
    """A talk's bank step encoded "bank" with elmo-tiny (loaded first) before minilm-mlm arrived: CPU spent
    on an answer nobody sees, while the step waited for its own."""
    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["bert"][0]))
    asked = []  # every fetch the lens starts: (word, model names)
    fetch = panel.fetcher.fetch
    panel.fetcher.fetch = lambda handles, word, corpus: (asked.append((word, tuple(handles))), fetch(handles, word, corpus))
    window.session.load(str(contextual_runs["elmo"][0]))  # as a talk or a scene does: its models, then the scene
    panel.apply_scene(check_scene({"panel": "polysemy", "sentences": ["The bus stopped near the market."], "selection": "bus",
                       "models": ["elmo"], "contextual_model": "elmo", "layer": None, "view": "neighbours"}, "a test's scene"))
    assert "waiting for elmo" in panel.message.text() and not asked
    # the first screen's "bank", still being searched with bert, is given up: nobody will see it
    assert not panel.fetcher.running or panel.fetcher.job.stop.is_set()
    with qtbot.waitSignal(panel.context_runner.finished, timeout=60_000) as answer:
        pass
    assert answer.args[0].word == "bus" and "elmo" in panel.message.text() and panel.model.currentText() == "elmo"
    assert asked and asked[0] == ("bus", ("elmo",))  # its own model first, never bert as a stand-in before it


def test_a_static_view_encodes_no_occurrences(qtbot, window, contextual_runs):
    """A talk's word2vec-and-GloVe step hides the contextual column: it encoded "play" with minilm-mlm anyway."""
    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["bert"][0]))
    panel.apply_scene(check_scene({"panel": "polysemy", "sentences": ["The bus stopped near the market."], "selection": "bus",
                       "models": [], "contextual_model": None, "layer": None, "view": "static"}, "a test's scene"))
    qtbot.waitUntil(lambda: not panel._debounce.isActive(), timeout=5_000)  # the typed sentences are read
    assert not panel.fetcher.running and not panel.fetcher.found and not panel.context_runner.busy
    panel.apply_scene(dataclasses.replace(panel.current_scene(), view="neighbours"))  # the column shown again: it answers
    with qtbot.waitSignal(panel.context_runner.finished, timeout=60_000):
        pass
    assert "bus" in panel.results.toPlainText()


def test_a_word_typed_many_times_numbers_and_lists_the_first_twenty_and_exports_all(qtbot, window, contextual_runs):
    """A text with the word 60 times: every occurrence is on the map, the first 20 numbered and listed with
    their corpus neighbours, a line says how many more; the CSV export has all 60 (a text of "bank " × 400 made
    400 numbers on the map and a 2,000-line page: 6.6 s of the GUI thread beside busy workers)."""
    from explorer.panels.polysemy.panel import GROUPS_SHOWN
    from explorer.widgets.occurrence_map import NUMBERED

    panel = window.polysemy
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(str(contextual_runs["bert"][0]))
    lines = [f"{who} {did} the bus ." for who in ("she", "he", "we", "they", "i", "you")
             for did in ("took", "missed", "saw", "drove", "left", "caught", "stopped", "washed", "sold", "found")]
    panel.sentences.setPlainText("\n".join(lines))
    with qtbot.waitSignal(panel.context_runner.finished, timeout=120_000) as blocker:
        panel.select("bus")
    occ_map = blocker.args[0].occurrence_map
    assert occ_map.typed.sum() == 60 and panel.map.scatter.data.size == occ_map.points.shape[0]
    assert len(panel.map.labels) == NUMBERED == 20 and "first 20 of 60 typed occurrences numbered" in panel.map.title.toPlainText()
    text = panel.results.toPlainText()
    assert f"{GROUPS_SHOWN}. " in text and f"{GROUPS_SHOWN + 1}. " not in text and "40 more typed occurrences" in text
    panel.views.setCurrentIndex(1)  # the map
    settle_layout()
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "polysemy-map-many-typed.png"))
    groups = panel._last_groups
    assert len(groups) == 60 and len(panel.contextual_rows()) - 1 == sum(len(hits) for _, hits in groups) > 60
