"""Refilling a table whose columns fit their contents does work in proportion to its cells, not to their square
(explorer/widgets/table_fill.py): the head atlas is filled again at every new sentence, model or corpus sample,
and filling the cells of its old rows made Qt measure each column again at every cell (0.9 s for a 6-layer,
12-head model, on the window's thread). Counted by the cells' answers to Qt (their ``data`` calls), not timed:
a refill asks about as much as the first fill did (in place it asked 155 times as much)."""

import numpy as np

from engine.api import HeadStats
from explorer.widgets import head_atlas


class Counted:
    calls = 0


def counting(base: type) -> type:
    class Counting(base):  # type: ignore[misc, valid-type]
        def data(self, role: int) -> object:
            Counted.calls += 1
            return super().data(role)

    return Counting


def asked(fill) -> int:
    Counted.calls = 0
    fill()
    return Counted.calls


def test_refilling_the_head_atlas_asks_its_cells_no_more_than_the_first_fill(qtbot, monkeypatch):
    monkeypatch.setattr(head_atlas, "_Number", counting(head_atlas._Number))
    atlas = head_atlas.HeadAtlas()
    qtbot.addWidget(atlas)
    atlas.resize(900, 500)
    atlas.show()
    rng = np.random.default_rng(0)
    stats = [HeadStats(layer, head, *rng.random(9)) for layer in range(6) for head in range(12)]

    def fill():
        atlas.fill(stats)
        qtbot.wait(10)  # the header's delayed resize and the paint

    first = asked(fill)
    again = [asked(fill) for _ in range(2)]
    assert atlas.rowCount() == 72 and atlas.item(71, 1) is not None
    assert first > 0 and max(again) <= 2 * first, (first, again)
