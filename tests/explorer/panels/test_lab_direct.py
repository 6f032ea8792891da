"""The heads page's second measure: each head's direct effect on the logits (explorer/widgets/direct_table.py), with
each layer's MLP beside its heads, model against model, and the reason a post-LN model gives instead."""

import numpy as np
import pytest
from PySide6.QtCore import Qt

from explorer.scenes import SceneError, check_scene
from tests.explorer.panels.test_attention_predictions import load, shot
from tests.explorer.panels.test_lab import header, open_scene

TEXT = "the cat sat on the"


def test_a_direct_scene_shows_each_head_and_mlp_and_a_run_against_its_export(qtbot, window, contextual_runs,  # noqa: F811
                                                                            tmp_path):
    from engine.cli.export import export_hf

    window.resize(1200, 760)
    other = export_hf(contextual_runs["gpt"][0], tmp_path / "hf-gpt")
    load(qtbot, window, contextual_runs["gpt"][0], other)
    panel = open_scene(qtbot, window, {"view": "next", "sentences": [TEXT], "models": ["gpt", "hf-gpt"],
                                       "contextual_model": "gpt", "lab": "heads", "compare": "hf-gpt",
                                       "show": "A − B", "effect": "direct"}, timeout=60_000)
    page = panel.next.lens.heads
    qtbot.waitUntil(lambda: page.compared is not None, timeout=60_000)
    a = page.result.direct
    layers, heads = a.effect.shape
    assert page.effect_shown == "direct" and header(page.table) == [*(f"head {h}" for h in range(heads)), "MLP"]
    np.testing.assert_allclose(page.table.values, 0.0, atol=2e-4)  # the same network, heads and MLPs alike
    page.show_which.setCurrentText("A")
    handle = window.session.models["gpt"]
    expected = handle.direct_effects(TEXT)
    np.testing.assert_allclose(page.table.values[:, :heads], expected.effect, atol=1e-5)
    np.testing.assert_allclose(page.table.values[:, heads], expected.mlps, atol=1e-5)
    assert page.table.item(layers - 1, 0).text() == f"{expected.effect[0, 0]:+.2f}"  # layer 1 drawn at the bottom
    assert "straight into the logits" in page.table.item(0, 0).toolTip() and "knocked out" in page.table.item(0, 0).toolTip()
    assert page.table.item(0, heads).background().style() == Qt.BrushStyle.NoBrush  # the MLP column is not on the heads' colour scale
    assert "the heads together" in page.note.text() and "the MLPs" in page.note.text()
    rows = page.table.export_rows()  # the CSV: the direct effects, the MLP's last
    assert float(rows[1][-1]) == pytest.approx(float(expected.mlps[layers - 1]), abs=1e-4)
    strip = page.where
    qtbot.waitUntil(lambda: strip.result is not None, timeout=30_000)
    before = (strip.result.layer, strip.result.head)
    with qtbot.waitSignal(page.neurons.shown, timeout=30_000):
        page.table.cellClicked.emit(0, heads)  # the last layer's MLP: its neurons, in the head strip's place
    neurons = page.neurons.result
    assert neurons.layer == layers - 1 and neurons.total == pytest.approx(float(expected.mlps[layers - 1]), abs=1e-3)
    assert page.neurons.isVisible() and not strip.isVisible() and (strip.result.layer, strip.result.head) == before
    first = neurons.strongest(1)[0]
    assert f"#{first}" in header(page.neurons.table) and "neuron by neuron" in page.neurons.note.text()
    shot(qtbot, window, "lab-heads-direct-neurons")
    page.neurons.table.cellClicked.emit(0, 0)  # the neuron that writes most for the word: what makes it fire
    opened = page.neuron_window
    qtbot.waitUntil(lambda: opened is not None and opened.result is not None, timeout=60_000)
    assert opened.isVisible() and (opened.result.layer, opened.result.neuron) == (layers - 1, page.neurons.chosen[0])
    assert opened.model.text() == "gpt" and opened.layer.value() == layers and opened.layer.maximum() == layers
    assert f"neuron {page.neurons.chosen[0]} of" in opened.summary.text()
    opened.close()
    page.table.cellClicked.emit(layers - 1, 0)  # a head again: its strip back
    assert strip.isVisible() and not page.neurons.isVisible()
    saved = panel.current_scene()
    assert saved.effect == "direct" and check_scene(saved.to_json(), "saved").effect == "direct"
    shot(qtbot, window, "lab-heads-direct")
    page.effect.setCurrentIndex(0)  # the knock-outs again, from the same answer
    assert header(page.table) == [f"head {h}" for h in range(heads)]
    np.testing.assert_allclose(page.table.values, page.result.effect, atol=1e-6)
    assert panel.current_scene().effect is None
    for bad, why in (({"effect": "total"}, "'effect' is what the lab's heads page shows"),
                     ({"lab": "grid", "effect": "direct"}, "'effect' is what the lab's heads page shows")):
        with pytest.raises(SceneError, match=why):
            check_scene({**saved.to_json(), "head": None, **bad}, "hand-made")


def test_a_post_ln_model_says_why_it_has_no_direct_effects(qtbot, window, contextual_runs):  # noqa: F811
    load(qtbot, window, contextual_runs["bert"][0])
    panel = open_scene(qtbot, window, {"view": "masked", "sentences": ["he drove the [MASK] to town"],
                                       "models": ["bert"], "contextual_model": "bert", "lab": "heads",
                                       "effect": "direct"}, timeout=60_000)
    page = panel.masked.lens.heads
    assert page.result is not None and page.result.direct is None
    assert "post-LN" in page.note.text() and page.table.rowCount() == 0
    page.effect.setCurrentIndex(0)
    assert page.table.rowCount() == page.result.effect.shape[0]  # its knock-outs
