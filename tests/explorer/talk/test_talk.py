"""Talk mode: decks as plain JSON, the talk window (prepared once, stepped with keys and a clicker,
big type), slides exported as PNGs and a PDF, and a deck built from the main window."""

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from engine import api
from explorer.scenes import SceneError, check_answerable, check_scene
from explorer.talk.deck import check_deck, load_deck, save_deck
from explorer.talk.window import BODY_PX, EXPORT_SIZE
from tests.conftest import settle_layout
from tests.engine.finetune.test_one_wrapper import tiny_hf_folder


def test_the_built_in_deck_tells_the_story_with_the_apps_own_models():
    deck = load_deck()
    panels = [(s.panel, s.view) for s in deck.steps]
    assert panels[0] == ("predictions", "probability")  # a language model scores a sentence and its shuffles
    assert ("polysemy", "static") in panels and ("attention", "head") in panels and panels[-2] == ("predictions", "masked")
    analogy = panels.index(("neighbours", "neighbours"))  # right after one list for "play": the vectors still add up
    assert panels[analogy - 1] == ("polysemy", "static") and deck.steps[analogy].selection == "king - man + woman"
    window = panels.index(("predictions", "next"))  # after ELMo's senses: what its next word rests on, against
    assert deck.steps[window - 1].contextual_model == "elmo-tiny"  # the NNLM's window of a few words
    assert (deck.steps[window].lab, deck.steps[window].compare) == ("attribution", "nnlm-tiny")
    gpt = window + 1  # then, before BERT: GPT's next word, two GPTs side by side
    assert panels[gpt] == ("predictions", "next") and panels[gpt + 1][0] == "polysemy"
    assert deck.steps[gpt].contextual_model == "minilm-gpt" and deck.steps[gpt].compare == "gpt-tiny"
    masked = deck.steps[-3]  # BERT's blank beside ELMo's: one reads both sides at once, the other one side per LM
    assert (masked.contextual_model, masked.compare) == ("minilm-mlm", "elmo-tiny")
    assert deck.steps[-1].panel == "curves"  # pretrained vs from-scratch fine-tuning curves, shipped
    curves = api.read_curves(deck.steps[-1].curves)
    assert {c.strategy for c in curves.runs} >= {"full", "scratch"} and all(len(c.values) >= 3 for c in curves.runs)
    assert all(s.title and len(s.title) < 80 for s in deck.steps)  # one line a speaker reads out
    contextual = [s.contextual_model for s in deck.steps if s.panel == "polysemy" and s.view != "static"]
    assert contextual == ["elmo-tiny", "minilm-mlm"]
    assert all(s.contextual_model in s.models for s in deck.steps if s.contextual_model)


def test_bad_decks_are_refused_with_a_reason(tmp_path):
    with pytest.raises(SceneError, match="list of 'steps'"):
        check_deck({"title": "x"})
    with pytest.raises(SceneError, match="no steps"):
        check_deck({"steps": []})
    with pytest.raises(SceneError, match="unknown panel"):
        check_deck({"steps": [{"panel": "slides", "sentences": []}]})
    with pytest.raises(SceneError, match="step 2.*sentence must be text"):
        check_deck({"steps": [{"scene": "bank"}, {"panel": "polysemy", "sentences": [3]}]})
    with pytest.raises(SceneError, match="no scene"):
        check_deck({"steps": [{"scene": "nowhere"}]})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(SceneError, match="not a deck file"):
        load_deck(bad)
    with pytest.raises(SceneError, match="'view' 'heads' is not a view of the attention panel"):
        check_scene({"panel": "attention", "sentences": ["a b"], "view": "heads"}, "x.json")
    # what a step given on the command line asks that a fresh app cannot do is said before any window
    with pytest.raises(SceneError, match="step 1: 'models' names 'bert-tny', which is neither a model of the app"):
        check_answerable(check_scene({"panel": "predictions", "sentences": ["a [MASK]"], "models": ["bert-tny"]},
                                     "step 1"), "step 1")
    with pytest.raises(SceneError, match="'contextual_model' 'minilm-mlm' is not one of its 'models' \\(bert-tiny\\)"):
        check_answerable(check_scene({"panel": "predictions", "sentences": ["a [MASK]"], "models": ["bert-tiny"],
                                      "contextual_model": "minilm-mlm"}, "x"), "step 1")
    with pytest.raises(SceneError, match="'selection' 'bnak' is not a word of its sentences"):
        check_answerable(check_scene({"panel": "polysemy", "sentences": ["The bank of the river."],
                                      "selection": "bnak"}, "x"), "x.json")
    check_answerable(check_scene({"panel": "polysemy", "sentences": ["The Bank of the river."], "selection": "bank",
                                  "models": ["glove-6b-50d", str(tmp_path)], "contextual_model": tmp_path.name}, "x"),
                     "x.json")  # a folder is a model, named by its folder's name
    deck = check_deck({"steps": [{"panel": "predictions", "view": "masked", "sentences": ["a \ud800 [MASK]"]}]})
    assert deck.steps[0].sentences == ["a \ufffd [MASK]"]  # a lone surrogate (valid JSON) is replaced
    assert deck.steps[0].title.startswith("Predictions")  # a step without a title gets one


