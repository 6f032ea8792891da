"""The attention and predictions panels against small real models (and MiniLM from its package)."""

import re
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

from explorer.widgets.readable import TEXT, contrast
from tests.conftest import settle_layout

SHOTS = Path(__file__).resolve().parents[3] / "test-output" / "screenshots"


def load(qtbot, win, *paths):
    for path in paths:
        with qtbot.waitSignal(win.session.modelsChanged, timeout=60_000):
            win.session.load(str(path))


def shot(qtbot, win, name):
    settle_layout()
    SHOTS.mkdir(parents=True, exist_ok=True)
    win.grab().save(str(SHOTS / f"{name}.png"))


def test_attention_views_show_every_layer_and_head(qtbot, window, contextual_runs):
    panel = window.attention
    window.tabs.setCurrentWidget(panel)
    load(qtbot, window, contextual_runs["elmo"][0])
    assert not panel.sentence.isEnabled() and "bidirectional LSTM" in panel.message.text()
    load(qtbot, window, contextual_runs["bert"][0])
    panel.pair.setText("He drove the truck.")
    qtbot.waitUntil(lambda: panel.result is not None and 1 in panel.result.maps.segments, timeout=30_000)
    maps = panel.result.maps
    assert maps.tokens[0] == "[CLS]" and 1 in maps.segments
    assert np.allclose(maps.weights.sum(-1), 1, atol=1e-4)
    layers, heads = maps.weights.shape[:2]
    assert (layers, heads) == (2, 2) and len(panel.head_buttons) == heads
    assert panel.grid.shape == (0, 0)  # the model view is drawn only once it is on screen
    lines = panel.head_view.lines()
    assert lines and {h for h, *_ in lines} == {0, 1}
    panel.head_view.focus = 3  # hovering a token keeps only its lines
    assert {q for _, q, _, _ in panel.head_view.lines()} == {3}
    panel.head_view.focus = -1
    assert all(w >= 1 / len(maps.tokens) for *_, w in lines)  # automatic: only above an even spread
    shot(qtbot, window, "attention-head-view")
    panel.threshold.setValue(30)
    assert all(w >= 0.3 for *_, w in panel.head_view.lines())
    panel.views.setCurrentIndex(1)
    assert panel.grid.shape == (layers, heads)
    panel.grid.clicked.emit(1, 0)
    # layers are counted as the lens counts them (0 = the embeddings): the second block's attention is "layer 2"
    assert panel.large.matrix.shape == (len(maps.tokens),) * 2 and "layer 2, head 0" in panel.large.plot.plotItem.titleLabel.text
    assert [label for _, label in panel.grid.plot.getAxis("left")._tickLevels[0]] == ["layer 1", "layer 2"]
    shot(qtbot, window, "attention-model-view")
    panel.views.setCurrentIndex(2)
    assert panel.atlas.rowCount() == layers * heads
    shot(qtbot, window, "attention-head-atlas")
    panel.atlas.sortItems(2)  # by entropy
    assert sorted({int(panel.atlas.item(r, 0).value) for r in range(panel.atlas.rowCount())}) == [1, 2]
    row_layer, row_head = int(panel.atlas.item(0, 0).value), int(panel.atlas.item(0, 1).value)
    panel.atlas.cellDoubleClicked.emit(0, 2)  # a double click on the top row
    assert panel.layer.text() == str(row_layer) and panel.selected_heads() == [row_head]
    assert panel.layer.value() == row_layer - 1  # (the block's index, as the model's tensors hold it)
    assert panel.views.currentIndex() == 0
    panel.views.setCurrentIndex(3)
    panel.mix.setCurrentIndex(1)
    assert np.allclose(panel.mix_map.matrix.sum(-1), 1, atol=1e-4)
    shot(qtbot, window, "attention-rollout")


