"""The adaptive softmax's loss (Grave et al. 2017) with one host synchronisation instead of six.

torch's ``AdaptiveLogSoftmaxWithLoss.forward`` finds each cluster's rows with a ``nonzero`` and a boolean
index, and each of those waits for the device to finish everything queued before it: six waits a call,
twelve in an ELMo step (its two directions), and a host that waits cannot queue the next kernels while
the GPU works. Here the rows are sorted by cluster on the device and the clusters' row counts are read
in one transfer; the weights stay the module's (same names, same checkpoints):

    cluster(t)  = 0 if t < c_1, else i where c_i <= t < c_{i+1}           (c: the module's cutoffs)
    -log p(t)   = -log softmax(head(x))[t]                                when cluster(t) = 0
                = -log softmax(head(x))[shortlist + i - 1] - log softmax(tail_i(x))[t - c_i]   otherwise
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

ONE_SYNC = True  # False: torch's own forward, a call per direction (kept to measure against on a GPU: bench/gpu_figures.py elmo)


def two_losses(asm: nn.AdaptiveLogSoftmaxWithLoss, a: torch.Tensor, target_a: torch.Tensor, b: torch.Tensor,
               target_b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The mean loss of (a, target_a) and of (b, target_b) (e.g. a biLM's two directions), in one call of the
    softmax: one wait for the device for both."""
    if not ONE_SYNC:
        return asm(a, target_a).loss, asm(b, target_b).loss
    nll = adaptive_nll(asm, torch.cat([a, b]), torch.cat([target_a, target_b]))
    return nll[: a.shape[0]].mean(), nll[a.shape[0] :].mean()


def adaptive_nll(asm: nn.AdaptiveLogSoftmaxWithLoss, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """x: (N, in_features), target: (N,) class ids -> (N,) the negative log-probability of each target,
    equal to ``-asm(x, target).output``. Raises ValueError for a target outside [0, n_classes)."""
    bounds = asm.cutoffs[:-1]  # the tails' first ids; cutoffs[-1] is n_classes
    cluster = torch.zeros_like(target)
    for c in bounds:
        cluster += target >= c
    n = len(bounds) + 1
    bad = (target < 0) | (target >= asm.n_classes)
    counts = torch.cat([(cluster[:, None] == torch.arange(n, device=target.device)).sum(0), bad.sum()[None]])
    *sizes, n_bad = counts.tolist()  # the one synchronisation
    if n_bad:
        raise ValueError(f"{n_bad} target(s) outside [0, {asm.n_classes - 1}]")
    head_target = torch.where(cluster == 0, target, asm.shortlist_size + cluster - 1)
    logp = F.log_softmax(asm.head(x), dim=1).gather(1, head_target[:, None]).squeeze(1)
    order = torch.argsort(cluster, stable=True)
    start = sizes[0]
    for i, size in enumerate(sizes[1:]):
        if size:
            rows = order[start : start + size]
            tail = F.log_softmax(asm.tail[i](x.index_select(0, rows)), dim=1)
            logp = logp.index_add(0, rows, tail.gather(1, (target[rows] - bounds[i])[:, None]).squeeze(1))
        start += size
    return -logp