def test_a_deck_round_trips_and_a_built_in_scene_can_be_a_step(tmp_path):
    deck = {"title": "mine", "steps": [{"scene": "bank", "title": "Banks", "layer": 2},
                                       {"panel": "neighbours", "sentences": [], "selection": "play",
                                        "models": ["glove-6b-50d"], "title": "Static"}]}
    save_deck(tmp_path / "deck.json", check_deck(deck))
    back = load_deck(tmp_path / "deck.json")
    assert [s.title for s in back.steps] == ["Banks", "Static"]
    assert back.steps[0].selection == "bank" and back.steps[0].layer == 2  # the override kept
    assert json.loads((tmp_path / "deck.json").read_text(encoding="utf-8"))["title"] == "mine"


@pytest.fixture
def bert_deck(contextual_runs):
    bert = str(contextual_runs["bert"][0])
    return {"title": "test talk", "steps": [
        {"panel": "predictions", "view": "masked", "sentences": ["the cat sat on the [MASK] ."], "models": [bert],
         "contextual_model": "bert", "title": "Fill the blank"},
        {"panel": "attention", "view": "head", "sentences": ["the cat sat on the mat ."], "models": [bert],
         "contextual_model": "bert", "layer": 0, "title": "Heads"},
        {"panel": "neighbours", "sentences": [], "selection": "cat", "models": [bert], "contextual_model": "bert",
         "title": "No static model here"},
    ]}


@pytest.fixture
def talk(qtbot, bert_deck):
    from explorer.session import Session
    from explorer.talk.window import TalkWindow

    window = TalkWindow(Session(), check_deck(bert_deck))
    qtbot.addWidget(window)
    window.resize(EXPORT_SIZE)
    window.show()
    yield window
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)


def key(qtbot, widget, k, text=""):
    qtbot.keyClick(widget, k, Qt.KeyboardModifier.NoModifier)


def test_a_talk_prepares_every_step_once_then_steps_with_keys_and_a_clicker(qtbot, talk):
    assert talk.counter.text() == "1 / 3" and talk.title.text() == "Fill the blank"
    assert talk.font().pixelSize() >= BODY_PX >= 28  # big type, inherited by every panel
    assert talk.panels[0].masked.results[0].font().pixelSize() >= 28
    assert talk.panels[0].masked.chip_scroll.height() > 28 + 10  # the word chips' row fits their big type
    # every step computes at once; step 3 has no static model: once loaded, it is as ready as it gets
    qtbot.waitUntil(lambda: talk.all_ready, timeout=60_000)
    assert "Load GloVe, word2vec or a vectors file" in talk.panels[2].message.text()  # it says why
    assert "bert" in talk.panels[0].masked.results[0].toPlainText()
    assert talk.panels[1].result is not None  # the attention step computed before it was shown
    talk.stack.setFocus()
    key(qtbot, talk.stack, Qt.Key.Key_Right)
    assert talk.current == 1 and talk.counter.text() == "2 / 3"
    key(qtbot, talk.stack, Qt.Key.Key_Space)
    assert talk.current == 2
    key(qtbot, talk.stack, Qt.Key.Key_Right)  # past the end: stays on the last step
    assert talk.current == 2
    key(qtbot, talk.stack, Qt.Key.Key_PageUp)  # a clicker's back
    assert talk.current == 1
    key(qtbot, talk.stack, Qt.Key.Key_Home)
    assert talk.current == 0
    key(qtbot, talk.stack, Qt.Key.Key_End)
    assert talk.current == 2
    qtbot.keyClicks(talk.stack, "2")
    qtbot.waitUntil(lambda: talk.current == 1, timeout=3_000)  # a number jumps to that step
    talk.go(0)
    field = talk.panels[0].masked.text
    field.setFocus()
    key(qtbot, field, Qt.Key.Key_Right)  # typing: the arrow moves the cursor, not the talk
    assert talk.current == 0
    key(qtbot, field, Qt.Key.Key_PageDown)  # the clicker still steps
    assert talk.current == 1
    with qtbot.waitSignal(talk.left, timeout=2_000):
        key(qtbot, talk.stack, Qt.Key.Key_Escape)
    assert not talk.isVisible()


