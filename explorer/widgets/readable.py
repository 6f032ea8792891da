"""Colours that stay readable on the background they are drawn on.

The app's colours for sentences, clusters, heads and curves were picked on white. On the dark theme's grey, and on
a talk's black, the darker ones faded (the first sentence's blue, #1f77b4, is 4.1:1 against a talk's black, an
attention head's navy #393b79 1.6:1), and on white the lighter ones did (orange #ff7f0e is 2.4:1 against white).
``readable`` moves a colour towards white on a dark background, or towards black on a light one, only as far as the
contrast asked for, so each keeps its hue and the colours stay told apart.

Contrast is WCAG 2's ratio of relative luminances: text needs 4.5:1 (its AA level); points and lines 3:1 (its
level for what is not text); a talk asks 7:1 of its text (the AAA level: a projector washes colours out)."""

from __future__ import annotations

import functools
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableWidgetItem

TEXT = 4.5
TALK_TEXT = 7.0
MARKS = 3.0
_STEPS = 12  # halvings of the mix searched: a step of 1/4096, below one level of 8-bit colour


def luminance(colour: Any) -> float:
    """WCAG 2's relative luminance of ``colour`` (anything QColor takes): 0 for black, 1 for white."""
    c = QColor(colour)

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF())


def contrast(a: Any, b: Any) -> float:
    """WCAG 2's contrast ratio of two colours, from 1 (the same luminance) to 21 (black on white)."""
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def mix(colour: QColor, background: QColor, amount: float) -> QColor:
    """``colour`` over ``background`` at opacity ``amount``, as one opaque colour."""
    a = max(0.0, min(1.0, amount))
    return QColor.fromRgbF(*(a * getattr(colour, c)() + (1 - a) * getattr(background, c)() for c in ("redF", "greenF", "blueF")))


def readable(colour: Any, background: Any, ratio: float = TEXT) -> str:
    """``colour`` (as "#rrggbb"), moved towards white or black, whichever stands out more from ``background``, by
    the least that gives a contrast of ``ratio`` against it; unchanged when it has that already. Where even white or
    black falls short (a mid-grey background and a high ratio), that one."""
    return _readable(str(QColor(colour).name()), str(QColor(background).name()), float(ratio))


@functools.lru_cache(maxsize=1024)  # a few palettes on a few backgrounds, asked again at every redraw
def _readable(colour: str, background: str, ratio: float) -> str:
    c, bg = QColor(colour), QColor(background)
    if contrast(c, bg) >= ratio:
        return str(c.name())
    white, black = QColor("#ffffff"), QColor("#000000")
    towards = white if contrast(white, bg) >= contrast(black, bg) else black
    if contrast(towards, bg) < ratio:
        return str(towards.name())
    low, high = 0.0, 1.0
    for _ in range(_STEPS):
        middle = (low + high) / 2
        if contrast(mix(towards, c, middle), bg) >= ratio:
            high = middle
        else:
            low = middle
    out = mix(towards, c, high)
    # (the name rounds each channel to 8 bits, which can lose the last bit of contrast: one more step if it did)
    while contrast(out.name(), bg) < ratio and high < 1.0:
        high = min(1.0, high + 1 / 255)
        out = mix(towards, c, high)
    return str(out.name())


def readable_all(colours: list[str], background: Any, ratio: float = TEXT) -> list[str]:
    """Each of ``colours`` readable on ``background`` (see ``readable``), in the same order."""
    return [readable(colour, background, ratio) for colour in colours]


def text_on(background: Any) -> str:
    """Black or white, whichever stands out more from ``background``: the text of a cell or a chip given a colour
    of its own (a highlight's light yellow kept the dark theme's light text, and read 1.1:1)."""
    return "#000000" if contrast("#000000", background) >= contrast("#ffffff", background) else "#ffffff"


def highlight(item: QTableWidgetItem, colour: str | None) -> None:
    """A table cell on ``colour`` with text that reads on it (``text_on``), or (None) in the theme's colours again."""
    if colour is None:
        item.setData(Qt.ItemDataRole.BackgroundRole, None)
        item.setData(Qt.ItemDataRole.ForegroundRole, None)
    else:
        item.setBackground(QColor(colour))
        item.setForeground(QColor(text_on(colour)))