def test_minilm_shows_attention_and_says_it_has_no_masked_lm_head(qtbot, window):
    load(qtbot, window, "all-minilm-l6-v2")
    attention, predictions = window.attention, window.predictions
    with qtbot.waitSignal(attention.shown, timeout=30_000):
        attention.sentence.setText("The bank of the river.")
    assert attention.result.maps.weights.shape[:2] == (6, 12) and len(attention.head_buttons) == 12
    assert "no masked-LM head" in predictions.masked.model.reasons["all-minilm-l6-v2"]
    assert "no masked-lm head" in predictions.masked.hint.text().lower() and not predictions.masked.learn.isEnabled()


def test_masked_predictions_follow_typing_and_keep_the_last_edit(qtbot, window, contextual_runs):
    panel = window.predictions
    window.tabs.setCurrentWidget(panel)
    load(qtbot, window, contextual_runs["bert"][0], contextual_runs["gpt"][0])
    assert panel.masked.model.currentText() == "bert" and panel.masked.model.usable() == ["bert"]
    panel.masked.text.setText("She played the piano on stage.")
    qtbot.waitUntil(lambda: "No [MASK] yet" in panel.masked.hint.text(), timeout=5_000)
    edits = ["She played the [MASK]", "She played the [MASK] on", "She [MASK] the piano on [MASK]."]
    asked_before = panel.masked.runner.latest
    with qtbot.waitSignal(panel.shown, timeout=30_000):
        for text in edits:  # faster than the debounce: only the last is asked for
            panel.masked.text.setText(text)
    assert panel.masked.runner.latest == asked_before + 1  # one request for the three edits
    assert panel.masked.last.text == edits[-1]
    name, outcome = panel.masked.last.per_model[0]
    candidates = outcome.value
    assert name == "bert" and len(candidates) == 2 and abs(sum(candidates[0].probs) - 1) < 1.0
    assert "[MASK] 2" in panel.masked.results[0].toPlainText()
    with qtbot.waitSignal(panel.masked.lens.shown, timeout=30_000):
        panel.masked.lens_switch.setChecked(True)  # what every layer predicts at every token, beside the top-k
    grid = panel.masked.lens.grid
    assert grid.rowCount() == 3 and grid.verticalHeaderItem(0).text() == "output"
    assert grid.verticalHeaderItem(2).text() == "embeddings" and "Only the output was trained" in panel.masked.lens.grid_note.text()
    first_mask = [grid.horizontalHeaderItem(c).text() for c in range(grid.columnCount())].index("[MASK]")
    assert grid.item(0, first_mask).text().split()[0] == panel.masked.last.per_model[0][1].value[0].tokens[0]  # the output row is the model's own
    shot(qtbot, window, "predictions-masked")
    def chips():
        return [panel.masked.chips.itemAt(i).widget() for i in range(panel.masked.chips.count()) if panel.masked.chips.itemAt(i).widget()]

    qtbot.waitUntil(lambda: "piano" in [c.text() for c in chips()], timeout=5_000)  # the word buttons follow
    assert "MASK" not in [c.text() for c in chips()]
    with qtbot.waitSignal(panel.masked.shown, timeout=30_000):
        next(c for c in chips() if c.text() == "piano").click()
    assert panel.masked.text.text() == "She [MASK] the [MASK] on [MASK]."
    bars = panel.masked.results[0]
    settle_layout()
    bars.repaint()  # the rows are laid out as they are drawn
    rect, section, _ = bars._rows[-1]  # a prediction for the last [MASK]
    assert section == 2
    with qtbot.waitSignal(panel.focus_token, timeout=5_000) as clicked:
        qtbot.mouseClick(bars, Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    assert clicked.args[1] == panel.masked._positions[0][2] > panel.masked._positions[0][1]
    assert window.tabs.currentWidget() is window.attention
    with qtbot.waitSignal(panel.masked.example_runner.finished, timeout=60_000):
        panel.masked.draw_example()
    example = panel.masked.example.toPlainText()
    assert "tokens chosen (15%)" in example and "[CLS]" in example
    # its colours read on its background (the orange "random" was 2.5:1 on white), and sentence B's pink keeps
    # dark text in either theme (the dark theme's light text on it was unreadable)
    written = panel.masked.example.toHtml()
    base = panel.masked.example.palette().color(QPalette.ColorRole.Base)
    coloured = set(re.findall(r"(?<![-\w])color:(#[0-9a-fA-F]{6})", written)) - {"#111111"}
    assert len(coloured) >= 3 and min(contrast(c, base) for c in coloured) >= TEXT
    assert 'color:#111111; background-color:#fdecea;' in written


def test_next_token_continuation_and_next_sentence(qtbot, window, contextual_runs):
    panel = window.predictions
    load(qtbot, window, contextual_runs["gpt"][0], contextual_runs["bert"][0])
    window.tabs.setCurrentWidget(panel)  # (its screenshot below was of the polysemy lens)
    panel.views.setCurrentIndex(1)
    panel.next.text.setText("She played the")  # the answer for the typed text, not the one before it
    qtbot.waitUntil(lambda: "after “She played the”" in panel.next.message.text(), timeout=30_000)
    assert "%" in panel.next.results.toPlainText() and "gpt" in panel.next.message.text()
    with qtbot.waitSignal(panel.next.generate_runner.finished, timeout=30_000):
        panel.next.greedy.click()
    assert panel.next.continuation.text().startswith("She played the<b>")
    assert "(greedy, no run of 3 repeated)" in panel.next.continuation.text()  # no loops, unless asked
    panel.next.no_repeat.setChecked(False)
    with qtbot.waitSignal(panel.next.generate_runner.finished, timeout=30_000):
        panel.next.greedy.click()
    assert "<i>(greedy)</i>" in panel.next.continuation.text()
    shot(qtbot, window, "predictions-next-token")
    panel.views.setCurrentIndex(3)
    with qtbot.waitSignal(panel.shown, timeout=30_000):
        panel.nsp.b.setText("He tuned the cello.")
    assert "IsNext" in panel.nsp.result.toPlainText()


def test_next_tokens_and_continuations_of_two_models_side_by_side(qtbot, window, contextual_runs):
    """GPT against ELMo (or an n-gram against GPT): each one's next tokens in its own column, and each one's
    continuation on its own line, named."""
    panel = window.predictions
    load(qtbot, window, contextual_runs["gpt"][0], contextual_runs["elmo"][0])
    window.tabs.setCurrentWidget(panel)
    panel.views.setCurrentIndex(1)
    view = panel.next
    view.model.setCurrentIndex(view.model.findText("gpt"))
    view.compare.setChecked(True)
    view.model2.setCurrentIndex(view.model2.findText("elmo"))
    assert view.result_areas[1].isVisibleTo(view)
    view.text.setText("She played the")
    qtbot.waitUntil(lambda: view.results.toPlainText().startswith("gpt") and
                    view.results_b.toPlainText().startswith("elmo"), timeout=30_000)
    assert "%" in view.results_b.toPlainText()
    view.greedy.click()
    qtbot.waitUntil(lambda: view.continuation.text().count("She played the<b>") == 2, timeout=30_000)
    lines = view.continuation.text().split("<br>")
    assert lines[0].startswith("gpt: She played the<b>") and lines[1].startswith("elmo: She played the<b>")
    view.compare.setChecked(False)  # back to one model: its column and its continuation alone
    assert not view.result_areas[1].isVisibleTo(view) and view.continuation.text().startswith("She played the<b>")


def test_next_token_says_a_models_markers_in_words(qtbot, window):
    """A student reads "</s> (sentence ends)", not a bare tag, where a model predicts the end of a sentence."""
    from engine.results import TokenCandidates

    view = window.predictions.next
    view._show(("It rained.", "elmo", TokenCandidates("It rained.", ("</s>", "it", "<unk>"), (0.5, 0.2, 0.1))))
    shown = view.results.toPlainText()
    assert "</s> (sentence ends)" in shown and "<unk> (unknown word)" in shown
    assert "\nit\t" in shown  # a word is shown as it is


def test_shuffles_score_below_the_original_under_an_ngram_model(qtbot, window, topic_corpus, tmp_path):
    from engine import api
    from engine.config.settings import NGramConfig

    run = tmp_path / "ngram"
    list(api.train(api.RunSpec("ngram", out=str(run), corpus=str(topic_corpus), model=NGramConfig(order=3, min_count=1))))
    load(qtbot, window, run)
    panel = window.predictions
    window.tabs.setCurrentWidget(panel)
    panel.views.setCurrentIndex(2)
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        panel.probability.text.setPlainText("She played the piano on stage.\npiano the She on played stage.\n"
                                     "stage on piano the played She.")
    header = panel.probability.table.horizontalHeaderItem(1).text()
    assert header == "ngram\n(log p)" and panel.probability.best["ngram (log p)"] == 0
    assert panel.probability.table.item(0, 1).text().startswith("★")
    # the same model twice (as a run and itself at another step would be): a difference column
    window.session.set_model("ngram copy", window.session.models["ngram"])
    qtbot.waitUntil(lambda: panel.probability.difference.count() == 3, timeout=30_000)  # none, B − A, A − B
    panel.probability.difference.setCurrentIndex(1)
    table = panel.probability.table
    assert table.columnCount() == 4 and table.horizontalHeaderItem(3).text().startswith("Δ ngram")
    assert all(table.item(r, 3).text() == "+0.0" for r in range(3))  # a model against itself differs by 0
    shot(qtbot, window, "predictions-sentence-probability")
    # a word the n-gram does not know is scored as its <unk> class: the cell and the note say so
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        panel.probability.text.setPlainText("She played the zqxvwy on stage.")
    assert panel.probability.table.item(0, 1).text().endswith("· 1 unknown")
    assert "zqxvwy (<unk>)" in panel.probability.table.item(0, 1).toolTip()
    assert "unknown" in panel.probability.message.text()


def test_a_long_scoring_can_be_stopped(qtbot, window, contextual_runs):
    load(qtbot, window, contextual_runs["bert"][0])
    view = window.predictions.probability
    window.tabs.setCurrentWidget(window.predictions)
    window.predictions.views.setCurrentIndex(2)
    view._debounce.stop()
    view.text.blockSignals(True)
    view.text.setPlainText(" ".join(["the cat sat on the mat ."] * 60))  # BERT: one masked copy per token
    view.text.blockSignals(False)
    view.query()
    assert view.stop.isEnabled() and view.runner.busy
    view.stop.click()
    assert not view.stop.isEnabled() and "stopped" in view.message.text()
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)
    qtbot.wait(100)
    assert "stopped" in view.message.text() and view._last is None  # nothing arrived after Stop


