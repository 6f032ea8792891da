"""word2vec's skip-gram negative-sampling training as one fused GPU kernel per chunk (Triton), where the
batched steps (``Word2VecModel.step_ns``, replayed as a CUDA graph) launch some thirty small kernels a step.

The kernel walks a chunk's shuffled pairs in groups of g = ``negative_group`` pairs that share one pool of
M = ``shared_negatives`` noise words, as ``step_ns`` does, and computes the same update for a group: the
scores of its g pairs against their targets and its pool, the gradients, and adds them to the rows it read
(atomic adds, so two groups touching one row both count). A fixed number of programs (``programs``) walks
the groups in order, each taking every ``programs``-th group, so that about ``programs`` × g pairs are in
flight at once, whatever the chunk's size: that bounds how stale a row's value can be when it is read (the
batched steps' bound is their batch, 8,192 pairs; bigger batches diverged). The learning rate falls
linearly over the chunk, group by group, as the steps' rate does step by step. One launch a chunk: the host
does nothing between the steps.

CBOW has a kernel of its own (``cbow_groups``): each example's context words (at most 2 × window, the
missing ones -1) are added up, or averaged (``cbow_mean``), into the vector that meets the target and the
pool, and the gradient of that vector is added to every one of them, as ``step_ns`` does with a context mask
(and gensim's CBOW with cbow_mean). It runs only where ``CBOW_ENABLED``: off until a GPU has measured it
against the batched CBOW steps (the rule is declared in bench/RESULTS.md, GPU: "CBOW through a fused kernel").

Needs Triton (it comes with torch's CUDA wheels); without it, or off CUDA, or for any other variant
(hierarchical softmax, sub-words, pools or groups that are not powers of two of at least 16, CBOW while
``CBOW_ENABLED`` is off), the batched steps run as before. ``TRITON_INTERPRET=1`` runs the kernels on the CPU
(the tests' way to check them there).
"""

from __future__ import annotations

import importlib.util
import os

import torch

# The GPU check's fifth run (bench/RESULTS.md, GPU) chose, by the rule declared before it, a launch a chunk with
# 1,056 programs (8 per multiprocessor of an H200): 34.2M words/s at WordSim-353 0.465 (gensim on 16 cores: 0.465),
# where the graphed batched step made 20.4M at 0.233 on the same corpus.
ENABLED = True
PER_CHUNK = True  # one launch a chunk (else one a step of batch_pairs pairs, as the batched steps)
PROGRAMS = 1056  # programs in flight, at most: 16,896 pairs at g = 16


# CBOW through its kernel: off until a GPU measures it (bench/RESULTS.md, GPU: "CBOW through a fused kernel", the
# rule declared before the run: on with the programs count it names, or left off)
CBOW_ENABLED = False
CBOW_PROGRAMS = 1056


