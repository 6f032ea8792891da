"""word2vec (Mikolov et al. 2013): CBOW and skip-gram, hierarchical softmax or negative sampling.

Skip-gram maximises, for each word w_t and each context word w_c within a reduced window b ~ U[1, window]:
    log sigma(u_{w_t} . v_{w_c}) + sum_{i=1..k} E_{n_i ~ P_n} [log sigma(-u_{n_i} . v_{w_c})]
with P_n(w) proportional to count(w)^0.75 (negative sampling), or the hierarchical softmax
    sum_{j} log sigma((1 - 2 code_j(w_t)) * u_{node_j(w_t)} . v_{w_c})
over the Huffman path of w_t. CBOW predicts w_t from h = mean of the context input vectors.
Frequent words are subsampled with P(keep) = (sqrt(c/t) + 1) t / c, t = sample * total words,
and the learning rate decays linearly from alpha to min_alpha over all epochs, as in the original
tool and gensim (whose argument names and defaults we keep).

Two ways to train. On a CPU (with numba), ``engine.models.word2vec_cpu`` runs the original tool's
sequential SGD, compiled, one pair at a time on Hogwild threads. On a GPU, batched steps: a step takes
``batch_pairs`` (input, output) pairs; each group of g = ``negative_group`` consecutive (shuffled)
pairs shares one pool of M = ``shared_negatives`` noise words, and each pair's negative term is the
pool average scaled by k/M: an unbiased estimate of the k-sample sum, computed as batched matrix
products. With M = g = 16, a noise row receives about k = 5 pair gradients per draw, as in plain SGD,
while each pair reads one noise row instead of k. (One pool shared by a whole batch gives every drawn
noise word hundreds of stale gradients and diverges.) The gradients are written by hand (no autograd)
and applied with ``index_add_`` (plain SGD, like the original).

Optional fastText-style sub-words: character n-grams (min_n..max_n) of "<word>" hashed (FNV-1a) into
``subword_buckets`` rows; a word's input vector is the mean of its word row and its n-gram rows, so an
unknown word still gets a vector from its n-grams.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import numpy as np
import torch

from engine.config import Word2VecConfig
from engine.data.vocab import Vocab

NOISE_TABLE_SIZE = 10_000_000
NODE_UPDATE_CAP = 64.0
CHUNK_WORDS = 200_000


# ---------------------------------------------------------------- sub-words (fastText)

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


# ---------------------------------------------------------------- the model

class Word2VecModel:
    """Input vectors ``syn0`` (V [+ buckets + 1 zero pad row], d) and output vectors ``syn1``
    (V for negative sampling, V-1 inner Huffman nodes for hierarchical softmax)."""

    def __init__(self, vocab: Vocab, cfg: Word2VecConfig, device: torch.device, seed: int = 0) -> None:
        self.vocab, self.cfg, self.device = vocab, cfg, device
        V, d = len(vocab), cfg.vector_size
        rows = V + (cfg.subword_buckets + 1 if cfg.subword_buckets else 0)
        gen = torch.Generator().manual_seed(seed)
        # gensim 4's initialisation: uniform in [-1/d, 1/d) for inputs (word2vec.c: half that), zeros for outputs
        self.syn0 = ((torch.rand(rows, d, generator=gen) * 2.0 - 1.0) / d).to(device)
        if cfg.subword_buckets:
            self.syn0[-1] = 0.0
        self.syn1 = torch.zeros(max(V - 1, 1) if cfg.hs else V, d, device=device)
        self.sub_rows: torch.Tensor | None = None
        self.sub_count: torch.Tensor | None = None
        if cfg.subword_buckets:
            table, count = subword_table(vocab, cfg)
            self.sub_rows = torch.from_numpy(table).to(device)  # (V, G)
            self.sub_count = torch.from_numpy(count).to(device)  # (V,)

    # ------------------------------------------------------------ vectors

    def word_vectors(self) -> np.ndarray:
        """One float32 vector per vocabulary word: (V, d)."""
        with torch.no_grad():
            if self.sub_rows is None:
                return self.syn0[: len(self.vocab)].float().cpu().numpy()
            assert self.sub_count is not None
            summed = self.syn0[self.sub_rows].sum(1)  # (V, G, d) -> (V, d)
            return (summed / self.sub_count[:, None]).float().cpu().numpy()

    def _input(self, words: torch.Tensor) -> torch.Tensor:
        if self.sub_rows is None:
            return self.syn0[words]  # (B, d)
        assert self.sub_count is not None
        rows = self.sub_rows[words]  # (B, G)
        return self.syn0[rows].sum(1) / self.sub_count[words, None]  # (B, d)

    def _add_input_grad(self, words: torch.Tensor, grad: torch.Tensor) -> None:
        if self.sub_rows is None:
            self.syn0.index_add_(0, words, grad)
            return
        rows = self.sub_rows[words]  # (B, G)
        self.syn0.index_add_(0, rows.reshape(-1), grad.repeat_interleave(rows.shape[1], 0))
        self.syn0[-1] = 0.0  # the padding row must stay zero

    # ------------------------------------------------------------ one SGD step per loss

    def step_ns(self, inp: torch.Tensor, ctx_mask: torch.Tensor | None, out: torch.Tensor,
                negs: torch.Tensor, lr: float) -> torch.Tensor:
        """One negative-sampling step. ``inp``: (B,) input words (skip-gram) or (B, C) context words
        with ``ctx_mask`` (CBOW); ``out``: (B,) words to predict; ``negs``: (G, M) noise words, one row shared by each of G consecutive groups of pairs.
        Returns the summed loss (a 0-d tensor, not synced to the host)."""
        k = self.cfg.negative
        if ctx_mask is None:
            v = self._input(inp)  # (B, d)
        else:
            flat = inp[ctx_mask]  # (P,) the real context words
            owner = ctx_mask.nonzero()[:, 0]  # (P,) which row each belongs to
            v = torch.zeros(out.shape[0], self.syn0.shape[1], device=self.device)
            v.index_add_(0, owner, self._input(flat))
            if self.cfg.cbow_mean:
                v /= ctx_mask.sum(1, keepdim=True).clamp_min(1)
        B, d = v.shape
        G, M = negs.shape  # G groups of g pairs share M noise words
        g = B // G
        u = self.syn1[out]  # (B, d)
        noise = self.syn1[negs]  # (G, M, d)
        vg = v.view(G, g, d)
        pos = (v * u).sum(1)  # (B,)
        neg = torch.bmm(vg, noise.transpose(1, 2))  # (G, g, M)
        sig_pos, sig_neg = torch.sigmoid(pos), torch.sigmoid(neg)
        g_pos = (1.0 - sig_pos) * lr  # (B,)
        g_neg = sig_neg * (-lr * k / M)  # (G, g, M)
        g_neg.masked_fill_(negs[:, None, :] == out.view(G, g, 1), 0.0)  # noise equal to the target is skipped
        grad_v = g_pos[:, None] * u + torch.bmm(g_neg, noise).view(B, d)  # (B, d)
        self.syn1.index_add_(0, out, g_pos[:, None] * v)
        self.syn1.index_add_(0, negs.reshape(-1), torch.bmm(g_neg.transpose(1, 2), vg).view(G * M, d))
        if ctx_mask is None:
            self._add_input_grad(inp, grad_v)
        else:
            self._add_input_grad(flat, grad_v[owner])
        eps = 1e-7
        return -(torch.log(sig_pos + eps).sum() + (k / M) * torch.log1p(eps - sig_neg).sum())

    def step_hs(self, inp: torch.Tensor, ctx_mask: torch.Tensor | None, pair: torch.Tensor,
                node: torch.Tensor, code: torch.Tensor, n_pairs: int, lr: float) -> torch.Tensor:
        """One hierarchical-softmax step over flattened (pair, inner node, code bit) triples."""
        if ctx_mask is None:
            v = self._input(inp)  # (B, d)
        else:
            flat = inp[ctx_mask]
            owner = ctx_mask.nonzero()[:, 0]
            v = torch.zeros(n_pairs, self.syn0.shape[1], device=self.device)
            v.index_add_(0, owner, self._input(flat))
            if self.cfg.cbow_mean:
                v /= ctx_mask.sum(1, keepdim=True).clamp_min(1)
        vt = v[pair]  # (T, d)
        w = self.syn1[node]  # (T, d)
        f = torch.sigmoid((vt * w).sum(1))  # (T,)
        g = (1.0 - code - f) * lr  # (T,)
        grad_v = torch.zeros_like(v).index_add_(0, pair, g[:, None] * w)
        # Every path starts at the root, so nodes near it get a gradient from nearly every pair of the
        # batch; summing thousands of stale gradients diverges. Cap each node's step at the size of
        # NODE_UPDATE_CAP summed gradients (sequential SGD would see them shrink as it goes).
        hits = torch.bincount(node, minlength=self.syn1.shape[0]).to(g.dtype)  # (V-1,)
        node_scale = torch.clamp(NODE_UPDATE_CAP / hits[node], max=1.0)  # (T,)
        self.syn1.index_add_(0, node, (g * node_scale)[:, None] * vt)
        if ctx_mask is None:
            self._add_input_grad(inp, grad_v)
        else:
            self._add_input_grad(flat, grad_v[owner])
        # -log P = -sum log sigma((1 - 2 code) x)
        return -torch.log(torch.where(code > 0.5, 1.0 - f, f) + 1e-7).sum()

    # ------------------------------------------------------------ state

    def finite(self) -> bool:
        with torch.no_grad():
            return bool(torch.isfinite(self.syn0).all() and torch.isfinite(self.syn1).all())

    def tensors(self) -> dict[str, torch.Tensor]:
        return {"vectors": torch.from_numpy(self.word_vectors()), "syn0": self.syn0.cpu(), "syn1": self.syn1.cpu()}

    def load_tensors(self, tensors: dict[str, torch.Tensor]) -> None:
        self.syn0.copy_(tensors["syn0"].to(self.device, torch.float32))
        self.syn1.copy_(tensors["syn1"].to(self.device, torch.float32))

    def expected_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"vectors": (len(self.vocab), self.cfg.vector_size), "syn0": tuple(self.syn0.shape),
                "syn1": tuple(self.syn1.shape)}


# ---------------------------------------------------------------- training data, built per chunk in numpy

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
    context words with ``mask``, ``out`` (P,) centre words.
    """
    keep = rng.random(len(ids)) < keep_prob[ids]
    ids, sent = ids[keep], sent[keep]
    n = len(ids)
    reduced = rng.integers(1, cfg.window + 1, size=n)  # b in [1, window]
    if cfg.sg:
        inp_parts, out_parts = [], []
        for off in range(1, cfg.window + 1):
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
        order = rng.permutation(len(inp))
        return {"inp": inp[order].astype(np.int64), "out": out[order].astype(np.int64)}
    W = cfg.window
    ctx = np.zeros((n, 2 * W), dtype=np.int64)
    mask = np.zeros((n, 2 * W), dtype=bool)
    pos = np.arange(n)
    for j, off in enumerate([*range(-W, 0), *range(1, W + 1)]):
        other = pos + off
        inside = (other >= 0) & (other < n)
        other_c = np.clip(other, 0, max(n - 1, 0))
        ok = inside & (sent[other_c] == sent) & (reduced >= abs(off))
        ctx[:, j] = np.where(ok, ids[other_c], 0)
        mask[:, j] = ok
    has = mask.any(1)
    order = rng.permutation(int(has.sum()))
    return {"ctx": ctx[has][order], "mask": mask[has][order], "out": ids[has][order].astype(np.int64)}