def test_bad_input_gives_hints_and_notices_not_crashes(qtbot, window, contextual_runs):
    load(qtbot, window, contextual_runs["bert"][0])
    predictions, attention = window.predictions, window.attention
    for text in ["[MASK] [MASK] [MASK]", "Ünïcødé ☃ [MASK] 北京 \x00", "word " * 400 + "[MASK]"]:
        with qtbot.waitSignals([predictions.masked.runner.finished], timeout=30_000):
            predictions.masked.text.setText(text)
    # the text longer than BERT reads: its [MASK] lies beyond the model's 64 tokens
    assert "beyond" in predictions.masked.results[0].toPlainText()
    predictions.masked.text.setText("")
    qtbot.waitUntil(lambda: "Type a sentence" in predictions.masked.hint.text(), timeout=5_000)
    attention.sentence.setText("word " * 400)
    qtbot.waitUntil(lambda: attention.result is not None and len(attention.result.maps.tokens) == 64, timeout=30_000)
    assert "truncated" in attention.message.text()
    attention.sentence.setText("   ")
    qtbot.waitUntil(lambda: "Type a sentence" in attention.message.text(), timeout=5_000)
    assert attention.result is None and attention.head_view.tokens == ()  # the old drawing is gone


@pytest.mark.parametrize("scene", ["attention", "model-view", "masked", "sentence-probability"])
def test_attention_and_prediction_scenes_open_with_the_default_models(qtbot, window, scene):
    from explorer.scenes import load_scene

    data = load_scene(scene)
    window.open_scene(scene)
    panel = window.scene_panel(data)
    assert window.tabs.currentWidget() is panel
    qtbot.waitUntil(lambda: not window.session.loading, timeout=60_000)
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        panel._refresh_models()
    if scene == "sentence-probability":
        columns = ("ngram-kn3 (log p)", "nnlm-tiny (log p)", "elmo-tiny (log p)", "gpt-tiny (log p)",
                   "bert-tiny (pseudo-log p)")
        # (a scoring asked while bert-tiny still loaded may answer first: the table is redone once it has)
        qtbot.waitUntil(lambda: set(columns) <= set(window.predictions.probability.best), timeout=60_000)
        for name in columns:
            assert window.predictions.probability.best[name] == 0  # the original above its two shuffles
        table = window.predictions.probability.table  # the lineage's order, whichever model loaded first
        headers = [table.horizontalHeaderItem(c).text().replace("\n(", " (") for c in range(1, table.columnCount())]
        assert headers[:5] == list(columns)
    elif scene == "masked":  # the shipped masked LM that answers: the adapted MiniLM
        assert "minilm-mlm" in window.predictions.masked.results[0].toPlainText()
    else:
        assert window.attention.result.name == "bert-tiny"
    assert window.minimumSizeHint().width() <= 1366  # fits a laptop screen: no long message widens it
    shot(qtbot, window, f"scene-{scene}")


