"""The walk that every attribution of the lab takes (engine.handles.attribution for Transformers,
engine.handles.word_attribution for ELMo and the NNLM): the model's input vectors ``x`` (one row per token or
word) faded in from a baseline (zero; ELMo: its average word) along a straight line, the gradient of the
explained quantity taken at the midpoints of ``steps`` equal steps and at the text itself, in batches, one
backward pass each.

* integrated gradients (Sundararajan et al. 2017): the mean gradient along the line times ``x`` less the
  baseline. The scores add up to the change of the quantity from the faded-out input to the input (completeness);
  how far they miss it is returned, and ``walk_until_close`` walks again in finer steps where it is over
  ``GAP_ALLOWED`` of the change (and over ``GAP_FLOOR`` nats: a change near 0 is not walked for ever).
* gradient × input (Shrikumar et al. 2016): the gradient at the input, times ``x``, summed.
* the gradient's norm (Simonyan et al. 2013; LIT's "Grad L2 norm"): a size, not a sign.

Rows marked ``fixed`` (special tokens, a [MASK], sentence marks) keep their vectors all along.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from engine.cancel import check_cancelled
from engine.errors import InputError

# integrated gradients' steps along the line: the first walk, and finer ones where it misses. A Transformer's line
# is smooth (32 nearly always do); an LSTM's can jump: ELMo-tiny's "She sat on the bench in the park and read a"
# missed by 650% in 32 steps, 183% in 128, 1.9% in 512 (0.44 s on two cores)
STEPS = (32, 128, 512)
GAP_FLOOR = 0.05  # nats: a miss this small is close enough, whatever the change
GAP_ALLOWED = 0.05  # the share of the explained change the attributions may miss before the finer walk
ROW_TOKENS = 2048  # interpolated copies x rows in one backward pass

Quantity = Callable[[torch.Tensor], torch.Tensor]  # (B, T, d) input vectors -> (B,) the explained quantity


@dataclass(frozen=True)
class Walk:
    scores: dict[str, np.ndarray]  # method -> (T,), fixed rows included (as computed: the caller zeroes them)
    f_input: float  # the quantity at the input
    f_baseline: float  # ... with every row that is not fixed at the baseline
    steps: int
    relative_gap: float  # |Σ integrated gradients − (f_input − f_baseline)| / |f_input − f_baseline|
    gap: float  # Σ integrated gradients − (f_input − f_baseline), nats

    @property
    def close(self) -> bool:
        return self.relative_gap <= GAP_ALLOWED or abs(self.gap) <= GAP_FLOOR


def walk(x: torch.Tensor, fixed: Sequence[bool], quantity: Quantity, steps: int,
         baseline: torch.Tensor | None = None, row_tokens: int = ROW_TOKENS) -> Walk:
    """One walk of ``steps`` midpoints from the faded-out input (``baseline``, (d,) or (T, d); None: zero) to ``x``
    (T, d), with its two ends (the quantity at both, and the gradient at the input); ``row_tokens``: copies x rows
    in one backward pass."""
    x = x.detach()
    b = torch.zeros_like(x) if baseline is None else baseline.detach().to(x.device, x.dtype).expand_as(x)
    alphas = torch.tensor([0.0, *[(k + 0.5) / steps for k in range(steps)], 1.0], device=x.device, dtype=x.dtype)
    keep = torch.tensor(list(fixed), device=x.device)[None, :, None]
    rows = max(1, row_tokens // max(1, x.shape[0]))
    values = np.zeros(len(alphas), np.float64)
    grads: list[torch.Tensor] = []
    for a in range(0, len(alphas), rows):
        check_cancelled("attribution")  # a newer question supersedes this one
        chunk = alphas[a : a + rows]
        scaled = torch.where(keep, x[None], b[None] + (x - b)[None] * chunk[:, None, None]).requires_grad_(True)
        with torch.enable_grad():
            f = quantity(scaled)
            (grad,) = torch.autograd.grad(f.sum(), [scaled])
        values[a : a + len(chunk)] = f.detach().cpu().double().numpy()
        grads.append(grad.float())
    g = torch.cat(grads)  # (steps + 2, T, d)
    xf = x.float()
    integrated = ((xf - b.float()) * g[1:-1].mean(0)).sum(-1).cpu().double().numpy()
    at_input = g[-1]
    scores = {"integrated gradients": integrated,
              "gradient × input": (xf * at_input).sum(-1).cpu().double().numpy(),
              "gradient norm": at_input.norm(dim=-1).cpu().double().numpy()}
    f_input, f_baseline = float(values[-1]), float(values[0])
    change = f_input - f_baseline
    gap = float(integrated[~np.array(list(fixed), bool)].sum()) - change
    return Walk(scores, f_input, f_baseline, steps, abs(gap) / max(abs(change), 1e-6), gap)


def walk_until_close(x: torch.Tensor, fixed: Sequence[bool], quantity: Quantity,
                     baseline: torch.Tensor | None = None, row_tokens: int = ROW_TOKENS) -> Walk:
    """``walk`` in ``STEPS[0]`` steps, then in each finer count of ``STEPS`` while it is not ``close`` (the last
    walk's answer, however close)."""
    for n in STEPS:
        result = walk(x, fixed, quantity, n, baseline, row_tokens)
        if result.close:
            break
    return result


def zero_fixed(result: Walk, fixed: Sequence[bool]) -> dict[str, np.ndarray]:
    """The scores as shown: 0 where a row is kept as it is (not attributed), float32."""
    keep = ~np.array(list(fixed), bool)
    return {name: np.where(keep, values, 0.0).astype(np.float32) for name, values in result.scores.items()}


def unnamed(word: object, what: str) -> bool:
    """Whether a target or foil word is left to the model (None, or blank); anything but text is refused."""
    if word is None:
        return True
    if not isinstance(word, str):
        raise InputError(f"the {what} must be a word, not {type(word).__name__}")
    return not word.strip()