def test_a_talk_exports_every_step_as_a_slide(qtbot, talk, tmp_path):
    qtbot.waitUntil(lambda: talk.all_ready, timeout=60_000)
    paths = talk.export(tmp_path / "slides")
    assert [p.name for p in paths] == ["step-01.png", "step-02.png", "step-03.png"]
    image = QImage(str(paths[0]))
    assert (image.width(), image.height()) == (1920, 1080)
    assert (tmp_path / "slides" / "talk.pdf").stat().st_size > 10_000
    assert talk.current == 2  # the export walked through the steps


def test_the_main_window_builds_a_deck_from_its_views(qtbot, contextual_runs, tmp_path):
    from explorer.main_window import MainWindow
    from explorer.session import Session
    from explorer.talk.editor import DeckEditor

    window = MainWindow(Session())
    qtbot.addWidget(window)
    bert = str(contextual_runs["bert"][0])
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        window.session.load(bert)
    window.tabs.setCurrentWidget(window.predictions)
    window.predictions.masked.text.setText("a [MASK] b")
    window.talk_mode.add_view()
    window.tabs.setCurrentWidget(window.attention)
    window.attention.sentence.setText("the cat sat")
    window.talk_mode.add_view()
    steps = window.talk_mode.deck.steps
    assert [s.panel for s in steps] == ["predictions", "attention"]
    assert steps[0].sentences == ["a [MASK] b"] and steps[0].models == [bert]  # the user's run, by path
    editor = DeckEditor(window.talk_mode.deck)
    qtbot.addWidget(editor)
    editor.list.setCurrentRow(1)
    editor.move_step(-1)
    assert [s.panel for s in window.talk_mode.deck.steps] == ["attention", "predictions"]
    editor.list.item(0).setText("Where words look")
    assert window.talk_mode.deck.steps[0].title == "Where words look"
    editor.save_file(str(tmp_path / "mine.json"))
    assert [s.title for s in load_deck(tmp_path / "mine.json").steps][0] == "Where words look"
    editor.list.setCurrentRow(0)
    editor.delete()
    assert [s.panel for s in window.talk_mode.deck.steps] == ["predictions"]
    window.close()


def test_a_view_no_talk_could_show_is_not_added_to_the_deck_and_says_why(qtbot):
    """"Add this view to the deck" on the Run history with no run open added a step the talk refused when the deck
    was presented: an exception from the deck editor's Present (found by bench/speed/action_gaps.py)."""
    from explorer.main_window import MainWindow
    from explorer.session import Session

    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.tabs.setCurrentWidget(window.history)
    window.talk_mode.add_view()
    assert window.talk_mode.deck.steps == []
    assert window.statusBar().currentMessage() == (
        "Not added to the deck: the Run history shows no run yet: open one first")
    window.tabs.setCurrentWidget(window.attention)
    window.talk_mode.add_view()  # a view a talk can show is added
    assert [step.panel for step in window.talk_mode.deck.steps] == ["attention"]
    window.close()


def test_a_step_with_a_word_longer_than_a_line_keeps_the_talk_window_on_the_screen(qtbot):
    """A view of a pasted run of 3,000 letters, added to the deck, titled its step with all of them: the talk
    window, laid out to fit that title on one line, was 93,000 px wide (the chaos bench). The made-up title quotes
    the sentence's start, and a title still too long for a line (the speaker's own) is cut at the window's edge."""
    from explorer.main_window import MainWindow
    from explorer.session import Session
    from explorer.talk.deck import TITLE_WORDS_AT_MOST
    from explorer.talk.window import TalkWindow

    long = "a" * 3000
    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.tabs.setCurrentWidget(window.attention)
    window.attention.sentence.setText(long)
    window.talk_mode.add_view()
    (step,) = window.talk_mode.deck.steps
    assert step.sentences == [long] and len(step.title) < TITLE_WORDS_AT_MOST + 40 and "…" in step.title
    step.title = "T" + long  # as the deck editor lets a speaker write it
    talk = TalkWindow(window.session, window.talk_mode.deck)
    qtbot.addWidget(talk)
    talk.resize(EXPORT_SIZE)
    talk.show()
    qtbot.waitUntil(lambda: talk.panels[0] is not None)
    from tests.conftest import settle_layout

    settle_layout()
    assert talk.size() == EXPORT_SIZE and talk.title.width() < EXPORT_SIZE.width()
    talk.close()
    window.close()


