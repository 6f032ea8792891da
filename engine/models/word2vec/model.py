"""word2vec (Mikolov et al. 2013): CBOW and skip-gram, hierarchical softmax or negative sampling.

Skip-gram maximises, for each word w_t and each context word w_c within a reduced window b ~ U[1, window]:
    log sigma(u_{w_t} . v_{w_c}) + sum_{i=1..k} E_{n_i ~ P_n} [log sigma(-u_{n_i} . v_{w_c})]
with P_n(w) proportional to count(w)^0.75 (negative sampling), or the hierarchical softmax
    sum_{j} log sigma((1 - 2 code_j(w_t)) * u_{node_j(w_t)} . v_{w_c})
over the Huffman path of w_t. CBOW predicts w_t from h = mean of the context input vectors.
Frequent words are subsampled with P(keep) = (sqrt(c/t) + 1) t / c, t = sample * total words,
and the learning rate decays linearly from alpha to min_alpha over all epochs, as in the original
tool and gensim (whose argument names and defaults we keep).

Two ways to train. On a CPU (with numba), ``engine.models.word2vec.cpu`` runs the original tool's
sequential SGD, compiled, one pair at a time on Hogwild threads. On a GPU, batched steps: a step takes
``batch_pairs`` (input, output) pairs; each group of g = ``negative_group`` consecutive (shuffled)
pairs shares one pool of M = ``shared_negatives`` noise words, and each pair's negative term is the
pool average scaled by k/M: an unbiased estimate of the k-sample sum, computed as batched matrix
products. With M = g = 16, a noise row receives about k = 5 pair gradients per draw, as in plain SGD,
while each pair reads one noise row instead of k. (One pool shared by a whole batch gives every drawn
noise word hundreds of stale gradients and diverges.) The gradients are written by hand (no autograd)
and applied with ``index_add_`` (plain SGD, like the original), each row's step capped at ``ROW_UPDATE_CAP``
summed gradients (a frequent word is a target and a noise word hundreds of times a step; uncapped, its row blew
up on the corpus with conversation, and every row after it). On CUDA the skip-gram negative-sampling
step is recorded once as a CUDA graph and replayed (``engine.models.word2vec.graphed``): a step's thirty
small kernels cost more to launch than to run. Where Triton is installed, CUDA's skip-gram negative sampling
runs one fused kernel a chunk instead (``engine.models.word2vec.fused``). Each chunk's noise words are drawn in
one call.

Optional fastText-style sub-words: character n-grams (min_n..max_n) of "<word>" hashed (FNV-1a) into
``subword_buckets`` rows; a word's input vector is the mean of its word row and its n-gram rows, so an
unknown word still gets a vector from its n-grams.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator

import numpy as np
import torch

from engine.config.settings import Word2VecConfig
from engine.data.vocab import Vocab
from engine.models.word2vec import fused
from engine.models.word2vec.arrays import KernelSteps
from engine.models.word2vec.examples import expand_hs_torch, make_examples_torch
from engine.models.word2vec.graphed import GraphedStep, graphed_step
from engine.models.word2vec.steps import CHUNK_WORDS, chunk_bounds, run_chunks
from engine.models.word2vec.subwords import ngram_rows, subword_table

log = logging.getLogger(__name__)

__all__ = ["CHUNK_WORDS", "Word2VecModel", "chunk_bounds", "ngram_rows", "subword_table", "train_steps", "use_cpu_kernel"]

NOISE_TABLE_SIZE = 10_000_000
NODE_UPDATE_CAP = 64.0
ROW_UPDATE_CAP = 32.0  # negative sampling's batched steps: summed gradients a row takes in one step, at most
# On a GPU the batched steps compute their loss on one step in LOSS_EVERY (the first of each run of them): the
# logged loss is the mean over those steps' pairs. A log line comes every few hundred steps, and the loss's own
# kernels are 9 of a skip-gram step's 33 (bench/RESULTS.md, "Fourth run"); on a CPU every step has its loss.
LOSS_EVERY = 16


def loss_every(device: torch.device) -> int:
    """On which steps the batched steps compute their loss: one in this many."""
    return LOSS_EVERY if device.type == "cuda" else 1


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
                negs: torch.Tensor, lr: float, want_loss: bool = True) -> torch.Tensor | None:
        """One negative-sampling step. ``inp``: (B,) input words (skip-gram) or (B, C) context words
        with ``ctx_mask`` (CBOW); ``out``: (B,) words to predict; ``negs``: (G, M) noise words, one row shared by each of G consecutive groups of pairs.
        Returns the summed loss (a 0-d tensor, not synced to the host), or None without ``want_loss`` (the
        loss is a quarter of a step's kernels, and it is read once a log line: ``LOSS_EVERY``)."""
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
        # A frequent word is the target of many pairs of a step and drawn into many pools: its row would take the
        # sum of hundreds of gradients made from the same stale values (as the top Huffman nodes would, below).
        # On the corpus with conversation that sum sent "a" from a norm of 9 to 83 in one step, and every row
        # after it (bench/RESULTS.md, GPU: fifth run). Each row's step is capped at ROW_UPDATE_CAP summed
        # gradients; a noise draw counts as the g·k/M pair gradients it stands for.
        flat_negs = negs.reshape(-1)
        hits = torch.zeros(self.syn1.shape[0], device=v.device).index_add_(0, out, torch.ones_like(g_pos))
        hits.index_add_(0, flat_negs, torch.full(flat_negs.shape, g * k / M, device=v.device))
        scale = torch.clamp(ROW_UPDATE_CAP / hits.clamp_min(1.0), max=1.0)  # (rows of syn1,)
        self.syn1.index_add_(0, out, (g_pos * scale[out])[:, None] * v)
        self.syn1.index_add_(0, flat_negs, torch.bmm(g_neg.transpose(1, 2), vg).view(G * M, d) * scale[flat_negs, None])
        words = inp if ctx_mask is None else flat
        grad_words = grad_v if ctx_mask is None else grad_v[owner]
        uses = torch.zeros(len(self.vocab), device=v.device).index_add_(0, words, torch.ones_like(words, dtype=v.dtype))
        grad_words = grad_words * torch.clamp(ROW_UPDATE_CAP / uses[words], max=1.0)[:, None]
        self._add_input_grad(words, grad_words)
        if not want_loss:
            return None
        eps = 1e-7
        return -(torch.log(sig_pos + eps).sum() + (k / M) * torch.log1p(eps - sig_neg).sum())

    def step_hs(self, inp: torch.Tensor, ctx_mask: torch.Tensor | None, pair: torch.Tensor,
                node: torch.Tensor, code: torch.Tensor, n_pairs: int, lr: float,
                want_loss: bool = True) -> torch.Tensor | None:
        """One hierarchical-softmax step over flattened (pair, inner node, code bit) triples (its summed loss,
        or None without ``want_loss``)."""
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
        if not want_loss:
            return None
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


# ---------------------------------------------------------------- training generator

def use_cpu_kernel(model: Word2VecModel) -> bool:
    """The compiled sequential kernel on a CPU (when numba is there), the batched torch steps elsewhere."""
    from engine.models.word2vec import cpu as word2vec_cpu

    return model.device.type == "cpu" and word2vec_cpu.available()


def train_steps(model: Word2VecModel, ids: np.ndarray, starts: np.ndarray, *, seed: int,
                start_epoch: int = 0, start_chunk: int = 0, kernel: bool | None = None) -> Iterator[dict]:
    """``engine.models.word2vec.steps.run_chunks`` for this model: on a GPU the data stays on the device
    and nothing syncs; on a CPU (``kernel`` None: when numba is there) each step is one call of the
    compiled kernel of ``engine.models.word2vec.cpu`` on numpy views of the tensors."""
    use_kernel = use_cpu_kernel(model) if kernel is None else kernel
    steps = KernelSteps(model, seed) if use_kernel else _TorchSteps(model, seed)
    return run_chunks(model, ids, starts, steps, seed=seed, start_epoch=start_epoch, start_chunk=start_chunk)


class _TorchSteps:
    """A chunk as batched torch steps (``batch_pairs`` pairs each), data on the model's device."""

    def __init__(self, model: Word2VecModel, seed: int) -> None:
        cfg, device = model.cfg, model.device
        self.model = model
        self.keep: torch.Tensor | None = None  # keep probabilities per word, on the device (the first chunk's)
        if cfg.hs:
            codes, points, lengths = model.vocab.huffman()
            self.codes, self.points, self.lengths = (torch.from_numpy(np.asarray(x)).to(device)
                                                     for x in (codes, points, lengths))
        else:
            noise = model.vocab.noise_distribution(cfg.ns_exponent)
            self.table = torch.from_numpy(np.repeat(np.arange(len(noise)), np.round(noise * NOISE_TABLE_SIZE).astype(np.int64))).to(device)
            self.noise_gen = torch.Generator(device=device).manual_seed(seed)
        # A CBOW example updates every word of its window: count batches in context slots so that a frequent
        # word collects about as many summed (stale) gradients per step as in skip-gram; more diverges.
        per_batch = cfg.batch_pairs if cfg.sg else max(cfg.negative_group, cfg.batch_pairs // max(1, cfg.window))
        self.per_batch = per_batch - (per_batch % cfg.negative_group if not cfg.hs else 0)
        self.graphed: GraphedStep | None = None  # skip-gram NS on CUDA: the step as a CUDA graph
        self.tried_graph = False
        self.loss_every = loss_every(device)
        self.step = 0  # steps taken, across chunks: which have their loss computed
        # skip-gram NS (and CBOW NS once measured) where Triton runs: one fused kernel a step, or a chunk
        # (engine.models.word2vec.fused)
        self.fused = fused.ENABLED and fused.available(device) and fused.supports(cfg)
        self.fused_ran = False  # a launch has returned: a later failure is not the kernel failing to build

    def _wants_loss(self) -> bool:
        """Whether the step about to be taken computes its loss (the first of every ``loss_every``)."""
        want = self.step % self.loss_every == 0
        self.step += 1
        return want

    def __call__(self, ids, sent, keep_prob, rng, epoch, chunk, lr_at):
        model, cfg, device, per_batch = self.model, self.model.cfg, self.model.device, self.per_batch
        if self.keep is None:
            self.keep = torch.from_numpy(np.asarray(keep_prob, dtype=np.float32)).to(device)
        gen = torch.Generator(device=device).manual_seed(int(rng.integers(2**62)))  # the chunk's own draws
        ex = make_examples_torch(torch.from_numpy(np.asarray(ids, dtype=np.int64)).to(device),
                                 torch.from_numpy(np.asarray(sent, dtype=np.int64)).to(device), self.keep, cfg, gen)
        out = ex["out"]
        P = out.shape[0]
        if cfg.sg:
            inp, mask = ex["inp"], None
        else:
            inp, mask = ex["ctx"], ex["mask"]
        if cfg.hs:
            pair_t, node_t, code_t, ends_t = expand_hs_torch(out, self.codes, self.points, self.lengths)
            ends = ends_t.cpu().numpy()  # read on the host once a chunk: where each step's triples end
        if self.fused:
            try:
                yield from self._fused(inp if mask is None else torch.where(mask, inp, -1), out, lr_at)
                return
            except Exception as e:  # noqa: BLE001 - a kernel that cannot build here: say so once, train batched
                if self.fused_ran:
                    raise
                log.warning("word2vec: the fused kernel could not run (%s: %s); training with the batched steps",
                            type(e).__name__, e)
                fused.STATS["failed"] += 1
                self.fused = False
        n_batches = max(1, math.ceil(P / per_batch))
        if not cfg.hs:  # the chunk's noise words in one draw: a pool of M for each group of g pairs
            G_full = per_batch // cfg.negative_group
            draw = torch.randint(len(self.table), (n_batches * G_full, cfg.shared_negatives), device=device,
                                 generator=self.noise_gen)
            noise = self.table[draw]
            if self.graphed is None and not self.tried_graph:
                self.tried_graph = True
                self.graphed = graphed_step(model, per_batch, G_full, cfg.shared_negatives)
        for b in range(n_batches):
            a, z = b * per_batch, min(P, (b + 1) * per_batch)
            f0, f1 = b / n_batches, (b + 1) / n_batches
            lr = lr_at(f0)
            m = None if mask is None else mask[a:z]
            loss: torch.Tensor | None
            if cfg.hs:
                if z <= a:
                    continue
                want = self._wants_loss()
                t0 = int(ends[a - 1]) if a > 0 else 0
                t1 = int(ends[z - 1])
                loss = model.step_hs(inp[a:z], m, pair_t[t0:t1] - a, node_t[t0:t1], code_t[t0:t1], z - a, lr,
                                     want_loss=want)
            else:
                z = a + (z - a) // cfg.negative_group * cfg.negative_group  # whole groups only
                if z <= a:
                    continue
                G = (z - a) // cfg.negative_group
                negs = noise[b * G_full : b * G_full + G]
                want = self._wants_loss()
                if self.graphed is not None and z - a == per_batch:
                    loss = self.graphed(inp[a:z], out[a:z], negs, lr, want_loss=want)
                else:
                    loss = model.step_ns(inp[a:z], None if m is None else m[: z - a], out[a:z], negs, lr,
                                         want_loss=want)
            yield f0, f1, loss, z - a

    def _fused(self, inp: torch.Tensor, out: torch.Tensor, lr_at):
        """The chunk through the fused kernel: one launch for all of it (``fused.PER_CHUNK``), else one a
        step of ``per_batch`` pairs, each with its noise pools and its share of the rate's fall (CBOW: ``inp``
        the examples' context words, -1 where there is none)."""
        cfg, model = self.model.cfg, self.model
        g, M = cfg.negative_group, cfg.shared_negatives
        P = out.shape[0] // g * g  # whole groups only
        noise = self.table[torch.randint(len(self.table), (P // g, M), device=model.device, generator=self.noise_gen)]
        per_launch = P if fused.PER_CHUNK else self.per_batch
        n_launches = max(1, math.ceil(P / max(per_launch, 1)))
        for b in range(n_launches):
            a, z = b * per_launch, min(P, (b + 1) * per_launch)
            f0, f1 = b / n_launches, (b + 1) / n_launches
            if z <= a:
                continue
            programs = fused.programs_for(len(model.vocab), g) if cfg.sg else \
                min(fused.CBOW_PROGRAMS, fused.programs_for(len(model.vocab), g))
            loss = fused.train_chunk(model.syn0, model.syn1, inp[a:z], out[a:z], noise[a // g : z // g],
                                     lr_at(f0), lr_at(f1), cfg.negative, programs, cbow_mean=bool(cfg.cbow_mean))
            self.fused_ran = True
            yield f0, f1, loss, z - a

