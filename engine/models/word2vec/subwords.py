"""fastText-style sub-words for word2vec: the character n-grams of "<word>" (min_n..max_n), hashed with
FNV-1a into ``subword_buckets`` rows after the vocabulary's own. Plain Python and numpy: the app's word2vec
handles use it for unknown words without loading torch."""

from __future__ import annotations

import numpy as np

from engine.config.settings import Word2VecConfig
from engine.data.vocab import Vocab


def fnv1a(data: bytes) -> int:
    h = 2166136261
    for byte in data:
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def char_ngrams(word: str, min_n: int, max_n: int) -> list[str]:
    padded = f"<{word}>"
    grams = []
    for n in range(min_n, max_n + 1):
        for i in range(len(padded) - n + 1):
            gram = padded[i : i + n]
            if gram != padded:
                grams.append(gram)
    return grams


def ngram_rows(word: str, cfg: Word2VecConfig, vocab_size: int) -> list[int]:
    """Rows of the input matrix holding the n-gram vectors of ``word`` (after the V word rows)."""
    return [vocab_size + fnv1a(g.encode("utf-8")) % cfg.subword_buckets for g in char_ngrams(word, cfg.min_n, cfg.max_n)]


def subword_table(vocab: Vocab, cfg: Word2VecConfig) -> tuple[np.ndarray, np.ndarray]:
    """(V, G) rows per word (its own row first, padded with the zero row) and the count of real rows."""
    pad = len(vocab) + cfg.subword_buckets
    rows = [[i, *ngram_rows(w, cfg, len(vocab))] for i, w in enumerate(vocab.words)]
    width = max(len(r) for r in rows)
    table = np.full((len(vocab), width), pad, dtype=np.int64)
    for i, r in enumerate(rows):
        table[i, : len(r)] = r
    return table, np.array([len(r) for r in rows], dtype=np.float32)