def test_attention_compares_two_models_where_their_tokens_line_up(qtbot, window, contextual_runs):
    panel = window.attention
    window.tabs.setCurrentWidget(panel)
    load(qtbot, window, contextual_runs["bert"][0], contextual_runs["gpt"][0])
    window.session.set_model("bert again", window.session.models["bert"])  # e.g. the run at another step
    panel.model.setCurrentText("bert")
    panel.model2.setCurrentText("bert again")
    panel.views.setCurrentIndex(3)
    panel.mix.setCurrentIndex(2)  # the difference of the layer averages
    with qtbot.waitSignal(panel.shown, timeout=30_000):
        panel.compare.setChecked(True)
    assert panel.result.other.name == "bert again"
    assert panel.mix_map.matrix.shape == (len(panel.result.maps.tokens),) * 2
    assert np.allclose(panel.mix_map.matrix, 0, atol=1e-6)  # a model against itself: no difference
    panel.views.setCurrentIndex(1)  # the model view, head by head
    weights = panel.result.maps.weights
    panel.grid_mode.setCurrentIndex(1)  # B's heads
    panel.open_head(1, 1)
    assert np.allclose(panel.large.matrix, panel.result.other.weights[1, 1]) and "bert again" in panel.grid_note.text()
    panel.grid_mode.setCurrentIndex(2)  # A − B, head by head, on one diverging scale
    panel.open_head(1, 1)
    assert panel.large.matrix.shape == weights[1, 1].shape and np.allclose(panel.large.matrix, 0, atol=1e-6)
    assert panel.grid.signed and "red where A attends more" in panel.grid_note.text()
    panel.views.setCurrentIndex(3)
    with qtbot.waitSignal(panel.shown, timeout=30_000):
        panel.model2.setCurrentText("gpt")  # other tokens: said, not drawn
    assert panel.result.other is None and "other tokens" in panel.result.why_not_compared and panel.mix_map.matrix.size == 0
    panel.views.setCurrentIndex(1)
    assert "other tokens" in panel.grid_note.text()  # no per-head difference either: it says why, shows A
    panel.open_head(0, 0)
    assert np.allclose(panel.large.matrix, panel.result.maps.weights[0, 0])


