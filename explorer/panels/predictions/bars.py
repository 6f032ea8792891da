"""Tokens with probability bars, as HTML (the predictions views' results)."""

from __future__ import annotations

import html

from explorer.widgets.probability_bars import percent

BAR = "#4c78a8"


def bars(rows: list[tuple[str, float]], link: str = "") -> str:
    """Tokens with probability bars, as an HTML table (``link``: each token links to it)."""
    out = ["<table cellspacing='1'>"]
    for token, p in rows:
        label = html.escape(token)
        if link:
            label = f"<a href='{link}'>{label}</a>"
        out.append(f"<tr><td>{label}&nbsp;</td><td><table cellspacing='0'><tr><td bgcolor='{BAR}' "
                   f"width='{max(1, int(180 * p))}'>&nbsp;</td></tr></table></td><td>&nbsp;{percent(p)}</td></tr>")
    out.append("</table>")
    return "".join(out)


def whole_word(token: str, text_before: str) -> str:
    """How a predicted token reads. A WordPiece continuation ("##ing") glued to the word typed before the
    [MASK] ("runn[MASK]" -> "runn + ing"); after a space it completes no word, so it shows as a piece
    ("…s"), never as a made-up word ("to·s" read as "tos")."""
    if not token.startswith("##"):
        return token
    piece = token[2:]
    if text_before and not text_before[-1].isspace():
        stem = text_before.rsplit(None, 1)[-1] if text_before.split() else ""
        return f"{stem} + {piece}" if stem else f"…{piece}"
    return f"…{piece}"


def sentence_case(reason: str) -> str:
    return reason[:1].upper() + reason[1:]
