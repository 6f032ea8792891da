"""Colours made readable on their background: WCAG's contrast ratio reached, the hue kept, and nothing changed
where the colour reads already. The app's palettes were picked on white; on the dark theme and a talk's black the
darker ones faded, and on white the lighter ones did."""

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage, QPalette

from explorer.widgets.readable import MARKS, TALK_TEXT, TEXT, contrast, readable

# the app's palettes (sentences, clusters, heads, curves) and the backgrounds they are drawn on: the light theme's,
# the dark theme's, a talk's
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#98df8a", "#4c72b0",
           "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860"]
BACKGROUNDS = ["#ffffff", "#1e1e1e", "#0b0b0b", "#000000"]


def test_contrast_is_wcags_ratio():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#ffffff", "#000000") == pytest.approx(21.0)
    assert contrast("#777777", "#777777") == pytest.approx(1.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the grey WCAG's examples give for AA


@pytest.mark.parametrize("background", BACKGROUNDS)
@pytest.mark.parametrize("ratio", [MARKS, TEXT, TALK_TEXT])
def test_every_colour_of_the_app_reaches_the_ratio_on_every_background_and_keeps_its_hue(background, ratio):
    for colour in PALETTE:
        out = readable(colour, background, ratio)
        assert contrast(out, background) >= ratio, (colour, background, out)
        before, after = QColor(colour), QColor(out)
        if before.hsvSaturation() > 60:  # (a grey has no hue to keep)
            turn = abs(before.hsvHue() - after.hsvHue())
            assert min(turn, 360 - turn) <= 12, (colour, out)  # blue stays blue, red red
        if contrast(colour, background) >= ratio:
            assert out == colour  # only what falls short is moved


def test_it_moves_towards_white_on_black_and_towards_black_on_white_by_no_more_than_needed():
    dark = readable("#393b79", "#000000", MARKS)  # a navy head on a talk's black
    light = readable("#98df8a", "#ffffff", MARKS)  # a pale green score curve on white
    assert QColor(dark).lightness() > QColor("#393b79").lightness()
    assert QColor(light).lightness() < QColor("#98df8a").lightness()
    assert contrast(dark, "#000000") < MARKS + 0.15 and contrast(light, "#ffffff") < MARKS + 0.15  # no further


def test_a_background_nothing_can_reach_gets_the_best_there_is():
    assert readable("#777777", "#808080", TALK_TEXT) in ("#000000", "#ffffff")


def test_an_attention_heads_lines_are_readable_on_a_talks_black(qtbot):
    """Head 10's navy (#393b79, 2.1:1 on black) drawn on the talk's near-black: its strongest line stands out."""
    from explorer.theme import HIGH_CONTRAST, palette_with
    from explorer.widgets.head_view import HeadView

    view = HeadView()
    qtbot.addWidget(view)
    view.setPalette(palette_with(view.palette(), HIGH_CONTRAST))
    view.resize(400, 300)
    weights = np.zeros((11, 2, 2))
    weights[10] = [[0.0, 1.0], [1.0, 0.0]]  # one head, two full-weight lines
    view.show_layer(("a", "b"), (0, 0), weights, [10])
    image: QImage = view.grab().toImage()
    base = view.palette().color(QPalette.ColorRole.Base)
    middle = [image.pixelColor(x, y) for x in range(190, 210) for y in range(0, 300)]  # where the lines cross
    assert max(contrast(c, base) for c in middle) >= MARKS
