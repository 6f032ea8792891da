"""The head atlas's repeats: a text typed twice gives each head's share of attention from a repeated token to its
earlier copy and to what followed it (induction), as the engine computes them; a text with no repeated token shows
"–" there, sorted last."""

import math

import numpy as np

from engine import api
from tests.explorer.panels.test_attention_predictions import load, shot

REPEATED = "the red fox ran home . the red fox ran home ."


def test_the_atlas_shows_copy_and_induction_shares_for_a_repeated_text(qtbot, window, contextual_runs):  # noqa: F811
    panel = window.attention
    window.tabs.setCurrentWidget(panel)
    load(qtbot, window, contextual_runs["gpt"][0])
    panel.sentence.setText(REPEATED)
    qtbot.waitUntil(lambda: panel.result is not None and len(panel.result.maps.tokens) > 10, timeout=30_000)
    panel.views.setCurrentIndex(2)
    atlas = panel.atlas
    header = [atlas.horizontalHeaderItem(c).text() for c in range(atlas.columnCount())]
    copy, induction = header.index("→ earlier copy"), header.index("induction")
    assert "induction heads" in atlas.horizontalHeaderItem(induction).toolTip()
    expected = {(h.layer, h.head): h for h in api.head_table(panel.result.maps.weights, panel.result.maps.tokens)}
    for r in range(atlas.rowCount()):
        h = expected[int(atlas.item(r, 0).value) - 1, int(atlas.item(r, 1).value)]
        assert not math.isnan(h.induction)
        assert atlas.item(r, induction).text() == f"{h.induction:.3f}" and atlas.item(r, copy).text() == f"{h.to_copy:.3f}"
    shot(qtbot, window, "attention-atlas-repeats")
    panel.sentence.setText("the cat")  # (no token twice)
    qtbot.waitUntil(lambda: panel.result is not None and len(panel.result.maps.tokens) < 8, timeout=30_000)
    assert len(set(panel.result.maps.tokens)) == len(panel.result.maps.tokens)
    qtbot.waitUntil(lambda: atlas.rowCount() > 0 and atlas.item(0, induction).text() == "–", timeout=30_000)
    atlas.sortItems(induction)
    assert all(atlas.item(r, induction).value == -np.inf for r in range(atlas.rowCount()))
