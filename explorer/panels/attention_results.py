"""What the attention panel's worker computes for one sentence (off the GUI thread): the maps, the head
statistics, every head's thumbnail, the layer averages and the rollout — and, when a second model is
compared, its averages and (same heads) its thumbnails and the head-by-head difference."""

from __future__ import annotations

from typing import Any

import numpy as np

THUMBNAIL = 48  # model-view thumbnails are at most this many pixels a side (long inputs are averaged)


def attention_result(handle: Any, text: Any, second: Any = None) -> dict[str, Any]:
    from engine.api import average_heads, head_table, rollout

    maps = handle.attention(text)
    w = maps.weights
    out = {"name": handle.name, "maps": maps, "stats": head_table(w, maps.tokens), "thumbnails": thumbnails(w),
           "average": average_heads(w), "rollout": rollout(w)}
    if second is not None:
        out["other"] = compared(second, text, maps, handle.name)
    return out


def compared(other: Any, text: Any, maps: Any, name: str) -> dict[str, Any] | str:
    """The second model's layer averages, when its tokens and layers line up with the first's; else why not."""
    from engine.api import Word2BertError, average_heads

    try:
        theirs = other.attention(text)
    except Word2BertError as e:
        return f"{other.name}: {e}"
    if theirs.tokens != maps.tokens or theirs.weights.shape[0] != maps.weights.shape[0]:
        return (f"{other.name} reads the text as other tokens or has other layers: no difference "
                "(compare two steps of one run, or two models with one tokenizer)")
    out = {"name": other.name, "tokens": theirs.tokens, "average": average_heads(theirs.weights)}
    if theirs.weights.shape == maps.weights.shape:  # the same heads: compared head by head too
        out["weights"] = theirs.weights
        out["thumbnails"] = thumbnails(theirs.weights)
        out["difference"] = thumbnails(maps.weights - theirs.weights)
    else:
        out["why_not_per_head"] = (f"{other.name} has {theirs.weights.shape[1]} heads per layer, "
                                   f"{name} {maps.weights.shape[1]}: compared by layer averages only")
    return out


def thumbnails(w: np.ndarray) -> np.ndarray:
    """(layers, heads, T, T) -> (layers, heads, ≤THUMBNAIL, ≤THUMBNAIL)"""
    from engine.api import downsample

    return np.stack([np.stack([downsample(w[layer, head], THUMBNAIL) for head in range(w.shape[1])])
                     for layer in range(w.shape[0])])


def per_head_other(result: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
    """The compared model's per-head result, or why there is none."""
    other = (result or {}).get("other")
    if other is None:
        return None, "tick “compare with” and choose a second model"
    if isinstance(other, str):
        return None, other
    if "weights" not in other:
        return None, str(other.get("why_not_per_head", ""))
    return other, ""