def expand_hs(out: np.ndarray, codes: np.ndarray, points: np.ndarray, lengths: np.ndarray):
    """Flatten (pair, node, code) triples for the Huffman paths of the ``out`` words."""
    lens = lengths[out]
    pair = np.repeat(np.arange(len(out)), lens)
    first = np.cumsum(lens) - lens
    depth = np.arange(len(pair)) - np.repeat(first, lens)
    words = out[pair]
    return pair, points[words, depth].astype(np.int64), codes[words, depth].astype(np.float32), np.cumsum(lens)


# ---------------------------------------------------------------- training generator

def use_cpu_kernel(model: Word2VecModel) -> bool:
    """The compiled sequential kernel on a CPU (when numba is there), the batched torch steps elsewhere."""
    from engine.models import word2vec_cpu

    return model.device.type == "cpu" and word2vec_cpu.available()


def train_steps(model: Word2VecModel, ids: np.ndarray, starts: np.ndarray, *, seed: int,
                start_epoch: int = 0, start_chunk: int = 0, kernel: bool | None = None) -> Iterator[dict]:
    """Yield after every SGD step: {"epoch", "chunk", "step_loss" (0-d tensor), "pairs",
    "words_done", "words_total", "lr", "chunk_done", "n_chunks"}. On a GPU the data stays on the
    device and nothing syncs; on a CPU (``kernel`` None: when numba is there) each step is one call of
    the compiled kernel of ``engine.models.word2vec_cpu``."""
    cfg = model.cfg
    use_kernel = use_cpu_kernel(model) if kernel is None else kernel
    keep_prob = model.vocab.keep_probabilities(cfg.sample)
    bounds = chunk_bounds(starts)
    words_total = cfg.epochs * len(ids)
    chunk_steps = _KernelSteps(model, seed) if use_kernel else _TorchSteps(model, seed)
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
                yield {"epoch": epoch, "chunk": c, "step_loss": loss, "pairs": pairs,
                       "lr": lr_at(words_done + chunk_words * frac0), "words_done": words_done + chunk_words * frac1,
                       "words_total": words_total, "chunk_done": frac1 >= 1.0, "n_chunks": len(bounds)}
            if last < 1.0:  # a chunk with nothing to train on (or an empty last batch) still ends with a step
                yield {"epoch": epoch, "chunk": c, "step_loss": torch.zeros((), device=model.device), "pairs": 0,
                       "lr": lr_at(words_done + chunk_words), "words_done": words_done + chunk_words,
                       "words_total": words_total, "chunk_done": True, "n_chunks": len(bounds)}
            words_done += chunk_words