def test_word2bert_talk_with_a_bad_deck_says_why_and_exits(tmp_path, capsys):
    from explorer.app import run

    bad = tmp_path / "deck.json"
    bad.write_text('{"steps": []}', encoding="utf-8")
    assert run(["word2bert", "--talk", str(bad)]) == 2
    assert "no steps" in capsys.readouterr().err


def test_the_curves_step_draws_pretrained_against_scratch_big_on_black(qtbot, tmp_path):
    from explorer.panels.curves import TALK_WIDTH, CurvesPanel
    from explorer.session import Session

    curves = api.FinetuneCurves("topics", "bert", "accuracy", [
        api.Curve("pretrained", "full", [32.0, 64.0, 96.0], [0.5, 0.8, 0.9]),
        api.Curve("scratch", "scratch", [32.0, 64.0, 96.0], [0.3, 0.4, 0.6])], made_by="a test")
    path = tmp_path / "c.json"
    path.write_text(curves.to_json(), encoding="utf-8")
    panel = CurvesPanel(Session())
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.shown, timeout=10_000):
        panel.apply_scene(check_deck({"steps": [{"panel": "curves", "curves": str(path)}]}).steps[0])
    lines = panel.plot.getPlotItem().listDataItems()
    assert [list(item.getData()[1]) for item in lines] == [[0.5, 0.8, 0.9], [0.3, 0.4, 0.6]]
    assert "pre-training buys +30.0 points" in panel.summary.text() and "accuracy" in panel.heading.text()
    assert panel.current_scene().curves == str(path)
    panel.set_presenting(True)
    assert panel.controls.isHidden()
    assert all(item.opts["pen"].width() == TALK_WIDTH for item in panel.plot.getPlotItem().listDataItems())
    with qtbot.waitSignal(panel.runner.failed, timeout=10_000):
        panel.show_curves(str(tmp_path / "nowhere.json"))
    assert "no curves file" in panel.heading.text() and not panel.plot.getPlotItem().listDataItems()


def test_a_talk_step_scores_with_its_own_models_only(qtbot, contextual_runs):
    from explorer.panels.predictions.panel import PredictionsPanel
    from explorer.session import Session

    session = Session()
    for kind in ("bert", "gpt"):
        with qtbot.waitSignal(session.modelsChanged, timeout=60_000):
            session.load(str(contextual_runs[kind][0]))
    panel = PredictionsPanel(session)
    qtbot.addWidget(panel)
    panel.set_presenting(True)
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        panel.apply_scene(check_scene({"panel": "predictions", "view": "probability", "sentences": ["the cat sat ."],
                           "models": ["gpt"]}, "a test's scene"))
    table = panel.probability.table
    assert [table.horizontalHeaderItem(c).text() for c in range(1, table.columnCount())] == ["gpt\n(log p)"]


def test_a_talks_masked_step_names_a_second_model_only_when_it_compares(qtbot, contextual_runs, tmp_path):
    """On a projector a greyed-out 'compare with bert' reads as compared: a step of one model shows no
    compare box; a step that compares shows it with the second model's bars."""
    from explorer.panels.predictions.panel import PredictionsPanel
    from explorer.session import Session

    session = Session()
    other = tiny_hf_folder(tmp_path / "hf-bert", contextual_runs, decoder=False)
    for path in (contextual_runs["bert"][0], other):
        with qtbot.waitSignal(session.modelsChanged, timeout=60_000):
            session.load(str(path))
    panel = PredictionsPanel(session)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_presenting(True)
    scene = {"panel": "predictions", "view": "masked", "sentences": ["he drove the [MASK] to town"],
             "models": ["bert"], "contextual_model": "bert"}
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        panel.apply_scene(check_scene(scene, "a test's scene"))
    view = panel.masked
    assert not view.compare.isVisible() and not view.model2.isVisible()
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        panel.apply_scene(check_scene({**scene, "models": ["bert", "hf-bert"], "compare": "hf-bert"}, "a scene"))
    assert view.compare.isVisible() and view.model2.isVisible() and view.model2.currentText() == "hf-bert"
    panel.set_presenting(False)  # the app's own tab: the box is there to be ticked
    view.compare.setChecked(False)
    assert view.compare.isVisible() and view.model2.isVisible() and not view.model2.isEnabled()


