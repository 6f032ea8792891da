"""The lab under the Masked LM and Next token views (explorer/widgets/lens_lab.py): the lens grid of every
layer at every token, A against B, and the causal-tracing heatmap, opened by scenes as a speaker or a
researcher would."""

from pathlib import Path

import numpy as np
import pytest

from explorer.scenes import MEASURES, SceneError, check_scene
from tests.engine.finetune.test_one_wrapper import tiny_hf_folder
from tests.explorer.panels.test_attention_predictions import load, shot

SHIPPED = Path(__file__).resolve().parents[3] / "assets" / "checkpoints"


def header(table, axis="h"):
    item = table.horizontalHeaderItem if axis == "h" else table.verticalHeaderItem
    return [item(i).text() for i in range(table.columnCount() if axis == "h" else table.rowCount())]


def open_scene(qtbot, win, scene, timeout=30_000):
    """A predictions scene (checked as a file's would be) applied, waited for until its panel says shown."""
    panel = win.predictions
    win.tabs.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.shown, timeout=timeout):
        panel.apply_scene(check_scene({"panel": "predictions", **scene}, "test"))
    return panel


def test_a_lab_scene_opens_the_grid_of_two_models_and_their_difference(qtbot, window, contextual_runs, tmp_path):  # noqa: F811
    other = tiny_hf_folder(tmp_path / "hf-bert", contextual_runs, decoder=False)  # the same tokens, two layers too
    load(qtbot, window, contextual_runs["bert"][0], other)
    panel = open_scene(qtbot, window, {"view": "masked", "sentences": ["he drove the [MASK] to town"],
                                       "models": ["bert", "hf-bert"], "contextual_model": "bert", "lab": "grid",
                                       "measure": "rank", "compare": "hf-bert"})
    lab = panel.masked.lens
    assert panel.masked.lens_switch.isChecked() and lab.isVisible() and panel.masked.compare.isChecked()
    assert [name for name, _ in lab.answer.grids] == ["bert", "hf-bert"]
    grid = lab.grid
    assert header(grid, "v")[0] == "output" and header(grid, "v")[-1] == "embeddings"
    assert "[MASK]" in header(grid) and "rank" in lab.grid_note.text()
    words = header(grid)
    a = lab.answer.grids[0][1].value
    t = words.index("drove")  # the output's top word there, and where the word itself ranks
    assert grid.item(0, t).text() == f"{a.top_tokens[-1][t][0]} #{a.rank[-1, t]:.0f}"
    assert grid.item(0, words.index("[MASK]")).text().endswith("–")  # a hidden word has no rank
    lab.show_which.setCurrentIndex(2)  # A − B, in the same measure
    assert "red where bert's is higher" in lab.grid_note.text() and "/" in grid.item(0, 1).text()
    grid.cell_clicked.emit(0, words.index("[MASK]"))
    assert lab.detail.text().count("[MASK]") == 2  # both models' top words at that cell
    saved = panel.current_scene()
    assert (saved.lab, saved.measure, saved.show, saved.compare) == ("grid", "rank", "A − B", "hf-bert")
    shot(qtbot, window, "lab-lens-grid-a-minus-b")


def test_a_tracing_scene_shows_where_the_next_word_is_carried(qtbot, window, contextual_runs):  # noqa: F811
    load(qtbot, window, contextual_runs["gpt"][0])
    panel = open_scene(qtbot, window, {"view": "next", "sentences": ["he drove the truck to the"], "models": ["gpt"],
                                       "contextual_model": "gpt", "lab": "trace", "subject": "truck"}, timeout=60_000)
    lab = panel.next.lens
    trace = lab.trace_result
    assert trace is not None and lab.tabs.currentIndex() == 1
    columns = header(lab.tracing.map)
    assert [c for c in columns if c.endswith("*")] == [columns[t] for t in trace.subject]  # the noised words marked
    assert lab.tracing.map.rowCount() == trace.restored.shape[0]
    top_right = lab.tracing.map.item(0, trace.position).text()  # the output state at the prediction: all of it back
    assert top_right.rstrip("%") and abs(float(top_right.rstrip("%")) / 100 - trace.p_clean) < 0.01
    assert f"predicts '{trace.target.strip()}'" in lab.tracing.note.text()
    assert panel.current_scene().lab == "trace" and panel.current_scene().subject == "truck"
    rows = lab.tracing.map.export_rows()  # the CSV: the numbers behind the colours, the output first
    assert [c.strip() or "␣" for c in rows[0][1:]] == columns and rows[1][0] == "output"
    assert float(rows[1][1 + trace.position]) == pytest.approx(trace.restored[-1, trace.position], rel=1e-5)
    shot(qtbot, window, "lab-causal-trace")


