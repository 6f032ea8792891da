"""Under the heads table: where one head matters (engine.api.head_positions). The head chosen in the table (its
strongest at first) knocked out at one token at a time, a cell per token coloured by what that costs the
prediction (red: the head's output there pushed it up), and the note says where it matters most."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from PySide6.QtWidgets import QWidget

from explorer.widgets.row_strip import RowStrip

SHOWN_TOKENS = 2  # the tokens named in the note


def positions_text(name: str, result: Any, brief: bool = False) -> str:
    """The note over the strip: which head, and the tokens where knocking it out costs most."""
    head = f"Where {name}'s layer {result.layer + 1} head {result.head} matters"
    order = [int(t) for t in np.argsort(-result.effect)[:SHOWN_TOKENS] if result.effect[t] >= 0.005]  # (shown: +0.01)
    most = ", ".join(f"'{result.tokens[t].strip() or '␣'}' {result.effect[t]:+.2f}" for t in order) or "no single token"
    if brief:
        return f"{head}: {most} (every token: {result.every:+.2f})."
    how = f"patched from “{result.contrast}”" if result.mean_over == "contrast" else "knocked out"
    return (f"{head}, {how} at one token at a time: most at {most}; at every token together "
            f"{result.every:+.2f} of {result.explained}. Click another head above to see where it matters.")


class HeadPositionsStrip(RowStrip):
    """One row of cells, a token each: what the head's knock-out at that token alone costs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Click a head above to see at which tokens it matters.",
                         "The head knocked out at one token at a time (its output there replaced by its mean, over "
                         "the text or the corpus, or its output on another sentence, as chosen above): what that "
                         "costs the prediction. Red: the head's output at that token pushed it up.",
                         "head-by-token", parent)
        self.name = ""
        self.brief = False

    def ask(self, handle: Any, text: str, layer: int, head: int, target: str, foil: str,  # type: ignore[override]
            mean_over: str = "text", contrast: str = "") -> None:
        """Where ``handle``'s head ``head`` of ``layer`` (from 0) matters on ``text``, knocked out to its mean over
        ``mean_over`` ("text" or "corpus"), or ("contrast") patched from ``contrast``; a newer question supersedes."""
        super().ask((handle.name, text, layer, head, target, foil, mean_over, contrast),
                    f"knocking out {handle.name}'s layer {layer + 1} head {head} at one token at a time…",
                    functools.partial(handle.head_positions, text, layer, head, target or None, foil or None,
                                      "text" if contrast else mean_over, contrast or None))

    def set_brief(self, on: bool) -> None:
        self.brief = on
        if self.result is not None:
            self.note.setText(positions_text(self.name, self.result, on))

    def show_answer(self, asked: tuple[Any, ...], result: Any) -> None:
        self.name = asked[0]
        how = "patched from the other sentence" if result.mean_over == "contrast" else "knocked out"
        tips = [f"{self.name}, layer {result.layer + 1} head {result.head} {how} at '{token.strip() or '␣'}' "
                f"alone: {result.explained} changes by {-v:+.3f}"
                + (" (the position predicted)" if t == result.position else "")
                for t, (token, v) in enumerate(zip(result.tokens, result.effect, strict=True))]
        self.fill(result.effect, result.tokens, tips, f"layer {result.layer + 1} head {result.head}")
        self.note.setText(positions_text(self.name, result, self.brief))
