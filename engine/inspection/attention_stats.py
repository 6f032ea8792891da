"""What each attention head does, in numbers (Clark et al. 2019, "What does BERT look at?"): the
entropy of its rows and the share of attention it sends to [CLS], to [SEP], to punctuation, to the
previous / next token and to the token itself; and, from a token seen before in the text, to its earlier copies
(duplicate-token heads) and to the tokens that followed them (induction heads: Olsson et al. 2022; TransformerLens's
head detector), which a text that repeats itself shows; the average over heads; attention rollout (Abnar &
Zuidema 2020). Plain numpy on the ``AttentionMaps.weights`` array (layers, heads, q, k)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from engine.errors import Cancelled, InputError

CLS_TOKENS = {"[CLS]", "<s>", "<cls>"}
SEP_TOKENS = {"[SEP]", "</s>", "<sep>", "<|endoftext|>"}
STATISTICS = ("entropy", "to_cls", "to_sep", "to_punct", "to_previous", "to_next", "to_self", "to_copy", "induction")


@dataclass(frozen=True)
class HeadStats:
    layer: int
    head: int
    entropy: float  # mean over query tokens, in bits
    to_cls: float  # mean share of each row's attention
    to_sep: float
    to_punct: float
    to_previous: float
    to_next: float
    to_self: float
    # from a token seen before in the text: the share to its earlier copies, and to the tokens after them (nan where
    # no token repeats: nothing to measure)
    to_copy: float = float("nan")
    induction: float = float("nan")
    sentences: int = 1  # how many sentences the numbers average over (for to_copy and induction: those that repeat)


def _is_punct(token: str) -> bool:
    text = token.strip().removeprefix("##").removeprefix("Ġ")
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def token_kinds(tokens: tuple[str, ...] | list[str]) -> dict[str, np.ndarray]:
    """Boolean masks over the key tokens: which are [CLS], [SEP], punctuation."""
    return {"cls": np.array([t.strip() in CLS_TOKENS for t in tokens]),
            "sep": np.array([t.strip() in SEP_TOKENS for t in tokens]),
            "punct": np.array([_is_punct(t) for t in tokens])}


def head_statistics(weights: np.ndarray, tokens: tuple[str, ...] | list[str]) -> np.ndarray:
    """(layers, heads, len(STATISTICS)) array, each statistic averaged over the query tokens."""
    w = np.asarray(weights, dtype=np.float64)  # (L, H, q, k)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2] or w.shape[-1] != len(tokens):
        raise ValueError(f"attention must be (layers, heads, n, n) with n = {len(tokens)} tokens, not {w.shape}")
    n = w.shape[-1]
    kinds = token_kinds(tokens)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(w > 0, w * np.log2(w), 0.0)
    entropy = -plogp.sum(-1).mean(-1)
    rows = np.arange(n)
    diag = w[..., rows, rows].mean(-1)
    # over the rows that have a previous (next) token
    previous = w[..., rows[1:], rows[1:] - 1].mean(-1) if n > 1 else np.zeros(w.shape[:2])
    following = w[..., rows[:-1], rows[:-1] + 1].mean(-1) if n > 1 else np.zeros(w.shape[:2])
    share = {k: w[..., kinds[k]].sum(-1).mean(-1) for k in ("cls", "sep", "punct")}
    copy, after = repeats(tokens)
    return np.stack([entropy, share["cls"], share["sep"], share["punct"], previous, following, diag,
                     _share_from(w, copy), _share_from(w, after)], axis=-1)


def repeats(tokens: tuple[str, ...] | list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(q, k) masks: ``copy[q, k]`` where token k is an earlier copy of token q, ``after[q, k]`` where token k
    follows such a copy (k < q, k − 1 a copy of q: where an induction head looks); special tokens never count."""
    n = len(tokens)
    kinds = token_kinds(tokens)
    special = kinds["cls"] | kinds["sep"]
    copy, after = np.zeros((n, n), bool), np.zeros((n, n), bool)
    seen: dict[str, list[int]] = {}
    for q, token in enumerate(tokens):
        if special[q]:
            continue
        for k in seen.get(token, []):
            copy[q, k] = True
            if k + 1 < q:
                after[q, k + 1] = True
        seen.setdefault(token, []).append(q)
    return copy, after