def test_a_tracing_scene_with_a_contrast_sentence_patches_from_it(qtbot, window, contextual_runs):  # noqa: F811
    """Activation patching in the lab: the contrast sentence run, the text's states put back one at a time; the
    differing tokens marked, the note says what was run, and a saved scene keeps the contrast."""
    load(qtbot, window, contextual_runs["gpt"][0])
    contrast = "he drove the truck to a"
    panel = open_scene(qtbot, window, {"view": "next", "sentences": ["he drove the truck to the"], "models": ["gpt"],
                                       "contextual_model": "gpt", "lab": "trace", "contrast": contrast},
                       timeout=60_000)
    lab = panel.next.lens
    trace = lab.trace_result
    assert trace is not None and trace.contrast == contrast and trace.noise == 0.0
    columns = header(lab.tracing.map)
    assert [c for c in columns if c.endswith("*")] == [columns[t] for t in trace.subject] == [columns[-1]]
    assert f"run as '{contrast}'" in lab.tracing.note.text() and "noise draws" not in lab.tracing.note.text()
    assert panel.current_scene().contrast == contrast
    lab.tracing.contrast.setText("he drove a truck")  # too short: said, and the heatmap of before stays
    lab.trace()
    qtbot.waitUntil(lambda: "as many tokens" in lab.tracing.note.text(), timeout=30_000)


def test_a_tracing_scene_shown_first_with_a_stand_in_traces_its_own_model_once_it_loads(
        qtbot, window, contextual_runs, tmp_path):  # noqa: F811
    """A talk builds its steps while their models load: another model stands in meanwhile. The trace on screen
    at the end must be the scene's own model's, not the stand-in's (the deck's capital step showed bert-tiny's)."""
    other = tiny_hf_folder(tmp_path / "hf-bert", contextual_runs, decoder=False)
    load(qtbot, window, contextual_runs["bert"][0])  # only the stand-in is loaded when the scene opens
    panel = open_scene(qtbot, window, {"view": "masked", "sentences": ["he drove the [MASK] to town"],
                                       "models": ["hf-bert"], "contextual_model": "hf-bert", "lab": "trace",
                                       "subject": "drove"}, timeout=60_000)
    lab = panel.masked.lens
    assert lab.tracing.note.text().startswith("bert predicts")  # the stand-in's, while its own model is away
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        load(qtbot, window, other)
    qtbot.waitUntil(lambda: lab.tracing.note.text().startswith("hf-bert predicts"), timeout=60_000)
    assert panel.masked.model.currentText() == "hf-bert"
    old = lab.trace_result
    lab._show_trace(("bert", lab.text, old))  # a late answer of the stand-in's is stale: dropped
    assert lab.tracing.note.text().startswith("hf-bert predicts")


