"""Tokens with probability bars, as HTML (the predictions views' results)."""

from __future__ import annotations

import html

BAR = "#4c78a8"


def bars(rows: list[tuple[str, float]], link: str = "") -> str:
    """Tokens with probability bars, as an HTML table (``link``: each token links to it)."""
    out = ["<table cellspacing='1'>"]
    for token, p in rows:
        label = html.escape(token)
        if link:
            label = f"<a href='{link}'>{label}</a>"
        out.append(f"<tr><td>{label}&nbsp;</td><td><table cellspacing='0'><tr><td bgcolor='{BAR}' "
                   f"width='{max(1, int(180 * p))}'>&nbsp;</td></tr></table></td><td>&nbsp;{p:.1%}</td></tr>")
    out.append("</table>")
    return "".join(out)


def whole_word(token: str, text_before: str) -> str:
    """A sub-word continuation shown with the word it completes ("##ing" after "runn" -> "runn·ing")."""
    if token.startswith("##"):
        stem = text_before.rstrip().rsplit(" ", 1)[-1]
        return f"{stem}·{token[2:]}" if stem else token[2:]
    return token


def sentence_case(reason: str) -> str:
    return reason[:1].upper() + reason[1:]
