"""What the attention panel's worker computes for one sentence (off the GUI thread): the maps, the head
statistics, every head's thumbnail, the layer averages and the rollout — and, when a second model is
compared, its averages and (same heads) its thumbnails and the head-by-head difference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

THUMBNAIL = 48  # model-view thumbnails are at most this many pixels a side (long inputs are averaged)
NOTHING_COMPARED = "tick “compare with” and choose a second model"


@dataclass(frozen=True)
class ComparedAttention:
    """The second model's attention on the same text, where its tokens and layers line up with the
    first's: its layer averages always, its heads (and the head-by-head difference) where the heads do too."""

    name: str
    tokens: tuple[str, ...]
    average: np.ndarray  # (layers, T, T)
    weights: np.ndarray | None = None  # (layers, heads, T, T), where the heads line up
    thumbnails: np.ndarray | None = None
    difference: np.ndarray | None = None  # thumbnails of first − second, head by head
    why_not_per_head: str = ""


@dataclass(frozen=True)
class AttentionResult:
    """What the attention panel shows for one sentence (or pair)."""

    name: str
    maps: Any  # engine.api.AttentionMaps
    stats: Any  # the head atlas's table
    thumbnails: np.ndarray  # (layers, heads, ≤THUMBNAIL, ≤THUMBNAIL)
    average: np.ndarray  # (layers, T, T): the mean of each layer's heads
    rollout: np.ndarray  # (layers, T, T)
    other: ComparedAttention | None = None
    why_not_compared: str = NOTHING_COMPARED  # when ``other`` is None


def attention_result(handle: Any, text: Any, second: Any = None) -> AttentionResult:
    from engine.api import average_heads, head_table, rollout

    maps = handle.attention(text)
    w = maps.weights
    other, why = (None, NOTHING_COMPARED) if second is None else compared(second, text, maps, handle.name)
    return AttentionResult(handle.name, maps, head_table(w, maps.tokens), thumbnails(w), average_heads(w), rollout(w),
                           other, why)


def compared(other: Any, text: Any, maps: Any, name: str) -> tuple[ComparedAttention | None, str]:
    """The second model's attention beside the first's, when its tokens and layers line up with the
    first's; else None and why not."""
    from engine.api import Word2BertError, average_heads

    try:
        theirs = other.attention(text)
    except Word2BertError as e:
        return None, f"{other.name}: {e}"
    if theirs.tokens != maps.tokens or theirs.weights.shape[0] != maps.weights.shape[0]:
        return None, (f"{other.name} reads the text as other tokens or has other layers: no difference "
                      "(compare two steps of one run, or two models with one tokenizer)")
    average = average_heads(theirs.weights)
    if theirs.weights.shape == maps.weights.shape:  # the same heads: compared head by head too
        return ComparedAttention(other.name, theirs.tokens, average, theirs.weights, thumbnails(theirs.weights),
                                 thumbnails(maps.weights - theirs.weights)), ""
    return ComparedAttention(other.name, theirs.tokens, average, why_not_per_head=(
        f"{other.name} has {theirs.weights.shape[1]} heads per layer, {name} {maps.weights.shape[1]}: compared by "
        "layer averages only")), ""


def thumbnails(w: np.ndarray) -> np.ndarray:
    """(layers, heads, T, T) -> (layers, heads, ≤THUMBNAIL, ≤THUMBNAIL)"""
    from engine.api import downsample

    return np.stack([np.stack([downsample(w[layer, head], THUMBNAIL) for head in range(w.shape[1])])
                     for layer in range(w.shape[0])])


def per_head_other(result: AttentionResult | None) -> tuple[ComparedAttention | None, str]:
    """The compared model's per-head result, or why there is none."""
    if result is None or result.other is None:
        return None, result.why_not_compared if result is not None else NOTHING_COMPARED
    if result.other.weights is None:
        return None, result.other.why_not_per_head
    return result.other, ""