def test_an_attribution_scene_shows_which_words_the_prediction_rests_on(qtbot, window, contextual_runs):  # noqa: F811
    """The lab's third page: three methods as three rows over the text's tokens, the [MASK] marked and left
    uncoloured, each word's score as the engine gives it; a foil asks again, and a saved scene keeps it; a new text
    is explained as soon as the view has it (the page is open)."""
    load(qtbot, window, contextual_runs["bert"][0])
    panel = open_scene(qtbot, window, {"view": "masked", "sentences": ["he drove the [MASK] to town"],
                                       "models": ["bert"], "contextual_model": "bert", "lab": "attribution"},
                       timeout=60_000)
    lab = panel.masked.lens
    page = lab.attribution
    result = page.result
    assert result is not None and lab.tabs.currentIndex() == 2 and page.isVisible()
    assert header(page.table, "v") == ["integrated gradients", "gradient × input", "gradient norm"]
    columns = header(page.table)
    assert columns[result.position] == "[MASK]→" and page.table.item(0, result.position).text() == ""
    t = columns.index("drove")
    assert page.table.item(0, t).text() == f"{result.scores['integrated gradients'][t]:+.2f}"
    assert page.table.item(2, t).text() == f"{result.scores['gradient norm'][t]:.2f}"
    assert f"Explained: log P('{result.target.strip()}')" in page.note.text() and "add up to" in page.note.text()
    rows = page.table.export_rows()  # the CSV: the scores themselves, not the colours' scale
    assert rows[1][0] == "integrated gradients" and float(rows[1][1 + t]) == pytest.approx(
        float(result.scores["integrated gradients"][t]), rel=1e-4)
    shot(qtbot, window, "lab-attribution")
    page.by_words.setChecked(True)  # each word's tokens added up: the words as typed, the blank where it was
    assert header(page.table) == ["he", "drove", "the", "[MASK]→", "to", "town"]
    words = result.word_scores("integrated gradients")
    assert words.sum() == pytest.approx(result.scores["integrated gradients"].sum(), abs=1e-5)
    assert page.table.item(0, 1).text() == f"{words[1]:+.2f}" and page.table.item(0, 3).text() == ""
    page.by_words.setChecked(False)
    foil = "the" if result.target.strip() != "the" else "a"
    with qtbot.waitSignal(page.shown, timeout=30_000):
        page.foil.setText(foil)
        page.foil.returnPressed.emit()
    assert page.result.foil.strip() == foil and f"− log P('{foil}')" in page.note.text()
    saved = panel.current_scene()
    assert (saved.lab, saved.foil, saved.target) == ("attribution", foil, None)
    panel.masked.text.setText("she parked the [MASK] in town")  # typed: the view's query, then the page's
    qtbot.waitUntil(lambda: page.result is not None and page.result.text == "she parked the [MASK] in town",
                    timeout=30_000)
    page.target.setText("zzqxjwv")  # not a word of its vocabulary: said, in the note
    page.target.returnPressed.emit()
    qtbot.waitUntil(lambda: "not one token" in page.note.text(), timeout=30_000)