class _KernelSteps:
    """A chunk as calls of the compiled CPU kernel: subsample, then ``step_words()`` positions per call."""

    def __init__(self, model: Word2VecModel, seed: int) -> None:
        from engine.models import word2vec_cpu

        self.kernel, self.model, self.seed = word2vec_cpu, model, seed
        cfg, vocab = model.cfg, model.vocab
        word2vec_cpu.set_threads(cfg.workers)
        self.syn0, self.syn1 = model.syn0.numpy(), model.syn1.numpy()  # views: updated in place
        self.sub_rows = None if model.sub_rows is None else model.sub_rows.numpy()
        self.sub_count = None if model.sub_count is None else model.sub_count.numpy()
        if cfg.hs:
            self.codes, self.points, self.lengths = vocab.huffman()
            self.accept, self.alias = np.ones(1, np.float32), np.zeros(1, np.int32)
        else:
            self.accept, self.alias = word2vec_cpu.alias_table(vocab.noise_distribution(cfg.ns_exponent))
            self.codes, self.points, self.lengths = np.zeros((1, 1), np.int8), np.zeros((1, 1), np.int32), np.zeros(1, np.int32)

    def __call__(self, ids, sent, keep_prob, rng, epoch, chunk, lr_at):
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
            yield f0, f1, torch.tensor(loss), pairs