def test_an_attention_comparison_saved_as_a_scene_opens_compared_again(qtbot, window, contextual_runs):
    """A researcher's "model against model, head by head" kept as a scene (or a talk's step): B and the grid's
    A − B come back, and a scene without B leaves the comparison off."""
    from explorer.scenes import check_scene

    panel = window.attention
    window.tabs.setCurrentWidget(panel)
    load(qtbot, window, contextual_runs["bert"][0])
    window.session.set_model("bert again", window.session.models["bert"])
    panel.model.setCurrentText("bert")
    panel.model2.setCurrentText("bert again")
    panel.views.setCurrentIndex(1)  # the model view
    with qtbot.waitSignal(panel.shown, timeout=30_000):
        panel.compare.setChecked(True)
    panel.grid_mode.setCurrentIndex(2)
    saved = check_scene(panel.current_scene().to_json(), "saved")
    assert (saved.view, saved.contextual_model, saved.compare, saved.show) == ("model", "bert", "bert again", "A − B")
    with qtbot.waitSignal(panel.shown, timeout=30_000):
        panel.apply_scene(check_scene({"panel": "attention", "sentences": ["the cat sat"], "models": ["bert"],
                                       "contextual_model": "bert", "view": "model"}, "plain"))
    assert not panel.compare.isChecked() and panel.current_scene().compare is None
    panel.grid_mode.setCurrentIndex(0)
    with qtbot.waitSignal(panel.shown, timeout=30_000):
        panel.apply_scene(saved)
    assert panel.compare.isChecked() and panel.model2.currentText() == "bert again"
    assert panel.grid_mode.currentIndex() == 2 and panel.result.other is not None
    assert panel.grid.signed  # drawn as A − B


