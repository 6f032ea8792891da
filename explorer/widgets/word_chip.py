"""A word of the user's text as a button (the polysemy lens's words to select, the masked view's words to mask).

A button is as wide as its text: one "word" of 3,000 letters (pasted text with no spaces) made a button 22,000 px
wide at the normal type. It laid the lens's panel out far past the window's edge, and
every repaint drew a bevel that long through the style's pixmap cache, pushing every other control's out of it:
the chaos bench's longest paints (bench/robustness/RESULTS.md). A chip shows at most ``CHIP_CHARS`` characters
and says the whole word in its tooltip; ``chip_word`` gives the word back."""

from __future__ import annotations

from PySide6.QtWidgets import QToolButton, QWidget

from explorer.shortened import shortened

CHIP_CHARS = 24  # the characters a chip shows (a longer word: its start and "…")
WORD = "word"  # the property holding the chip's whole word


def word_chip(word: str, checkable: bool = False) -> QToolButton:
    """A button for ``word``: its text cut to ``CHIP_CHARS`` (the whole word in its tooltip), an ampersand shown
    as one (Qt reads "&" in a button's text as a keyboard shortcut's mark)."""
    chip = QToolButton()
    shown = shortened(word, CHIP_CHARS)
    chip.setText(shown.replace("&", "&&"))
    chip.setProperty(WORD, word)
    if shown != word:
        chip.setToolTip(word)
    chip.setCheckable(checkable)
    return chip


def chip_word(widget: QWidget | None) -> str | None:
    """The whole word of a chip made by ``word_chip`` (None for any other widget)."""
    if not isinstance(widget, QToolButton):
        return None
    word = widget.property(WORD)
    return word if isinstance(word, str) else None