def test_a_heads_scene_shows_what_knocking_out_each_head_costs(qtbot, window, contextual_runs):  # noqa: F811
    """The lab's fourth page: layers × heads, each cell what knocking that head out costs log P of the prediction
    (as the engine gives it), layer 1 at the bottom; a foil asks again and a saved scene keeps the page and the
    foil; a model without heads (ELMo) says so in the note."""
    load(qtbot, window, contextual_runs["bert"][0])
    panel = open_scene(qtbot, window, {"view": "masked", "sentences": ["he drove the [MASK] to town"],
                                       "models": ["bert"], "contextual_model": "bert", "lab": "heads"},
                       timeout=60_000)
    lab = panel.masked.lens
    page = lab.heads
    result = page.result
    assert result is not None and lab.tabs.currentIndex() == 3 and page.isVisible() and lab.wanted == ""
    layers, heads = result.effect.shape
    handle = window.session.models["bert"]
    assert (layers, heads) == (handle.adapter.n_layers, handle.info["heads"])
    assert header(page.table) == [f"head {h}" for h in range(heads)]
    assert header(page.table, "v") == [f"layer {layer}" for layer in range(layers, 0, -1)]  # the first at the bottom
    assert page.table.item(layers - 1, 1).text() == f"{result.effect[0, 1]:+.2f}"  # layer 1, head 1
    assert "knocked out" in page.table.item(0, 0).toolTip() and f"P('{result.target.strip()}')" in page.note.text()
    rows = page.table.export_rows()  # the CSV: the effects themselves
    assert float(rows[1][2]) == pytest.approx(float(result.effect[layers - 1, 1]), abs=1e-4)
    attention = window.attention  # a head double-clicked: where it attends, from the blank, in the Attention tab
    with qtbot.waitSignal(attention.shown, timeout=30_000):
        page.table.cellDoubleClicked.emit(layers - 1, 1)  # layer 1 (drawn at the bottom), head 1
    assert window.tabs.currentWidget() is attention and attention.model.currentText() == "bert"
    assert attention.layer.value() == 0 and attention.selected_heads() == [1]
    assert attention.result.maps.tokens[attention.head_view.focus] == "[MASK]"
    shot(qtbot, window, "lab-heads-attention")
    window.tabs.setCurrentWidget(panel)
    shot(qtbot, window, "lab-heads")
    foil = "the" if result.target.strip() != "the" else "a"
    with qtbot.waitSignal(page.shown, timeout=30_000):
        page.foil.setText(foil)
        page.foil.returnPressed.emit()
    assert page.result.foil.strip() == foil and f"− log P('{foil}')" in page.note.text()
    saved = panel.current_scene()
    assert (saved.lab, saved.foil) == ("heads", foil)
    panel.set_presenting(True)  # a talk's note: the heads only
    assert "Heads it needs most:" in page.note.text() and "Explained" not in page.note.text()
    assert not page.show_which.isVisible()  # (no compared model: nothing to choose)
    panel.set_presenting(False)
    load(qtbot, window, contextual_runs["elmo"][0])
    elmo = open_scene(qtbot, window, {"view": "next", "sentences": ["the cat sat on the"], "models": ["elmo"],
                                      "contextual_model": "elmo", "lab": "grid"}, timeout=60_000)
    elmo.next.lens.tabs.setCurrentIndex(3)
    qtbot.waitUntil(lambda: "no attention heads to knock out" in elmo.next.lens.heads.note.text(), timeout=30_000)