def programs_for(vocabulary: int, group: int) -> int:
    """Programs in flight for a vocabulary of this size: ``PROGRAMS``, but never more pairs in flight than there
    are words (on a toy corpus of 70 words, 528 programs put about 120 pairs of each word in flight at once,
    and the run diverged on an H200; the batched steps bound the same with a smaller batch)."""
    return max(1, min(PROGRAMS, vocabulary // group))


STATS = {"launches": 0, "failed": 0}


def available(device: torch.device) -> bool:
    """Whether the kernel can run for tensors on ``device``: Triton installed, and CUDA (or the
    interpreter, on the CPU)."""
    if importlib.util.find_spec("triton") is None:
        return False
    return device.type == "cuda" or (device.type == "cpu" and os.environ.get("TRITON_INTERPRET") == "1")


def supports(cfg) -> bool:
    """The variants the kernels compute: skip-gram (and CBOW while ``CBOW_ENABLED``), negative sampling, no
    sub-words, g and M powers of two ≥ 16."""
    def pow2(n: int) -> bool:
        return n >= 16 and n & (n - 1) == 0

    return bool((cfg.sg or CBOW_ENABLED) and not cfg.hs and not cfg.subword_buckets and pow2(cfg.negative_group)
                and pow2(cfg.shared_negatives))


_KERNEL = None
_CBOW_KERNEL = None


def _kernel():
    global _KERNEL
    if _KERNEL is not None:
        return _KERNEL
    import triton
    import triton.language as tl

    @triton.jit
    def sgns_groups(syn0, syn1, inp, out, negs, losses, n_groups, lr0, lr_drop, scale, dim,
                    n_programs, n_iter, G: tl.constexpr, M: tl.constexpr, BLOCK_D: tl.constexpr):
        pid = tl.program_id(0)
        cols = tl.arange(0, BLOCK_D)
        in_dim = cols < dim
        total = tl.zeros((G,), dtype=tl.float32)
        for it in range(0, n_iter):
            gid = it * n_programs + pid
            live = gid < n_groups  # the last round: some programs have no group left
            lr = lr0 - lr_drop * gid / n_groups
            pr = gid * G + tl.arange(0, G)
            i_in = tl.load(inp + pr, mask=live, other=0)
            i_out = tl.load(out + pr, mask=live, other=0)
            i_neg = tl.load(negs + gid * M + tl.arange(0, M), mask=live, other=0)
            keep = in_dim[None, :] & live
            p_in = syn0 + i_in[:, None] * dim + cols[None, :]
            p_out = syn1 + i_out[:, None] * dim + cols[None, :]
            p_neg = syn1 + i_neg[:, None] * dim + cols[None, :]
            # through L2, past the multiprocessor's own cache: rows change under other programs' atomic adds
            v = tl.load(p_in, mask=keep, other=0.0, cache_modifier=".cg")  # (G, D)
            u = tl.load(p_out, mask=keep, other=0.0, cache_modifier=".cg")  # (G, D)
            noise = tl.load(p_neg, mask=keep, other=0.0, cache_modifier=".cg")  # (M, D)
            sig_pos = tl.sigmoid(tl.sum(v * u, axis=1))  # (G,)
            sig_neg = tl.sigmoid(tl.dot(v, tl.trans(noise), input_precision="ieee"))  # (G, M)
            g_pos = (1.0 - sig_pos) * lr
            g_neg = tl.where(i_neg[None, :] == i_out[:, None], 0.0, sig_neg * (-lr * scale))
            grad_v = g_pos[:, None] * u + tl.dot(g_neg, noise, input_precision="ieee")
            tl.atomic_add(p_out, g_pos[:, None] * v, mask=keep, sem="relaxed")
            tl.atomic_add(p_neg, tl.dot(tl.trans(g_neg), v, input_precision="ieee"), mask=keep, sem="relaxed")
            tl.atomic_add(p_in, grad_v, mask=keep, sem="relaxed")
            total += tl.where(live, tl.log(sig_pos + 1e-7) + scale * tl.sum(tl.log(1.0 + 1e-7 - sig_neg), axis=1), 0.0)
        tl.store(losses + pid * G + tl.arange(0, G), -total)

    _KERNEL = sgns_groups
    return _KERNEL


def _cbow_kernel():
    global _CBOW_KERNEL
    if _CBOW_KERNEL is not None:
        return _CBOW_KERNEL
    import triton
    import triton.language as tl

    @triton.jit
    def cbow_groups(syn0, syn1, ctx, out, negs, losses, n_groups, lr0, lr_drop, scale, dim,
                    n_programs, n_iter, G: tl.constexpr, M: tl.constexpr, C: tl.constexpr, MEAN: tl.constexpr,
                    BLOCK_D: tl.constexpr):
        pid = tl.program_id(0)
        cols = tl.arange(0, BLOCK_D)
        in_dim = cols < dim
        total = tl.zeros((G,), dtype=tl.float32)
        for it in range(0, n_iter):
            gid = it * n_programs + pid
            live = gid < n_groups
            lr = lr0 - lr_drop * gid / n_groups
            pr = gid * G + tl.arange(0, G)
            i_out = tl.load(out + pr, mask=live, other=0)
            i_neg = tl.load(negs + gid * M + tl.arange(0, M), mask=live, other=0)
            keep = in_dim[None, :] & live
            h = tl.zeros((G, BLOCK_D), dtype=tl.float32)  # each example's context words, added up
            count = tl.zeros((G,), dtype=tl.float32)
            for c in tl.static_range(C):  # slot c of every example of the group (-1: no word there)
                i_c = tl.load(ctx + pr * C + c, mask=live, other=-1)
                has = i_c >= 0
                h += tl.load(syn0 + tl.where(has, i_c, 0)[:, None] * dim + cols[None, :], mask=keep & has[:, None],
                             other=0.0, cache_modifier=".cg")
                count += tl.where(has, 1.0, 0.0)
            if MEAN:
                h = h / tl.maximum(count, 1.0)[:, None]
            p_out = syn1 + i_out[:, None] * dim + cols[None, :]
            p_neg = syn1 + i_neg[:, None] * dim + cols[None, :]
            u = tl.load(p_out, mask=keep, other=0.0, cache_modifier=".cg")  # (G, D)
            noise = tl.load(p_neg, mask=keep, other=0.0, cache_modifier=".cg")  # (M, D)
            sig_pos = tl.sigmoid(tl.sum(h * u, axis=1))  # (G,)
            sig_neg = tl.sigmoid(tl.dot(h, tl.trans(noise), input_precision="ieee"))  # (G, M)
            g_pos = (1.0 - sig_pos) * lr
            g_neg = tl.where(i_neg[None, :] == i_out[:, None], 0.0, sig_neg * (-lr * scale))
            grad_h = g_pos[:, None] * u + tl.dot(g_neg, noise, input_precision="ieee")
            tl.atomic_add(p_out, g_pos[:, None] * h, mask=keep, sem="relaxed")
            tl.atomic_add(p_neg, tl.dot(tl.trans(g_neg), h, input_precision="ieee"), mask=keep, sem="relaxed")
            for c in tl.static_range(C):  # the whole gradient to each context word (gensim's cbow_mean too)
                i_c = tl.load(ctx + pr * C + c, mask=live, other=-1)
                has = i_c >= 0
                tl.atomic_add(syn0 + tl.where(has, i_c, 0)[:, None] * dim + cols[None, :], grad_h,
                              mask=keep & has[:, None], sem="relaxed")
            total += tl.where(live, tl.log(sig_pos + 1e-7) + scale * tl.sum(tl.log(1.0 + 1e-7 - sig_neg), axis=1), 0.0)
        tl.store(losses + pid * G + tl.arange(0, G), -total)

    _CBOW_KERNEL = cbow_groups
    return _CBOW_KERNEL


def train_chunk(syn0: torch.Tensor, syn1: torch.Tensor, inp: torch.Tensor, out: torch.Tensor,
                negs: torch.Tensor, lr_start: float, lr_end: float, negative: int,
                programs: int | None = None, cbow_mean: bool = True) -> torch.Tensor:
    """Train on a chunk's pairs in order: ``inp``/``out`` (P,) with P a multiple of g, ``negs`` (P/g, M)
    one pool per group; the rate falls from ``lr_start`` at the first group to ``lr_end`` after the last.
    CBOW: ``inp`` (P, C), each example's context words, -1 where it has none (``cbow_mean``: averaged, else
    added up). Updates ``syn0``/``syn1`` in place and returns the summed loss (a 0-d tensor, not synced)."""
    n_groups, M = negs.shape
    if n_groups == 0:
        return torch.zeros((), dtype=torch.float32, device=syn0.device)
    G = inp.shape[0] // n_groups
    assert G * n_groups == inp.shape[0] == out.shape[0], "whole groups only"
    dim = syn0.shape[1]
    assert syn0.is_contiguous() and syn1.is_contiguous() and syn1.shape[1] == dim
    programs = max(1, min(programs or PROGRAMS, n_groups))
    losses = torch.zeros(programs * G, dtype=torch.float32, device=syn0.device)
    block = max(16, 1 << (dim - 1).bit_length())
    rates = (float(lr_start), float(lr_start - lr_end), float(negative) / M, dim, programs, -(-n_groups // programs))
    warps = 4 if block <= 128 else 8
    if inp.dim() == 2:  # CBOW: a row of context words an example
        _cbow_kernel()[(programs,)](syn0, syn1, inp.contiguous(), out.contiguous(), negs.contiguous(), losses,
                                    n_groups, *rates, G=G, M=M, C=inp.shape[1], MEAN=bool(cbow_mean),
                                    BLOCK_D=block, num_warps=warps)
    else:
        _kernel()[(programs,)](syn0, syn1, inp.contiguous(), out.contiguous(), negs.contiguous(), losses, n_groups,
                               *rates, G=G, M=M, BLOCK_D=block, num_warps=warps)
    STATS["launches"] += 1
    return losses.sum()
