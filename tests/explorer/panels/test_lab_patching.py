"""The heads page patched from another sentence: each head's output replaced by its output on a contrast sentence of
as many tokens (activation patching), the table and the strip under it as the engine gives them, kept by a scene."""

import numpy as np
import pytest

from explorer.scenes import SceneError, check_scene
from tests.explorer.panels.test_attention_predictions import load, shot
from tests.explorer.panels.test_lab import open_scene

TEXT, OTHER = "he drove the [MASK] to town", "she drove the [MASK] to town"


def test_a_patching_scene_shows_each_heads_cost_and_the_strip_patches_token_by_token(qtbot, window,  # noqa: F811
                                                                                     contextual_runs):
    window.resize(1200, 760)
    load(qtbot, window, contextual_runs["bert"][0])
    panel = open_scene(qtbot, window, {"view": "masked", "sentences": [TEXT], "models": ["bert"],
                                       "contextual_model": "bert", "lab": "heads", "mean_over": "contrast",
                                       "contrast": OTHER}, timeout=60_000)
    page = panel.masked.lens.heads
    handle = window.session.models["bert"]
    expected = handle.head_ablation(TEXT, contrast=OTHER)
    assert (page.result.mean_over, page.result.contrast) == ("contrast", OTHER)
    np.testing.assert_allclose(page.table.values, expected.effect, atol=1e-5)
    assert page.contrast_row.isVisible() and page.contrast.text() == OTHER
    assert f"its output on “{OTHER}”" in page.note.text()
    strip = page.where
    qtbot.waitUntil(lambda: strip.result is not None, timeout=30_000)
    layer, head = strip.result.layer, strip.result.head
    np.testing.assert_allclose(strip.result.effect, handle.head_positions(TEXT, layer, head, contrast=OTHER).effect,
                               atol=1e-5)
    assert "patched from" in strip.note.text()
    saved = panel.current_scene()
    assert (saved.mean_over, saved.contrast) == ("contrast", OTHER)
    shot(qtbot, window, "lab-heads-patched")
    with qtbot.waitSignal(page.failed, timeout=30_000):  # a sentence of other length: the engine's reason
        page.contrast.setText("she drove")
        page.contrast.returnPressed.emit()
    assert "as many tokens as the text" in page.note.text()
    page.contrast.setText("")
    page.contrast.returnPressed.emit()
    assert "Type a sentence of as many tokens" in page.note.text()
    with qtbot.waitSignal(page.shown, timeout=30_000):
        page.over.setCurrentText("its mean over the text")
    assert page.result.mean_over == "text" and not page.contrast_row.isVisible()
    with pytest.raises(SceneError, match="it needs one"):
        check_scene({**saved.to_json(), "contrast": None}, "hand-made")