def test_under_the_heads_table_the_chosen_head_is_knocked_out_token_by_token(qtbot, window, contextual_runs):  # noqa: F811
    """Where a head matters: the strip under the table opens on the strongest head, a cell per token with what
    knocking it out there alone costs (as the engine gives it); a click on another head asks again for that head;
    a talk's note is the short one."""
    load(qtbot, window, contextual_runs["bert"][0])
    panel = open_scene(qtbot, window, {"view": "masked", "sentences": ["he drove the [MASK] to town"],
                                       "models": ["bert"], "contextual_model": "bert", "lab": "heads"},
                       timeout=60_000)
    page = panel.masked.lens.heads
    strip = page.where
    qtbot.waitUntil(lambda: strip.result is not None, timeout=30_000)
    table = page.result
    layer, head, _ = table.strongest(1)[0]
    assert (strip.result.layer, strip.result.head) == (layer, head) and strip.isVisible()
    assert header(strip.table) == [t.strip() for t in table.tokens]
    assert header(strip.table, "v") == [f"layer {layer + 1} head {head}"]
    handle = window.session.models["bert"]
    expected = handle.head_positions("he drove the [MASK] to town", layer, head)
    for t in range(len(table.tokens)):
        assert strip.table.item(0, t).text() == f"{expected.effect[t]:+.2f}"
    assert strip.result.every == pytest.approx(float(table.effect[layer, head]), abs=1e-4)
    assert f"layer {layer + 1} head {head} matters" in strip.note.text() and "every token together" in strip.note.text()
    assert "(the position predicted)" in strip.table.item(0, table.position).toolTip()
    other = (0, 1) if (layer, head) != (0, 1) else (1, 0)
    with qtbot.waitSignal(strip.shown, timeout=30_000):
        page.table.cellClicked.emit(table.effect.shape[0] - 1 - other[0], other[1])  # (layer 1 drawn at the bottom)
    assert (strip.result.layer, strip.result.head) == other
    assert header(strip.table, "v") == [f"layer {other[0] + 1} head {other[1]}"]
    panel.set_presenting(True)
    assert "Click another head" not in strip.note.text() and "every token:" in strip.note.text()
    panel.set_presenting(False)
    shot(qtbot, window, "lab-heads-by-token")
    saved = panel.current_scene()  # the head clicked is kept by a saved scene, and the scene opens on it
    assert saved.head == list(other) and check_scene(saved.to_json(), "saved").head == list(other)
    with qtbot.waitSignal(page.where.shown, timeout=30_000):
        page.target.setText(table.target.strip())  # another question: the head chosen stays
        page.target.returnPressed.emit()
    assert (strip.result.layer, strip.result.head) == other
    again = open_scene(qtbot, window, {**saved.to_json(), "head": [1, 1]}, timeout=60_000)
    qtbot.waitUntil(lambda: again.masked.lens.heads.where.result is not None
                    and (again.masked.lens.heads.where.result.layer, again.masked.lens.heads.where.result.head) == (1, 1),
                    timeout=30_000)
    for bad, why in (([1], "two whole numbers"), ([0, True], "two whole numbers"), ([0, -1], "two whole numbers")):
        with pytest.raises(SceneError, match=why):
            check_scene({**saved.to_json(), "head": bad}, "hand-made")
    with pytest.raises(SceneError, match='it needs "lab": "heads"'):
        check_scene({**saved.to_json(), "lab": "grid", "head": [0, 0]}, "hand-made")
    for bad in ({"mean_over": "zero"}, {"lab": "grid", "head": None, "mean_over": "corpus"}):
        with pytest.raises(SceneError, match="'mean_over' is what the lab's heads page knocks a head out to"):
            check_scene({**saved.to_json(), **bad}, "hand-made")
    heads = again.masked.lens.heads  # knocked out to the corpus's means: asked again, the table and the strip
    with qtbot.waitSignal(heads.where.shown, timeout=60_000):
        heads.over.setCurrentText("its mean over the corpus")
    assert heads.result.mean_over == heads.where.result.mean_over == "corpus"
    assert "to its mean over held-out sentences of the corpus" in heads.note.text()
    assert again.current_scene().mean_over == "corpus"
    corpus = handle.head_ablation("he drove the [MASK] to town", None, None, "corpus")
    np.testing.assert_allclose(heads.table.values, corpus.effect, atol=1e-5)


def test_the_heads_of_a_run_against_its_export_compare_head_by_head(qtbot, window, contextual_runs,  # noqa: F811
                                                                     tmp_path):
    """Model against model: a GPT run and the Hugging Face folder it exports to have the same heads; B's table, and
    A − B (zero everywhere here: the same network), and a double-click on B's table opens B's head; a compared
    model of other layers or heads is said and A's table stays."""
    from engine.cli.export import export_hf

    other = export_hf(contextual_runs["gpt"][0], tmp_path / "hf-gpt")
    load(qtbot, window, contextual_runs["gpt"][0], other)
    panel = open_scene(qtbot, window, {"view": "next", "sentences": ["the cat sat on the"], "models": ["gpt", "hf-gpt"],
                                       "contextual_model": "gpt", "lab": "heads", "compare": "hf-gpt",
                                       "show": "A − B"}, timeout=60_000)
    page = panel.next.lens.heads
    qtbot.waitUntil(lambda: page.compared is not None, timeout=60_000)
    assert page.names == ("gpt", "hf-gpt") and page.show_which.isVisible()
    assert page.show_which.currentText() == "A − B" and "Shown: gpt − hf-gpt" in page.note.text()
    np.testing.assert_allclose(page.table.values, 0.0, atol=1e-4)
    assert "\nhf-gpt: P(" in page.note.text() and panel.current_scene().show == "A − B"
    page.show_which.setCurrentText("B")
    np.testing.assert_allclose(page.table.values, page.compared.effect, atol=1e-6)
    qtbot.waitUntil(lambda: page.where.result is not None and page.where.name == "hf-gpt", timeout=30_000)  # B's head
    with qtbot.waitSignal(window.attention.shown, timeout=30_000):
        page.table.cellDoubleClicked.emit(0, 0)
    assert window.attention.model.currentText() == "hf-gpt"