def test_a_next_word_scene_shows_its_greedy_continuation_and_a_saved_one_keeps_it(qtbot, window, contextual_runs):
    """A talk's GPT step: the next words and, once shown, what each model writes on (greedy: the same on every
    run of the talk). Saved from the view, a greedy continuation of the text on screen is kept; a sampled one
    (another every time) or one of an earlier text is not."""
    from explorer.panels.predictions import next_token
    from explorer.scenes import SceneError, check_scene

    load(qtbot, window, contextual_runs["gpt"][0], contextual_runs["elmo"][0])
    panel = window.predictions
    window.tabs.setCurrentWidget(panel)
    scene = check_scene({"panel": "predictions", "view": "next", "sentences": ["She played the"],
                         "models": ["gpt", "elmo"], "contextual_model": "gpt", "compare": "elmo",
                         "continuation": "greedy"}, "scene")
    view = panel.next
    asked = []  # each time the view continues the text
    continue_text = view.continue_text
    view.continue_text = lambda temperature: (asked.append(temperature), continue_text(temperature))[1]
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        panel.apply_scene(scene)
    qtbot.wait(3 * next_token.DEBOUNCE_MS)  # the scene's text, typed into the box, asked nothing more: a sample clicked
    assert asked == [0.0]        # now is not overwritten by the scene's greedy continuation asked again
    lines = view.continuation.text().split("<br>")  # both there when the scene says it is shown
    assert len(lines) == 2 and lines[0].startswith("gpt: She played the<b>") and "(greedy" in lines[0]
    assert lines[1].startswith("elmo: She played the<b>") and "(greedy" in lines[1]
    assert panel.current_scene().continuation == "greedy"
    with qtbot.waitSignal(view.generate_runner.finished, timeout=30_000):
        view.sample.click()
    assert "sampled at" in view.continuation.text() and panel.current_scene().continuation is None
    with qtbot.waitSignal(view.generate_runner.finished, timeout=30_000):
        view.greedy.click()
    assert panel.current_scene().continuation == "greedy"
    view.text.setText("He tuned the")  # the greedy continuation on screen is of the text before
    assert panel.current_scene().continuation is None
    with pytest.raises(SceneError, match="next view"):
        check_scene({"panel": "predictions", "view": "masked", "sentences": ["a"], "continuation": "greedy"}, "s")
    with pytest.raises(SceneError, match="'continuation' 'sampled' is not one of greedy"):
        check_scene({"panel": "predictions", "view": "next", "sentences": ["a"], "continuation": "sampled"}, "s")


