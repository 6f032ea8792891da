"""The typed sentences' colours in the lens's neighbours are readable on the background they are shown on: the
light theme's white, the dark theme's grey, a talk's black (where 7:1 is asked of them); a change of theme writes
them again. The first sentence's blue was 4.1:1 on a talk's black, the third one's green 3.4:1 on white."""

import re
from collections import namedtuple

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from explorer.panels.polysemy.answer import ContextualAnswer
from explorer.widgets.readable import TALK_TEXT, TEXT, contrast

Hit = namedtuple("Hit", "similarity sentence")


def an_answer(groups: int) -> ContextualAnswer:
    typed = [(f"Sentence {g} with the bank in it.", [Hit(0.9 - g / 100, f"A corpus bank, number {g}.")])
             for g in range(groups)]
    return ContextualAnswer(word="bank", layer=2, groups=typed, map_key=("m", "bank", "pca"), occurrence_map=None,
                            map_error="no map", others=[("other", 3, typed)], by_layer=[1.0, 0.5, 0.2])


def colours_in(browser) -> set[str]:
    return set(re.findall(r"(?<![-\w])color:(#[0-9a-fA-F]{6})", browser.toHtml()))  # (not a border's colour)


def lowest_contrast(browser) -> float:
    background = browser.palette().color(QPalette.ColorRole.Base)
    colours = colours_in(browser)
    assert len(colours) >= 5  # (the sentences' own colours: one per typed sentence shown)
    return min(contrast(c, background) for c in colours)


def test_the_sentences_colours_are_readable_in_either_theme_and_in_a_talk(qtbot, window):
    from explorer.theme import HIGH_CONTRAST, apply_theme, palette_with

    panel = window.polysemy
    panel._show_contextual(an_answer(6))
    assert lowest_contrast(panel.results) >= TEXT and lowest_contrast(panel.compare) >= TEXT  # white
    app = QApplication.instance()
    try:
        apply_theme(app, "dark")
        # written again once the new palette has reached the widgets (with their events)
        qtbot.waitUntil(lambda: panel.results.palette().color(QPalette.ColorRole.Base).lightness() < 60, timeout=2_000)
        qtbot.waitUntil(lambda: lowest_contrast(panel.results) >= TEXT, timeout=2_000)
        assert lowest_contrast(panel.results) >= TEXT and lowest_contrast(panel.compare) >= TEXT  # written again
    finally:
        apply_theme(app, "light")
    panel.setPalette(palette_with(panel.palette(), HIGH_CONTRAST))  # a talk's black, and its layout
    panel.set_presenting(True)
    assert lowest_contrast(panel.results) >= TALK_TEXT and lowest_contrast(panel.compare) >= TALK_TEXT
    assert "Sentence 0 with the bank" in panel.results.toPlainText()