def test_attribution_sets_each_method_of_a_compared_model_below_model_as(qtbot, window, contextual_runs,  # noqa: F811
                                                                         tmp_path):
    """Model against model (two checkpoints, or a run against the folder it was exported to): each method's row
    of A has B's below it where the two read the same tokens, and the note says both predictions."""
    other = tiny_hf_folder(tmp_path / "hf-bert", contextual_runs, decoder=False)  # the same tokens
    load(qtbot, window, contextual_runs["bert"][0], other)
    panel = open_scene(qtbot, window, {"view": "masked", "sentences": ["he drove the [MASK] to town"],
                                       "models": ["bert", "hf-bert"], "contextual_model": "bert",
                                       "lab": "attribution", "compare": "hf-bert"}, timeout=60_000)
    page = panel.masked.lens.attribution
    assert page.compared is not None and page.compared.tokens == page.result.tokens
    assert header(page.table, "v") == ["integrated gradients · bert", "integrated gradients · hf-bert",
                                       "gradient × input · bert", "gradient × input · hf-bert",
                                       "gradient norm · bert", "gradient norm · hf-bert"]
    t = header(page.table).index("drove")
    assert page.table.item(1, t).text() == f"{page.compared.scores['integrated gradients'][t]:+.2f}"
    assert page.note.text().startswith("bert: P(") and "\nhf-bert: P(" in page.note.text()
    with qtbot.waitSignal(page.shown, timeout=30_000):
        panel.masked.compare.setChecked(False)  # A alone again: its three rows
    assert page.compared is None and page.table.rowCount() == 3


def test_an_lstm_and_an_nnlm_weigh_their_words_in_the_lab(qtbot, window, contextual_runs):  # noqa: F811
    """ELMo's and the NNLM's words can be weighed: an attribution scene of the Next token view opens on them, ELMo's
    layers fill the grid's page and the NNLM's (none to read through a head) say where to look, and the compared
    model's rows are the scene's B even when it loads after the scene opened (a stand-in's answer does not end the
    wait)."""
    text = "the cat sat on the mat and the dog"
    load(qtbot, window, contextual_runs["elmo"][0])
    panel = open_scene(qtbot, window, {"view": "next", "sentences": [text], "models": ["elmo", "nnlm-tiny"],
                                       "contextual_model": "elmo", "lab": "attribution", "compare": "nnlm-tiny"},
                       timeout=60_000)
    lab = panel.next.lens
    page = lab.attribution
    assert lab.wanted == "attribution" and page.asked[0] != ("elmo", "nnlm-tiny")  # a stand-in's B: still waiting
    load(qtbot, window, SHIPPED / "nnlm-tiny")
    qtbot.waitUntil(lambda: lab.wanted == "" and page.compared is not None, timeout=60_000)
    assert page.asked[0] == ("elmo", "nnlm-tiny") and page.result.tokens == ("<s>", *text.split())
    assert header(page.table, "v")[:2] == ["integrated gradients · elmo", "integrated gradients · nnlm-tiny"]
    before = len(page.compared.tokens) - panel.next.session.models["nnlm-tiny"].model.cfg.context
    assert [page.table.item(1, c).text() for c in range(1, before)] == ["+0.00"] * (before - 1)
    assert page.table.item(1, len(page.compared.tokens) - 1).text() != "+0.00"
    assert "Its window is its last 4 words" in page.note.text()
    whole = page.note.text()
    panel.set_presenting(True)  # a talk's step: the note says what the room must read, the method is in the tips
    brief = page.note.text()
    assert len(brief) < len(whole) * 0.7 and "Explained:" not in brief and "Each method's row" not in brief
    assert f"Towards '{page.result.target.strip()}': " in brief and "Its window is its last 4 words" in brief
    assert "\nnnlm-tiny: P(" in brief
    panel.set_presenting(False)
    assert page.note.text() == whole
    assert lab.grid.rowCount() == 3 and "elmo, the logit lens" in lab.grid_note.text()  # ELMo's layers: read
    assert "No grid for nnlm-tiny: nnlm-tiny (an NNLM) has one hidden layer" in lab.grid_note.text()  # (B: said)
    lab.show_which.setCurrentIndex(1)  # B, the NNLM: no layers to read through a head; its words are weighed
    assert "only its output reads" in lab.grid_note.text() and "the third tab" in lab.grid_note.text()
    lab.tracing.subject.setText("cat")  # ELMo traced: its LSTM layers' states put back word by word
    lab.trace()
    qtbot.waitUntil(lambda: lab.trace_result is not None, timeout=30_000)
    assert lab.tracing.note.text().startswith("elmo predicts") and lab.tracing.map.rowCount() == 3