@pytest.mark.parametrize("where", ["attention", "next"])
def test_a_compared_model_picked_by_hand_stays_picked_as_models_load(qtbot, window, contextual_runs, where):
    """A researcher compares A with the third of their models; loading another (or moving the Run history's
    slider, which swaps a checkpoint under one name) must not put B back on the first model other than A — nor on
    a scene's B, once B was picked by hand."""
    from explorer.scenes import check_scene

    kind = "bert" if where == "attention" else "gpt"
    load(qtbot, window, contextual_runs[kind][0])
    session = window.session
    for name in ("b1", "b2"):
        session.set_model(name, session.models[kind])
    if where == "attention":
        view = window.attention
        window.tabs.setCurrentWidget(view)
        view.apply_scene(check_scene({"panel": "attention", "sentences": ["the cat sat"], "models": [kind, "b1"],
                                      "contextual_model": kind, "compare": "b1"}, "scene"))
    else:
        window.tabs.setCurrentWidget(window.predictions)
        window.predictions.apply_scene(check_scene({"panel": "predictions", "view": "next", "sentences": ["she"],
                                                    "models": [kind, "b1"], "contextual_model": kind,
                                                    "compare": "b1"}, "scene"))
        view = window.predictions.next
    assert view.compare.isChecked() and view.model2.currentText() == "b1"
    picked = view.model2.findText("b2")
    view.model2.setCurrentIndex(picked)
    view.model2.activated.emit(picked)  # (as a click does)
    session.set_model("b3", session.models[kind])
    assert view.model.currentText() == kind and view.model2.currentText() == "b2"


@pytest.mark.parametrize("where", ["attention", "predictions", "polysemy", "neighbours"])
def test_a_model_picked_by_hand_after_a_scene_stays_picked_as_models_load(qtbot, window, contextual_runs, where):
    """A scene opened on model X; the user then picks Y: loading another model must not put X back."""
    from engine import api
    from explorer.scenes import check_scene

    load(qtbot, window, contextual_runs["bert"][0])
    session = window.session
    session.set_model("b1", session.models["bert"])
    model = "bert"
    if where == "neighbours":  # a static model: two of them
        session.set_model("v1", api.load("word2vec-sgns"))
        session.set_model("v2", session.models["v1"])
        model = "v1"
    panel = getattr(window, where)
    window.tabs.setCurrentWidget(panel)
    panel.apply_scene(check_scene({"panel": where, "sentences": ["the cat sat"], "models": [model],
                                   "contextual_model": model, "selection": "cat",
                                   **({"view": "masked"} if where == "predictions" else {})},
                                  "scene"))
    picker = panel.masked.model if where == "predictions" else panel.model
    assert picker.currentText() == model
    other = "v2" if where == "neighbours" else "b1"
    picked = picker.findText(other)
    picker.setCurrentIndex(picked)
    picker.activated.emit(picked)  # (as a click does)
    session.set_model("b3", session.models["bert"])
    assert picker.currentText() == other


def test_a_screenshot_waits_while_a_newer_query_is_on_its_way(qtbot, window, contextual_runs):
    """`word2bert --scene … --screenshot` grabs once results are shown and nothing newer is coming: a model
    that loads last (the scene's choice) must not be pictured beside the first model's results."""
    from explorer.screenshot import pending

    panel = window.predictions
    window.tabs.setCurrentWidget(panel)
    load(qtbot, window, contextual_runs["bert"][0])
    qtbot.waitUntil(lambda: not pending(panel), timeout=30_000)
    panel.masked.text.setText("She played the [MASK].")
    assert pending(panel)  # the debounce will ask: what is on screen is not the answer yet
    with qtbot.waitSignal(panel.shown, timeout=30_000):
        pass
    qtbot.waitUntil(lambda: not pending(panel), timeout=5_000)
    assert panel.masked.last.text == "She played the [MASK]."