class _TorchSteps:
    """A chunk as batched torch steps (``batch_pairs`` pairs each), data on the model's device."""

    def __init__(self, model: Word2VecModel, seed: int) -> None:
        cfg, device = model.cfg, model.device
        self.model = model
        if cfg.hs:
            self.codes, self.points, self.lengths = model.vocab.huffman()
        else:
            noise = model.vocab.noise_distribution(cfg.ns_exponent)
            self.table = torch.from_numpy(np.repeat(np.arange(len(noise)), np.round(noise * NOISE_TABLE_SIZE).astype(np.int64))).to(device)
            self.noise_gen = torch.Generator(device=device).manual_seed(seed)
        # A CBOW example updates every word of its window: count batches in context slots so that a frequent
        # word collects about as many summed (stale) gradients per step as in skip-gram; more diverges.
        per_batch = cfg.batch_pairs if cfg.sg else max(cfg.negative_group, cfg.batch_pairs // max(1, cfg.window))
        self.per_batch = per_batch - (per_batch % cfg.negative_group if not cfg.hs else 0)

    def __call__(self, ids, sent, keep_prob, rng, epoch, chunk, lr_at):
        model, cfg, device, per_batch = self.model, self.model.cfg, self.model.device, self.per_batch
        ex = make_examples(ids, sent, keep_prob, cfg, rng)
        P = len(ex["out"])
        out = torch.from_numpy(ex["out"]).to(device)
        if cfg.sg:
            inp, mask = torch.from_numpy(ex["inp"]).to(device), None
        else:
            inp, mask = torch.from_numpy(ex["ctx"]).to(device), torch.from_numpy(ex["mask"]).to(device)
        if cfg.hs:
            pair, node, code, ends = expand_hs(ex["out"], self.codes, self.points, self.lengths)
            pair_t, node_t, code_t = (torch.from_numpy(x).to(device) for x in (pair, node, code))
        n_batches = max(1, math.ceil(P / per_batch))
        for b in range(n_batches):
            a, z = b * per_batch, min(P, (b + 1) * per_batch)
            f0, f1 = b / n_batches, (b + 1) / n_batches
            lr = lr_at(f0)
            m = None if mask is None else mask[a:z]
            if cfg.hs:
                if z <= a:
                    continue
                t0 = int(ends[a - 1]) if a > 0 else 0
                t1 = int(ends[z - 1])
                loss = model.step_hs(inp[a:z], m, pair_t[t0:t1] - a, node_t[t0:t1], code_t[t0:t1], z - a, lr)
            else:
                z = a + (z - a) // cfg.negative_group * cfg.negative_group  # whole groups only
                if z <= a:
                    continue
                G = (z - a) // cfg.negative_group
                draw = torch.randint(len(self.table), (G, cfg.shared_negatives), device=device, generator=self.noise_gen)
                loss = model.step_ns(inp[a:z], None if m is None else m[: z - a], out[a:z], self.table[draw], lr)
            yield f0, f1, loss, z - a


def _timer() -> float:
    return time.perf_counter()