def test_a_stand_in_that_cannot_weigh_words_does_not_end_an_attribution_scene(qtbot, window, contextual_runs):  # noqa: F811
    """A talk builds its steps while their models load: an n-gram model (which counts, and has no gradients) may
    stand in for the scene's ELMo. Its refusal is not the scene's failure: the page answers once ELMo is loaded
    (the talk's export waited for ever when it was)."""
    load(qtbot, window, SHIPPED / "ngram-kn3")
    panel = window.predictions
    window.tabs.setCurrentWidget(panel)
    lab = None
    with qtbot.assertNotEmitted(panel.failed, wait=200):
        panel.apply_scene(check_scene({"panel": "predictions", "view": "next", "sentences": ["the cat sat on the"],
                                       "models": ["elmo"], "contextual_model": "elmo", "lab": "attribution"}, "t"))
        lab = panel.next.lens
        qtbot.waitUntil(lambda: "no gradients" in lab.attribution.note.text(), timeout=30_000)
        assert lab.wanted == "attribution"  # still waiting for its own model
        load(qtbot, window, contextual_runs["elmo"][0])
        qtbot.waitUntil(lambda: lab.wanted == "" and lab.attribution.result is not None, timeout=60_000)
    assert lab.attribution.asked[0] == ("elmo",) and lab.attribution.result.tokens[0] == "<s>"


def test_by_words_is_a_choice_a_scene_keeps_and_a_model_reading_other_tokens_forces(qtbot, window, contextual_runs):  # noqa: F811
    """ELMo reads words, a GPT byte-level tokens: compared, both are shown by words, and the box says so (ticked, not
    to be unticked); comparing no more, the page is the user's choice again. A scene asks for words, and keeps it."""
    text = "the cat sat on the mat and the dog"
    load(qtbot, window, contextual_runs["elmo"][0], contextual_runs["gpt"][0])
    panel = open_scene(qtbot, window, {"view": "next", "sentences": [text], "models": ["elmo", "gpt"],
                                       "contextual_model": "elmo", "lab": "attribution", "compare": "gpt"},
                       timeout=60_000)
    page = panel.next.lens.attribution
    qtbot.waitUntil(lambda: page.compared is not None, timeout=60_000)
    assert page.compared.tokens != page.result.tokens and header(page.table)[-1] == "dog→"
    assert page.by_words.isChecked() and not page.by_words.isEnabled() and not page.by_words_wanted
    assert "only words compare" in page.by_words.toolTip()
    with qtbot.waitSignal(page.shown, timeout=30_000):
        panel.next.compare.setChecked(False)
    assert not page.by_words.isChecked() and page.by_words.isEnabled() and header(page.table)[0] == "<s>"
    assert "by_words" not in panel.current_scene().to_json()
    panel = open_scene(qtbot, window, {"view": "next", "sentences": [text], "models": ["gpt"],
                                       "contextual_model": "gpt", "lab": "attribution", "by_words": True},
                       timeout=60_000)
    qtbot.waitUntil(lambda: page.result is not None and page.asked[0] == ("gpt",), timeout=60_000)
    assert page.by_words.isChecked() and page.by_words.isEnabled() and header(page.table) == [
        *text.split()[:-1], "dog→"]
    assert panel.current_scene().by_words is True