def test_a_sentence_one_model_cannot_score_shows_a_dash_with_the_reason_and_no_difference(qtbot):
    from engine.api import SentenceScore
    from explorer.panels.predictions.sentence_probability import (
        ScoreColumn,
        ScoreTable,
        SentenceProbabilityView,
        Unscored,
    )
    from explorer.session import Session

    view = SentenceProbabilityView(Session())
    qtbot.addWidget(view)

    def score(logprob):
        return SentenceScore(("a", "b", "</s>"), (logprob / 3,) * 3, logprob, 2.0)

    table = ScoreTable(["the cat sat .", "sat cat the ."], [
        ScoreColumn("ngram (log p)", [score(-10.0), score(-20.0)]),
        ScoreColumn("gpt (log p)", [score(-12.0), Unscored("gpt reads at most 8 tokens")])])
    view._show(table)
    assert view.table.item(1, 2).text() == "—" and view.table.item(1, 2).toolTip() == "gpt reads at most 8 tokens"
    assert view.best == {"ngram (log p)": 0, "gpt (log p)": 0}
    view.difference.setCurrentText("gpt − ngram")
    header, values = view.difference_column()
    assert header == "Δ gpt − ngram" and values == [-2.0, None]  # where one model failed, no difference


def test_the_sentences_keep_their_width_beside_three_models_in_a_small_window(qtbot):
    """Each model's column is two short lines (its name above "(log p)", the score above its perplexity), so
    that in an 800-pixel window the sentences are not squeezed to a word per line; copied or saved as CSV, each
    header and cell is one line again."""
    from engine.api import SentenceScore
    from explorer.panels.predictions.sentence_probability import (
        ScoreColumn,
        ScoreTable,
        SentenceProbabilityView,
    )
    from explorer.session import Session
    from explorer.widgets.export import table_rows

    view = SentenceProbabilityView(Session())
    qtbot.addWidget(view)
    view.resize(500, 600)  # the view's share of an 800-pixel window beside the model library
    view.show()
    sentences = ["The president of the United States lives in Washington.",
                 "Washington the of president lives States United in the."]
    view._show(ScoreTable(sentences, [
        ScoreColumn(name, [SentenceScore(("a",), (-39.5,), -39.5, 36.0), SentenceScore(("a",), (-79.3,), -79.3, 1350.0)])
        for name in ("elmo-tiny (log p)", "gpt-tiny (log p)", "bert-tiny (pseudo-log p)")]))
    qtbot.waitUntil(lambda: view.table.columnWidth(0) > 0)
    models = sum(view.table.columnWidth(c) for c in range(1, 4))
    assert view.table.columnWidth(0) >= models * 0.6, (view.table.columnWidth(0), models)
    rows = table_rows(view.table)
    assert rows[0] == ["sentence", "elmo-tiny (log p)", "gpt-tiny (log p)", "bert-tiny (pseudo-log p)"]
    assert rows[1][1] == "★ -39.5 (ppl 36)" and rows[2][3] == "-79.3 (ppl 1,350)"
    # a run named with brackets of its own: the line breaks before how it scores, not inside the name
    view._show(ScoreTable(sentences[:1], [ScoreColumn("run (2) (log p)", [SentenceScore(("a",), (-1.0,), -1.0, 2.0)])]))
    assert view.table.horizontalHeaderItem(1).text() == "run (2)\n(log p)"


def test_a_scene_naming_a_folder_by_its_path_shows_that_model_and_loads_it_once(qtbot, window, contextual_runs,
                                                                                 tmp_path, monkeypatch):
    """A scene written by hand names the user's own run by its path, as its contextual model too: the view shows
    that model (loaded under its folder's name), and opening the scene again does not load it again. Before, the
    view waited for a model named by the path, which never came, and showed another; and every opening loaded it
    anew."""
    import json

    from explorer.scenes import load_scene

    run = str(contextual_runs["gpt"][0])
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"panel": "predictions", "sentences": ["the cat sat on the"], "models": [run],
                                "contextual_model": run, "view": "next"}))
    assert load_scene(str(path)).contextual_model == "gpt"
    loads = []
    original = window.session.load
    monkeypatch.setattr(window.session, "load", lambda key: loads.append(key) or original(key))
    window.open_scene(str(path))
    qtbot.waitUntil(lambda: "gpt" in window.session.models and not window.session.loading, timeout=60_000)
    view = window.predictions.next
    qtbot.waitUntil(lambda: view.model.currentText() == "gpt", timeout=10_000)
    window.open_scene(str(path))
    assert loads == [run]