def test_a_talks_polysemy_slide_shows_every_static_model_and_gives_the_rest_to_the_contextual_one(
        qtbot, contextual_runs, tmp_path):
    from explorer.session import Session
    from explorer.talk.window import TalkWindow

    bert = str(contextual_runs["bert"][0])
    deck = check_deck({"title": "bank", "steps": [
        {"panel": "polysemy", "view": "neighbours", "sentences": ["the cat sat on the mat .", "a cat ran ."],
         "selection": "cat", "models": ["glove-6b-50d", "word2vec-sgns", bert], "contextual_model": "bert",
         "title": "Static and contextual"}]})
    window = TalkWindow(Session(), deck)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.all_ready, timeout=120_000)
    window.export(tmp_path / "slides")  # laid out at 1920×1080 and grabbed: what the slide shows
    panel = window.panels[0]
    table = panel.static.table
    assert table.rowCount() == 2
    for r in range(2):  # each static model's whole row is on the slide (the second was once below the fold)
        rect = table.visualRect(table.model().index(r, 1))
        assert rect.height() < 2 * table.fontMetrics().height()  # one line: the list is not wrapped
        assert rect.bottom() <= table.viewport().height(), (r, rect, table.viewport().height())
    assert panel.contextual_box.height() > 0.6 * window.height()  # the contextual neighbours get the room
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)


def test_a_talks_static_column_lists_only_its_own_steps_models(qtbot, contextual_runs, tmp_path):
    """The talk's "bank" step names GloVe and word2vec; nnlm-tiny, loaded for the first step, stood in its static
    column too, with neighbours ("parmalat, regiments, poll") no speaker would put on a projector. Alone on its slide
    (a static step), the column shows its lists whole, longer and larger: it showed two lines cut at "…" above two
    thirds of empty screen."""
    from explorer.session import Session
    from explorer.talk.window import TalkWindow

    bert = str(contextual_runs["bert"][0])
    deck = check_deck({"title": "bank", "steps": [
        {"panel": "polysemy", "view": "static", "sentences": ["the cat sat on the mat ."], "selection": "cat",
         "models": ["word2vec-sgns"], "title": "word2vec alone"},
        {"panel": "polysemy", "view": "neighbours", "sentences": ["the cat sat on the mat .", "a cat ran ."],
         "selection": "cat", "models": ["glove-6b-50d", bert], "contextual_model": "bert",
         "title": "GloVe and a BERT"}]})
    window = TalkWindow(Session(), deck)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.all_ready, timeout=120_000)
    assert {"word2vec-sgns", "glove-6b-50d"} <= set(window.session.models)  # both loaded, for one step each

    def rows(panel):
        table = panel.static.table
        return [table.item(r, 0).text() for r in range(table.rowCount())]

    assert rows(window.panels[0]) == ["word2vec-sgns"] and rows(window.panels[1]) == ["glove-6b-50d"]
    window.export(tmp_path / "slides")  # laid out at 1920×1080 and grabbed: what the slides show
    from explorer.panels.polysemy.static import ALONE_NEIGHBOURS, NEIGHBOURS

    alone, below = window.panels[0].static.table, window.panels[1].static.table
    def listed(table):  # the similarities after the words ("seen 1,234×" has a comma too)
        import re

        return len(re.findall(r" -?\d\.\d\d(?:,|$)", table.item(0, 1).text()))

    assert listed(alone) == ALONE_NEIGHBOURS and listed(below) == NEIGHBOURS
    rect = alone.visualRect(alone.model().index(0, 1))
    assert rect.height() >= 2 * alone.fontMetrics().height()  # wrapped, not cut at "…"
    assert rect.bottom() <= alone.viewport().height()
    assert alone.font().pixelSize() > below.font().pixelSize() == window.font().pixelSize()
    window.panels[0].set_presenting(False)  # the app's own tab again: its own type and list
    assert alone.font().pixelSize() == window.panels[0].font().pixelSize()
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)