def test_a_lab_scene_is_checked_when_read():
    from engine.api import LENS_MEASURES

    assert tuple(LENS_MEASURES) == MEASURES
    base = {"panel": "predictions", "view": "masked", "sentences": ["a [MASK]"], "models": []}
    with pytest.raises(SceneError, match="'measure' 'loss'"):
        check_scene({**base, "lab": "grid", "measure": "loss"}, "s")
    with pytest.raises(SceneError, match="masked or next view"):
        check_scene({**base, "view": "probability", "lab": "grid"}, "s")
    with pytest.raises(SceneError, match="'lab' 'heatmap'"):
        check_scene({**base, "lab": "heatmap"}, "s")
    assert check_scene({**base, "lab": "trace", "subject": "France"}, "s").subject == "France"
    with pytest.raises(SceneError, match="'foil' must be text"):
        check_scene({**base, "lab": "attribution", "foil": 3}, "s")
    assert check_scene({**base, "lab": "attribution", "foil": "is"}, "s").foil == "is"
    assert check_scene({**base, "lab": "attribution", "by_words": True}, "s").by_words is True
    with pytest.raises(SceneError, match="'by_words' must be true, false or null"):
        check_scene({**base, "lab": "attribution", "by_words": "yes"}, "s")
    with pytest.raises(SceneError, match="needs \"lab\": \"attribution\""):
        check_scene({**base, "lab": "grid", "by_words": True}, "s")


def test_a_tuned_lens_run_shows_as_a_second_row_set_below_the_logit_lens(qtbot, window, contextual_runs,  # noqa: F811
                                                                        topic_corpus, tmp_path):
    from tests.engine.training.test_tuned_lens import train_lens

    finished, _ = train_lens(contextual_runs["bert"][0], topic_corpus, tmp_path / "lens", steps=10)
    assert finished.status == "completed"
    load(qtbot, window, tmp_path / "lens")
    panel = open_scene(qtbot, window, {"view": "masked", "sentences": ["he drove the [MASK] to town"],
                                       "models": ["lens"], "contextual_model": "lens", "lab": "grid", "lens": "both"})
    lab = panel.masked.lens
    rows = header(lab.grid, "v")
    assert rows == ["output", "layer 1", "embeddings", "tuned · layer 1", "tuned · embeddings"]
    assert "tuned lens below" in lab.grid_note.text()
    lab.grid.cell_clicked.emit(0, 1)  # the bottom row: the embeddings through their translator
    assert lab.detail.text().startswith("lens, tuned lens: embeddings")
    assert panel.current_scene().lens == "both"
    shot(qtbot, window, "lab-tuned-lens")


def test_a_next_token_view_saved_as_a_scene_keeps_its_own_model_and_the_one_it_compares_with(
        qtbot, window, contextual_runs):  # noqa: F811
    """Talk → Add this view on the Next token view: the step must open on that view's model (the Masked LM view's,
    a BERT, was saved before: the step then opened on another model than the one on screen)."""
    load(qtbot, window, contextual_runs["bert"][0], contextual_runs["gpt"][0])
    panel = open_scene(qtbot, window, {"view": "next", "sentences": ["he drove the truck to the"],
                                       "models": ["bert", "gpt"], "contextual_model": "gpt"})
    assert panel.masked.model.currentText() == "bert"  # the other view's model
    saved = panel.current_scene()
    assert (saved.view, saved.contextual_model, saved.compare) == ("next", "gpt", None)
    masked = open_scene(qtbot, window, {"view": "masked", "sentences": ["he drove the [MASK] to town"],
                                        "models": ["bert", "gpt"], "contextual_model": "bert"}).current_scene()
    assert (masked.view, masked.contextual_model) == ("masked", "bert")