def _share_from(w: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(layers, heads): the attention on ``mask``'s keys, averaged over the rows that have any (nan: none has)."""
    rows = mask.any(-1)
    if not rows.any():
        return np.full(w.shape[:2], np.nan)
    return (w * mask).sum(-1)[..., rows].mean(-1)


def head_table(weights: np.ndarray, tokens: tuple[str, ...] | list[str]) -> list[HeadStats]:
    stats = head_statistics(weights, tokens)
    return [HeadStats(layer, head, *(float(v) for v in stats[layer, head]))  # type: ignore[arg-type]
            for layer in range(stats.shape[0]) for head in range(stats.shape[1])]


def corpus_head_table(model: object, sentences: list[str], stop: object = None) -> list[HeadStats]:
    """The same statistics averaged over sentences of a corpus (``model`` has ``attention(text)``); the repeats' over
    the sentences that have one."""
    total: np.ndarray | None = None
    counted: np.ndarray | None = None  # per statistic: the sentences it was measured on
    count = 0
    for sentence in sentences:
        if stop is not None and stop.is_set():  # type: ignore[attr-defined]
            break
        maps = model.attention(sentence)  # type: ignore[attr-defined]
        stats = head_statistics(maps.weights, maps.tokens)
        measured = ~np.isnan(stats)
        stats = np.nan_to_num(stats)
        total = stats if total is None else total + stats
        counted = measured.astype(np.int64) if counted is None else counted + measured
        count += 1
    if total is None:  # stopped before its first sentence (a new request), or given none
        if stop is not None and stop.is_set():  # type: ignore[attr-defined]
            raise Cancelled("the head statistics over the corpus were cancelled")
        raise InputError("no sentence to average the head statistics over")
    assert counted is not None  # (set with total)
    mean = np.where(counted > 0, total / np.maximum(counted, 1), np.nan)
    return [HeadStats(layer, head, *(float(v) for v in mean[layer, head]), sentences=count)  # type: ignore[misc, arg-type]
            for layer in range(mean.shape[0]) for head in range(mean.shape[1])]


def average_heads(weights: np.ndarray) -> np.ndarray:
    """(layers, q, k): each layer's heads averaged."""
    return np.asarray(weights, dtype=np.float32).mean(axis=1)


def rollout(weights: np.ndarray) -> np.ndarray:
    """(layers, q, k) attention rollout: how much each input token flows into each position by each
    layer, mixing in the residual connection as 0.5·A + 0.5·I with rows renormalised (Abnar & Zuidema)."""
    mean = np.asarray(weights, dtype=np.float64).mean(axis=1)  # (L, n, n)
    n = mean.shape[-1]
    flow = np.eye(n)
    out = np.empty_like(mean)
    for layer in range(mean.shape[0]):
        mixed = 0.5 * mean[layer] + 0.5 * np.eye(n)
        mixed /= mixed.sum(-1, keepdims=True)
        flow = mixed @ flow
        out[layer] = flow
    return out.astype(np.float32)


def downsample(matrix: np.ndarray, size: int) -> np.ndarray:
    """A (q, k) matrix shrunk to at most ``size`` × ``size`` by averaging blocks (thumbnails of long inputs)."""
    q, k = matrix.shape
    fq, fk = max(1, -(-q // size)), max(1, -(-k // size))
    if fq == 1 and fk == 1:
        return matrix
    pad = np.zeros((-(-q // fq) * fq, -(-k // fk) * fk), matrix.dtype)
    pad[:q, :k] = matrix
    return pad.reshape(pad.shape[0] // fq, fq, pad.shape[1] // fk, fk).mean(axis=(1, 3))