def _app(args, tmp_path):
    """The app as its user starts it, in a process of its own (its window and workers end with it)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1", "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "explorer", *args], cwd=Path(__file__).resolve().parents[3],
                          env=env, capture_output=True, text=True, timeout=300)


def test_an_export_with_a_step_that_cannot_be_answered_writes_the_rest_and_exits_with_the_reason(
        tmp_path, contextual_runs):
    import json

    bert = str(contextual_runs["bert"][0])
    deck = tmp_path / "deck.json"
    deck.write_text(json.dumps({"title": "t", "steps": [
        {"panel": "predictions", "view": "masked", "sentences": ["the cat sat on the [MASK] ."], "models": [bert],
         "contextual_model": bert, "title": "fine"},
        {"panel": "polysemy", "sentences": ["The zyxwq sat on the bank."], "selection": "zyxwq", "models": [bert],
         "contextual_model": bert, "title": "a word no corpus sentence holds"}]}), encoding="utf-8")
    done = _app(["--no-default-models", "--talk", str(deck), "--export", str(tmp_path / "out")], tmp_path)
    assert done.returncode == 1
    err = done.stderr
    assert "step 2 (a word no corpus sentence holds)" in err and "zyxwq" in err
    assert len(list((tmp_path / "out").glob("*.png"))) == 2  # every step written, the failed one with its message


def test_a_talk_closed_from_its_title_bar_is_let_go_with_its_panels(qtbot, bert_deck):
    """Closing the talk window any way (not only Esc) gives the main window back and frees the talk: its
    panels hold answers and a copy of the session's models per step (a closed talk stayed the main window's)."""
    import gc
    import weakref

    from explorer.main_window import MainWindow
    from explorer.session import Session
    from explorer.tasks import wait_for_workers

    window = MainWindow(Session())
    qtbot.addWidget(window)
    gone = weakref.ref(window.talk_mode.present(check_deck(bert_deck), full_screen=False))
    qtbot.waitUntil(lambda: window.talk_mode.shown.panels[0] is not None, timeout=30_000)
    panel = weakref.ref(window.talk_mode.shown.panels[0])
    window.talk_mode.shown.close()  # the window manager's close button, as opposed to Esc
    assert window.talk_mode.shown is None and window.isVisible()
    assert wait_for_workers(30_000)

    def freed() -> bool:  # (the deferred deletion of the closed window: a panel per turn of the event loop)
        gc.collect()
        return gone() is None and panel() is None

    qtbot.waitUntil(freed, timeout=5_000)
    window.close()


def test_a_closed_talk_is_deleted_a_panel_per_turn_of_the_event_loop(qtbot, bert_deck):
    """A talk window's steps are whole panels; deleted all at once they held the GUI thread up to 0.6 s beside two
    busy cores (bench/robustness/chaos.py --events). Other work (here a timer) runs between two panels' deletions."""
    from PySide6.QtCore import QTimer

    from explorer.main_window import MainWindow
    from explorer.session import Session
    from explorer.tasks import wait_for_workers

    window = MainWindow(Session())
    qtbot.addWidget(window)
    talk = window.talk_mode.present(check_deck(bert_deck), full_screen=False)
    qtbot.waitUntil(lambda: all(p is not None for p in talk.panels), timeout=30_000)
    assert wait_for_workers(30_000)
    order: list[str] = []
    for p in talk.panels:
        p.destroyed.connect(lambda *_: order.append("panel"))
    talk.destroyed.connect(lambda *_: order.append("window"))
    ticker = QTimer(interval=0)
    ticker.timeout.connect(lambda: order.append("tick"))
    ticker.start()
    talk.close()
    assert window.talk_mode.shown is None
    qtbot.waitUntil(lambda: "window" in order, timeout=5_000)
    ticker.stop()
    deletions = [(i, what) for i, what in enumerate(order) if what != "tick"]
    assert [what for _, what in deletions] == ["panel"] * len(check_deck(bert_deck).steps) + ["window"]
    assert all(b - a > 1 for (a, _), (b, _) in zip(deletions, deletions[1:], strict=False))  # a tick between each
    window.close()


