"""How a word2vec run walks its corpus, whatever trains it: sentences split into chunks of about
``CHUNK_WORDS`` words, each chunk subsampled and (for the batched GPU steps) turned into shuffled
training examples, the learning rate decaying linearly over all epochs. numpy only: the CPU path
(``engine.models.word2vec.arrays``) trains without importing torch."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from engine.config.settings import Word2VecConfig

CHUNK_WORDS = 200_000

# a chunk's steps: (ids, sentence numbers, keep probabilities, rng, epoch, chunk, lr_at(fraction)) ->
# (fraction at the step's start, at its end, loss, pairs) per step
ChunkSteps = Callable[..., Iterator[tuple[float, float, Any, int]]]


def chunk_bounds(starts: np.ndarray, chunk_words: int = CHUNK_WORDS) -> list[tuple[int, int]]:
    """Split sentences into chunks of about ``chunk_words`` words: [(first sentence, end sentence)]."""
    bounds, first, n = [], 0, len(starts) - 1
    while first < n:
        end = int(np.searchsorted(starts, starts[first] + chunk_words, side="left"))
        end = min(max(end, first + 1), n)
        bounds.append((first, end))
        first = end
    return bounds


def make_examples(ids: np.ndarray, sent: np.ndarray, keep_prob: np.ndarray, cfg: Word2VecConfig,
                  rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Subsample, draw reduced windows, and build shuffled training examples for one chunk.

    Skip-gram: ``inp`` (P,) context words and ``out`` (P,) centre words. CBOW: ``ctx`` (P, 2*window)
    context words with ``mask``, ``out`` (P,) centre words. (The batched torch steps make theirs on
    their device by the same rule: ``engine.models.word2vec.examples``.)
    """
    keep = rng.random(len(ids)) < keep_prob[ids]
    ids, sent = ids[keep], sent[keep]
    reduced = rng.integers(1, cfg.window + 1, size=len(ids))  # b in [1, window]
    if cfg.sg:
        inp, out = skipgram_pairs(ids, sent, reduced, cfg.window)
        order = rng.permutation(len(inp))
        return {"inp": inp[order], "out": out[order]}
    ctx, mask, out = cbow_windows(ids, sent, reduced, cfg.window)
    order = rng.permutation(len(out))
    return {"ctx": ctx[order], "mask": mask[order], "out": out[order]}


def skipgram_pairs(ids: np.ndarray, sent: np.ndarray, reduced: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(context word, centre word) of every pair: centre i and context i ± off for off <= reduced[i], in
    the same sentence; offset by offset, left then right."""
    n = len(ids)
    inp_parts, out_parts = [], []
    for off in range(1, window + 1):
        if off >= n:
            break
        centre = np.arange(off, n)  # centre i, context i - off
        ok = (sent[centre] == sent[centre - off]) & (reduced[centre] >= off)
        inp_parts.append(ids[centre[ok] - off])
        out_parts.append(ids[centre[ok]])
        centre = np.arange(0, n - off)  # centre i, context i + off
        ok = (sent[centre] == sent[centre + off]) & (reduced[centre] >= off)
        inp_parts.append(ids[centre[ok] + off])
        out_parts.append(ids[centre[ok]])
    inp = np.concatenate(inp_parts) if inp_parts else np.zeros(0, np.int64)
    out = np.concatenate(out_parts) if out_parts else np.zeros(0, np.int64)
    return inp.astype(np.int64), out.astype(np.int64)


def cbow_windows(ids: np.ndarray, sent: np.ndarray, reduced: np.ndarray,
                 window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(context words (P, 2 window), their mask, centre words (P,)) for every position with a context."""
    n = len(ids)
    ctx = np.zeros((n, 2 * window), dtype=np.int64)
    mask = np.zeros((n, 2 * window), dtype=bool)
    pos = np.arange(n)
    for j, off in enumerate([*range(-window, 0), *range(1, window + 1)]):
        other = pos + off
        inside = (other >= 0) & (other < n)
        other_c = np.clip(other, 0, max(n - 1, 0))
        ok = inside & (sent[other_c] == sent) & (reduced >= abs(off))
        ctx[:, j] = np.where(ok, ids[other_c], 0)
        mask[:, j] = ok
    has = mask.any(1)
    return ctx[has], mask[has], ids[has].astype(np.int64)


def run_chunks(model: Any, ids: np.ndarray, starts: np.ndarray, chunk_steps: ChunkSteps, *,
               start_epoch: int = 0, seed: int = 0, start_chunk: int = 0) -> Iterator[dict]:
    """Yield after every SGD step: {"epoch", "chunk", "step_loss" (a number, or a 0-d tensor on a GPU; 0.0 for
    a step that did not compute its loss), "loss_pairs" (the pairs it is summed over: 0 for such a step), "pairs",
    "words_done", "words_total", "lr", "chunk_done", "n_chunks"}. ``model``: its ``cfg`` and
    ``vocab``; ``chunk_steps`` trains it on one chunk."""
    cfg = model.cfg
    keep_prob = model.vocab.keep_probabilities(cfg.sample)
    bounds = chunk_bounds(starts)
    words_total = cfg.epochs * len(ids)
    words_done = start_epoch * len(ids) + (int(starts[bounds[start_chunk][0]]) if start_chunk < len(bounds) else 0)

    def lr_at(done: float) -> float:
        return max(cfg.min_alpha, cfg.alpha - (cfg.alpha - cfg.min_alpha) * done / words_total)

    for epoch in range(start_epoch, cfg.epochs):
        for c in range(start_chunk if epoch == start_epoch else 0, len(bounds)):
            s0, s1 = bounds[c]
            lo, hi = int(starts[s0]), int(starts[s1])
            rng = np.random.default_rng([seed, epoch, c])
            # the chunk's sentence numbers, made here: ids may be a memory-mapped file larger than memory
            sent = np.repeat(np.arange(s0, s1, dtype=np.int32), np.diff(starts[s0 : s1 + 1]))
            chunk_words = hi - lo
            steps = chunk_steps(np.asarray(ids[lo:hi]), sent, keep_prob, rng, epoch, c,
                                lambda f: lr_at(words_done + chunk_words * f))  # noqa: B023 - used at once
            last = 0.0
            for frac0, frac1, loss, pairs in steps:
                last = frac1
                yield {"epoch": epoch, "chunk": c, "step_loss": 0.0 if loss is None else loss, "pairs": pairs,
                       "loss_pairs": 0 if loss is None else pairs, "lr": lr_at(words_done + chunk_words * frac0),
                       "words_done": words_done + chunk_words * frac1, "words_total": words_total,
                       "chunk_done": frac1 >= 1.0, "n_chunks": len(bounds)}
            if last < 1.0:  # a chunk with nothing to train on (or an empty last batch) still ends with a step
                yield {"epoch": epoch, "chunk": c, "step_loss": 0.0, "pairs": 0, "loss_pairs": 0,
                       "lr": lr_at(words_done + chunk_words), "words_done": words_done + chunk_words,
                       "words_total": words_total, "chunk_done": True, "n_chunks": len(bounds)}
            words_done += chunk_words
