"""The masked positions of a batch as a fixed number of rows, so that a masked LM's step never waits for its device.

BERT's MLM head runs only where a token was chosen (15% of them): taking those rows with a boolean index
(``h[labels != IGNORE]``) gives a tensor whose size the host must read from the device, a wait in every step
on a GPU, and a break in a ``torch.compile`` graph (a shape that depends on the data). The original BERT
avoided both by padding each sequence's predictions to ``max_predictions_per_seq``. Here the batch's chosen
positions are gathered into ``row_bound`` rows, in their order, and the rows left over are filler that the loss
ignores:

    rows  = the chosen positions first (flattened order), then others: (K,)     K = row_bound(B·T, p)
    valid = chosen[rows];  target = labels[rows] where valid, IGNORE elsewhere
    loss  = Σ CE(logits, target) / max(1, Σ valid)        (= the mean over the chosen positions)

K holds the chosen positions of a batch but with odds far below one in a billion (7 standard deviations of the
chosen count above its mean; whole-word masking draws words, not pieces, so its count spreads more). A batch
that chose more than K has its first K scored, as BERT's cap scored its first 20 of a sequence.
"""

from __future__ import annotations

import math

import torch

from engine.models.masking import IGNORE


def row_bound(tokens: int, prob: float, whole_word: bool = False) -> int:
    """How many rows hold a batch's chosen positions: ``tokens`` positions each chosen with ``prob``
    (a multiple of 8, for the matrix units; never more than ``tokens``)."""
    spread = math.sqrt(tokens * prob * (1.0 - prob) * (4.0 if whole_word else 1.0))
    k = math.ceil(tokens * prob + 7.0 * spread) + 8
    return min(tokens, -(-k // 8) * 8)


def masked_rows(chosen: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows, valid): ``k`` flat indices into ``chosen`` (any shape), its True positions first in their order,
    and which of the rows are chosen ones. No value leaves the device."""
    flat = chosen.reshape(-1)
    order = torch.argsort((~flat).to(torch.int32), stable=True)  # chosen (0) before the rest (1), order kept
    rows = order[:k]
    return rows, flat[rows]


def masked_lm_loss(logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(mean cross-entropy over the valid rows, how many of them the argmax got right, how many there are);
    ``target`` holds IGNORE on the rows that are not valid. Zero rows give a loss of 0 (with a gradient)."""
    count = valid.sum()
    total = torch.nn.functional.cross_entropy(logits, target, ignore_index=IGNORE, reduction="sum")
    loss = total / count.clamp(min=1)
    correct = ((logits.argmax(-1) == target) & valid).sum()
    return loss, correct, count