def test_a_talk_is_prepared_a_turn_at_a_time_with_the_windows_timers_between(qtbot, bert_deck, monkeypatch):
    """Each turn of a talk's preparation (a step's panel made; the next turn, given its scene and asked for its
    answers) is followed by the window's timers. Turns chained as posted events ran two panels between two of a
    timer's turns (Qt's glib loop runs timers once per pass of posted events): the chaos bench's stalls after a
    talk opened."""
    from PySide6.QtCore import QTimer

    from explorer.session import Session
    from explorer.talk import window as talk_window
    from explorer.tasks import wait_for_workers

    order: list[str] = []
    made = talk_window.make_panel

    def making(name, session):
        panel = made(name, session)
        order.append("make")
        apply = panel.apply_scene

        def applying(scene):
            order.append("apply")
            apply(scene)

        panel.apply_scene = applying
        return panel

    monkeypatch.setattr(talk_window, "make_panel", making)
    monkeypatch.setattr("explorer.user_input._LAST", [float("-inf")])  # (no input: nothing waits for a pause)
    deck = dict(bert_deck, steps=bert_deck["steps"] * 2)  # six steps: five prepared after the first
    talk = talk_window.TalkWindow(Session(), check_deck(deck))
    qtbot.addWidget(talk)
    assert order == ["make", "apply"]  # the first step at once: it is on screen
    ticker = QTimer(interval=0)
    ticker.timeout.connect(lambda: order.append("tick"))
    ticker.start()
    qtbot.waitUntil(lambda: order.count("apply") == 6, timeout=30_000)
    qtbot.wait(20)
    ticker.stop()
    turns = [i for i, what in enumerate(order) if what != "tick"][2:]
    assert [order[i] for i in turns] == ["make", "apply"] * 5
    assert all(b - a > 1 for a, b in zip(turns, turns[1:], strict=False))  # a tick between each two turns
    talk.close()
    assert wait_for_workers(30_000)


def test_a_talks_later_steps_wait_for_a_pause_in_the_users_input(qtbot, bert_deck, monkeypatch):
    """While the user clicks and types (here every 100 ms), only the step on screen is built: the others wait for a
    pause in the input, and a step the speaker goes to is built at once. A step counts as ready only once its panel
    has its scene."""
    from PySide6.QtCore import QTimer

    from explorer import user_input
    from explorer.session import Session
    from explorer.talk.window import TalkWindow
    from explorer.tasks import wait_for_workers

    monkeypatch.setattr(user_input, "_LAST", [float("-inf")])
    user_input.note_input()
    clicks = QTimer(interval=100)
    clicks.timeout.connect(user_input.note_input)
    clicks.start()
    talk = TalkWindow(Session(), check_deck(bert_deck))
    qtbot.addWidget(talk)
    talk.show()
    qtbot.wait(1500)
    assert talk.panels[0] is not None and talk.panels[1:] == [None, None]
    key(qtbot, talk.stack, Qt.Key.Key_Right)
    assert talk.current == 1 and talk.panels[1] is not None and talk.panels[2] is None
    talk._make(2)  # a step's panel made, not yet given its scene: what it shows is not the step's answer
    talk.panels[2].shown.emit()
    assert 2 not in talk.done and not talk.all_ready
    clicks.stop()  # a pause: the rest is prepared
    qtbot.waitUntil(lambda: 2 in talk.done, timeout=10_000)
    qtbot.waitUntil(lambda: talk.all_ready, timeout=30_000)
    talk.close()
    assert wait_for_workers(30_000)


def test_a_talks_plots_stay_on_its_black_whatever_the_windows_theme(qtbot, contextual_runs):
    """A plot in a talk was a white panel on the black slide; the map view, made when the step first shows its map,
    is coloured too, and a change of the window's theme during the talk leaves the talk's plots alone."""
    from PySide6.QtWidgets import QApplication

    from explorer.session import Session
    from explorer.talk.window import TalkWindow
    from explorer.theme import apply_theme
    from explorer.widgets.loss_plot import LossPlot
    from explorer.widgets.plot_view import plot_views

    bert = str(contextual_runs["bert"][0])
    deck = check_deck({"title": "maps", "steps": [
        {"panel": "polysemy", "view": "map", "sentences": ["the cat sat on the mat .", "a cat ran ."],
         "selection": "cat", "models": [bert], "contextual_model": "bert", "title": "A map"}]})
    window = TalkWindow(Session(), deck)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.all_ready, timeout=120_000)
    outside = LossPlot(y_label="loss", empty_text="nothing yet")  # a plot of the main window's theme, shown
    qtbot.addWidget(outside)
    outside.show()

    def colours(view):
        axis = view.getPlotItem().getAxis("left")
        return view.backgroundBrush().color().name(), axis.textPen().color().name()

    try:
        for theme, background in (("dark", "#1e1e1e"), ("light", "#ffffff")):
            apply_theme(QApplication.instance(), theme)
            views = plot_views(within=window)
            assert views and all(colours(view) == ("#000000", "#ffffff") for view in views), theme
            assert colours(outside)[0] == background
    finally:
        apply_theme(QApplication.instance(), "light")
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)


