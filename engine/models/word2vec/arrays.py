"""word2vec on a CPU as numpy arrays, trained by the compiled kernel (``engine.models.word2vec.cpu``):
what a CPU-only machine runs, without importing torch (a second of a short command's start-up).

``KernelSteps`` trains any model whose ``syn0``/``syn1`` (and sub-word tables) are CPU arrays or tensors
— numpy views of a torch model's tensors too — calling the kernel ``step_words()`` positions at a time."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from engine.config.settings import Word2VecConfig
from engine.data.vocab import Vocab
from engine.models.word2vec.subwords import subword_table


def as_array(x: Any) -> np.ndarray:
    """A CPU array or tensor as numpy, sharing its memory (the kernel updates it in place)."""
    return x if isinstance(x, np.ndarray) else x.numpy()


class Word2VecArrays:
    """Input vectors ``syn0`` (V [+ buckets + 1 zero pad row], d) and output vectors ``syn1`` (V, or V-1
    Huffman nodes), float32 numpy: the state of ``engine.models.word2vec.Word2VecModel`` without torch."""

    def __init__(self, vocab: Vocab, cfg: Word2VecConfig, seed: int = 0) -> None:
        self.vocab, self.cfg = vocab, cfg
        V, d = len(vocab), cfg.vector_size
        rows = V + (cfg.subword_buckets + 1 if cfg.subword_buckets else 0)
        rng = np.random.default_rng(seed)
        # gensim 4's initialisation: uniform in [-1/d, 1/d) for inputs, zeros for outputs
        self.syn0 = ((rng.random((rows, d), dtype=np.float32) * 2.0 - 1.0) / d).astype(np.float32)
        if cfg.subword_buckets:
            self.syn0[-1] = 0.0
        self.syn1 = np.zeros((max(V - 1, 1) if cfg.hs else V, d), np.float32)
        self.sub_rows: np.ndarray | None = None
        self.sub_count: np.ndarray | None = None
        if cfg.subword_buckets:
            self.sub_rows, self.sub_count = subword_table(vocab, cfg)

    def word_vectors(self) -> np.ndarray:
        """One float32 vector per vocabulary word: (V, d)."""
        if self.sub_rows is None or self.sub_count is None:
            return self.syn0[: len(self.vocab)].copy()
        return (self.syn0[self.sub_rows].sum(1) / self.sub_count[:, None]).astype(np.float32)

    def finite(self) -> bool:
        return bool(np.isfinite(self.syn0).all() and np.isfinite(self.syn1).all())

    def tensors(self) -> dict[str, np.ndarray]:
        return {"vectors": self.word_vectors(), "syn0": self.syn0, "syn1": self.syn1}

    def load_tensors(self, tensors: dict[str, Any]) -> None:
        self.syn0[...] = np.asarray(tensors["syn0"], dtype=np.float32)
        self.syn1[...] = np.asarray(tensors["syn1"], dtype=np.float32)

    def expected_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"vectors": (len(self.vocab), self.cfg.vector_size), "syn0": tuple(self.syn0.shape),
                "syn1": tuple(self.syn1.shape)}


class KernelSteps:
    """A chunk as calls of the compiled CPU kernel: subsample, then ``step_words()`` positions per call."""

    def __init__(self, model: Any, seed: int) -> None:
        from engine.models.word2vec import cpu as word2vec_cpu

        self.kernel, self.model, self.seed = word2vec_cpu, model, seed
        cfg, vocab = model.cfg, model.vocab
        word2vec_cpu.set_threads(cfg.workers, hs=bool(cfg.hs))
        self.syn0, self.syn1 = as_array(model.syn0), as_array(model.syn1)  # views: updated in place
        self.sub_rows = None if model.sub_rows is None else as_array(model.sub_rows)
        self.sub_count = None if model.sub_count is None else as_array(model.sub_count)
        if cfg.hs:
            self.codes, self.points, self.lengths = vocab.huffman()
            self.accept, self.alias = np.ones(1, np.float32), np.zeros(1, np.int32)
        else:
            self.accept, self.alias = word2vec_cpu.alias_table(vocab.noise_distribution(cfg.ns_exponent))
            self.codes, self.points, self.lengths = np.zeros((1, 1), np.int8), np.zeros((1, 1), np.int32), np.zeros(1, np.int32)

    def __call__(self, ids, sent, keep_prob, rng, epoch, chunk, lr_at) -> Iterator[tuple[float, float, float, int]]:
        cfg = self.model.cfg
        keep = rng.random(len(ids)) < keep_prob[ids]
        kept_ids, kept_sent = np.ascontiguousarray(ids[keep], np.int32), np.ascontiguousarray(sent[keep])
        n, per_call = len(kept_ids), self.kernel.step_words()
        n_calls = max(1, math.ceil(n / per_call))
        for b in range(n_calls):
            a, z = b * n // n_calls, (b + 1) * n // n_calls
            f0, f1 = b / n_calls, (b + 1) / n_calls
            loss, pairs = self.kernel.sgd(
                kept_ids, kept_sent, a, z, self.syn0, self.syn1, self.sub_rows, self.sub_count,
                sg=bool(cfg.sg), hs=bool(cfg.hs), negative=cfg.negative, window=cfg.window,
                cbow_mean=bool(cfg.cbow_mean), accept=self.accept, alias=self.alias, codes=self.codes, points=self.points,
                lengths=self.lengths, alpha0=lr_at(f0), alpha1=lr_at(f1),
                seed=hash((self.seed, epoch, chunk, b)) & 0x7FFFFFFFFFFF)
            yield f0, f1, float(loss), pairs
