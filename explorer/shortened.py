"""The user's text cut to a length a label can show (no Qt here: decks use it as well as widgets)."""

from __future__ import annotations


def shortened(text: str, at_most: int) -> str:
    """``text`` as a one-line label shows it: at most ``at_most`` characters, the rest said by "…"."""
    return text if len(text) <= at_most else text[: at_most - 1] + "…"
