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
from typing import Any

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


def _kernels() -> Any:
    """The kernels' module, imported at the first launch (Triton compiles each kernel then)."""
    from engine.models.word2vec import fused_kernels

    return fused_kernels


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
        _kernels().cbow_groups[(programs,)](syn0, syn1, inp.contiguous(), out.contiguous(), negs.contiguous(), losses,
                                    n_groups, *rates, G=G, M=M, C=inp.shape[1], MEAN=bool(cbow_mean),
                                    BLOCK_D=block, num_warps=warps)
    else:
        _kernels().sgns_groups[(programs,)](syn0, syn1, inp.contiguous(), out.contiguous(), negs.contiguous(), losses, n_groups,
                               *rates, G=G, M=M, BLOCK_D=block, num_warps=warps)
    STATS["launches"] += 1
    return losses.sum()
