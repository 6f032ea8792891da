"""A highlighted cell (a probe's changed prediction, the ablation's best run, the head atlas's most extreme head)
reads in either theme: its text is chosen for its light background, and a cell that is not highlighted keeps
the theme's colours. With only the background set, the dark theme's light text on the light yellow read 1.1:1,
and the ablation's other cells were painted white."""

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from engine.api import HeadStats
from explorer.widgets.readable import TEXT, contrast


def shown_colours(table, item):
    """The text and background ``item`` is drawn with: its own where it has them, else the table's theme's."""
    palette = table.palette()
    foreground = item.data(Qt.ItemDataRole.ForegroundRole)
    background = item.data(Qt.ItemDataRole.BackgroundRole)
    text = QColor(foreground.color()) if foreground is not None else palette.color(QPalette.ColorRole.Text)
    base = QColor(background.color()) if background is not None else palette.color(QPalette.ColorRole.Base)
    return text, base


def test_highlighted_cells_read_on_the_dark_theme_and_the_others_keep_its_colours(qtbot):
    from explorer.theme import apply_theme
    from explorer.widgets.finetune_results import AblationTable, ProbeTable
    from explorer.widgets.head_atlas import HeadAtlas

    app = QApplication.instance()
    try:
        apply_theme(app, "dark")
        probes, ablation, atlas = ProbeTable(), AblationTable(), HeadAtlas()
        for widget in (probes, ablation, atlas):
            qtbot.addWidget(widget)
        probes.add(10, ["a text"], ["sport"], [0.6])
        probes.add(20, ["a text"], ["business"], [0.7])  # changed: highlighted
        ablation.start("topics", [("full", "full"), ("scratch", "scratch")])
        ablation.update_run("full", 0.9, 100, "done")
        ablation.update_run("scratch", 0.6, 100, "done")
        rng = np.random.default_rng(0)
        atlas.fill([HeadStats(layer, head, *rng.random(9)) for layer in range(2) for head in range(2)])
        highlighted = [(probes.table, probes.table.item(0, 1)), (ablation.table, ablation.table.item(0, 2))]
        highlighted += [(atlas, atlas.item(r, c)) for r in range(atlas.rowCount()) for c in range(2, atlas.columnCount())
                        if atlas.item(r, c).data(Qt.ItemDataRole.BackgroundRole) is not None]
        assert len(highlighted) >= 2 + atlas.columnCount() - 2
        for table, item in highlighted:
            text, base = shown_colours(table, item)
            assert base.lightness() > 180 and contrast(text, base) >= TEXT, item.text()
        other = ablation.table.item(1, 2)  # not the best: the theme's dark cell, not white
        assert other.data(Qt.ItemDataRole.BackgroundRole) is None
        text, base = shown_colours(ablation.table, other)
        assert base.lightness() < 128 and contrast(text, base) >= TEXT
    finally:
        apply_theme(app, "light")