def test_no_tab_bar_of_a_talks_lab_steps_scrolls_at_its_type_size(qtbot, contextual_runs):
    """At a talk's type size on a 1920 × 1080 screen, the prediction bars above each lab page have room for four
    lines, and the tab bars of a lab step (the lab's four pages, and any other a step shows) show every tab whole: no scroll arrows hiding a page from the room (four long page names once scrolled)."""
    from PySide6.QtWidgets import QTabWidget, QToolButton

    from explorer.session import Session
    from explorer.talk.window import TalkWindow

    bert = str(contextual_runs["bert"][0])
    steps = [{"panel": "predictions", "view": "masked", "sentences": ["the cat sat on the [MASK] ."], "models": [bert],
              "contextual_model": "bert", "lab": lab, "title": f"The lab: {lab}"}
             for lab in ("grid", "trace", "attribution", "heads")]
    steps.append({**steps[-1], "head": [1, 1], "title": "The lab: one head, token by token"})
    window = TalkWindow(Session(), check_deck({"title": "lab talk", "steps": steps}))
    qtbot.addWidget(window)
    window.resize(EXPORT_SIZE)
    window.show()
    qtbot.waitUntil(lambda: window.all_ready, timeout=60_000)
    scrolled = {}
    for i in range(len(steps)):
        window.go(i)
        settle_layout()
        masked = window.panels[i].masked  # the answer above the lab keeps its room whichever page is open (the
        # heads page, the tallest, once squeezed the bars above a tracing step to a strip: the answer cut off)
        assert masked.result_areas[0].viewport().height() >= 4 * masked.result_areas[0].fontMetrics().height(), steps[i]
        bars = [tabs.tabBar() for tabs in window.panels[i].findChildren(QTabWidget) if tabs.tabBar().isVisible()]
        assert window.panels[i].masked.lens.tabs.tabBar() in bars  # the lab's (a talk hides the view's own)
        for bar in bars:
            arrows = [b for b in bar.findChildren(QToolButton) if b.isVisible()]
            if arrows or bar.tabRect(bar.count() - 1).right() > bar.width():
                scrolled[f"step {i + 1}"] = [bar.tabText(t) for t in range(bar.count())]
    assert not scrolled, f"tab bars that scroll at a talk's type size: {scrolled}"
    # a talk's heads step gives the table the room: no choice of mean, and the token strip only for a named head
    plain, named = (window.panels[i].masked.lens.heads for i in (3, 4))
    assert plain.second_row.isHidden() and plain.where.isHidden()  # (hidden by the talk, not by a step away)
    assert named.second_row.isHidden() and not named.where.isHidden()
    qtbot.waitUntil(lambda: named.where.result is not None, timeout=30_000)
    assert (named.where.result.layer, named.where.result.head) == (1, 1)
    window.close()
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)


def test_every_step_of_the_built_in_deck_shows_its_answer_whole(qtbot):
    """The built-in deck at a talk's size, step by step: no table or text of an answer scrolls and no label is cut
    (its wrapped text taller than the room it got); the bars of next words alone may scroll (ten of them), and keep
    four lines. A step squeezed by a taller neighbour on screen, or a new widget, is caught here rather than on the
    projector."""
    from PySide6.QtWidgets import QAbstractScrollArea, QLabel

    from explorer.session import Session
    from explorer.talk.window import TalkWindow
    from explorer.widgets.probability_bars import ProbabilityBars

    deck = load_deck()
    window = TalkWindow(Session(), deck)
    qtbot.addWidget(window)
    window.resize(EXPORT_SIZE)
    window.show()
    qtbot.waitUntil(lambda: window.all_ready, timeout=300_000)
    cut: dict[str, list[str]] = {}
    for i, step in enumerate(deck.steps):
        window.go(i)
        settle_layout()
        where = cut.setdefault(f"step {i + 1} ({step.title})", [])
        for area in window.panels[i].findChildren(QAbstractScrollArea):
            if not area.isVisible():
                continue
            if isinstance(getattr(area, "widget", lambda: None)(), ProbabilityBars):
                if area.viewport().height() < 4 * area.fontMetrics().height():
                    where.append("next words squeezed under four lines")
                continue
            for bar in (area.verticalScrollBar(), area.horizontalScrollBar()):
                if bar.maximum() > 0:
                    where.append(f"a {type(area).__name__} scrolls")
        for label in window.panels[i].findChildren(QLabel):
            if label.isVisible() and label.text():
                need = label.heightForWidth(label.width()) if label.wordWrap() else label.sizeHint().height()
                if need > label.height() + 1 or (not label.wordWrap() and label.sizeHint().width() > label.width() + 1):
                    where.append(f"label cut: {label.text()[:40]!r}")
    assert not {step: what for step, what in cut.items() if what}
    window.close()
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)
