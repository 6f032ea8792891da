"""The heads page's second measure: each head's direct effect on the logits (engine.api.direct_effects, carried by
each knock-out answer): what the head writes into the stream the output reads, read through the final norm and the
head — with a column for each layer's MLP, which the heads' colours are not scaled by. Exact only in pre-LN networks;
a post-LN one (BERT, MiniLM) answers with the reason."""

from __future__ import annotations

from typing import Any

import numpy as np

EFFECTS = {"knocked out (whole effect)": "knockout", "direct, into the logits": "direct"}  # words -> a scene's
EFFECT_TIP = ("knocked out: what removing the head costs the prediction, through every layer above it as well; "
              "direct: what the head writes straight into the logits (its output read through the final norm, its "
              "scale held at this text's, and the output head: TransformerLens's direct logit attribution), exact in "
              "pre-LN networks (GPT-2, Llama, gpt-tiny), not in BERT's post-LN blocks")
MLP = "MLP"  # the last column's header


def direct_text(name: str, result: Any, brief: bool = False) -> str:
    """Under the table: what is explained, the heads that write the most for it, and the other parts' shares (a
    talk's: the heads and the MLPs only)."""
    d = result.direct
    if d is None:
        return f"{name}: {result.direct_refusal}."
    strongest = ", ".join(f"layer {layer + 1} head {h} {v:+.2f}" for layer, h, v in d.strongest(3) if v > 0) or "none"
    most = int(np.argmax(np.abs(d.mlps)))
    mlps = f"the MLPs {float(d.mlps.sum()):+.2f} (layer {most + 1}'s {float(d.mlps[most]):+.2f})"
    head = f"{name}: {d.explained} = {d.value:+.2f}"
    if brief:
        return f"{head}. Written straight into the logits: the heads together {float(d.effect.sum()):+.2f} (most: " \
               f"{strongest}); {mlps}."
    return (f"{head}. Written straight into the logits: the heads together {float(d.effect.sum()):+.2f} (most: "
            f"{strongest}), {mlps}, the token's own embedding {d.embedding:+.2f}, the biases {d.biases:+.2f}; they "
            "add up to the model's. Each head's output read through the final norm (its scale held at this text's) "
            "and the output head; what a head does through the layers above it is in its knock-out.")


def direct_cells(names: tuple[str, ...], a: Any, b: Any, show: str) -> tuple[
        list[list[str]], np.ndarray, np.ndarray, tuple[str, ...], list[list[str]]]:
    """The table of A's, B's or A − B's direct effects (``a``/``b``: knock-out answers carrying them; ``b`` None
    where there is none to show): (texts, colour values in −1..1 with the MLP column uncoloured, the values as
    exported, the columns' names, the tips), layer 0 first."""
    shown = b if show == "B" else a
    if show == "A − B":
        heads, mlps = a.direct.effect - b.direct.effect, a.direct.mlps - b.direct.mlps
    else:
        heads, mlps = shown.direct.effect, shown.direct.mlps
    layers, count = heads.shape
    values = np.concatenate([heads, mlps[:, None]], axis=1)
    span = float(np.abs(heads).max()) or 1.0
    colours = np.concatenate([heads / span, np.full((layers, 1), np.nan)], axis=1)
    texts = [[f"{values[layer, c]:+.2f}" for c in range(count + 1)] for layer in range(layers)]

    def tip(layer: int, c: int) -> str:
        part = f"head {c}" if c < count else "the MLP"
        if show == "A − B":
            return (f"layer {layer + 1}, {part}: writes {values[layer, c]:+.3f} more of {a.direct.explained} into "
                    f"{names[0]}'s logits than into {names[1]}'s (red: more in A)")
        name = names[1] if show == "B" else names[0]
        d = shown.direct
        own = d.effect[layer, c] if c < count else d.mlps[layer]
        text = f"{name}, layer {layer + 1}, {part}: writes {own:+.3f} of {d.explained} straight into the logits"
        if c < count:
            return text + (f"; knocked out, it costs {shown.effect[layer, c]:+.3f} of {shown.explained} (its whole "
                           "effect, through the layers above too). Double-click: where it attends")
        return text + " (not coloured: the colours are the heads')"
    tips = [[tip(layer, c) for c in range(count + 1)] for layer in range(layers)]
    return texts, colours, values, (*(f"head {h}" for h in range(count)), MLP), tips
