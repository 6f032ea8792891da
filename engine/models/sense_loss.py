"""The word-in-context loss: a word's vectors in two sentences (the mean of its pieces' states at one layer)
should be close when the word has the same sense in both and apart when it has not.

    cos_k = cosine(word vector in sentence A_k, in sentence B_k)       for the pairs k of a batch
    loss  = BCE(sigmoid(scale * (cos_k - mean_k cos_k)), same_k)

The threshold is the batch's own mean cosine (not learned: nothing is added to the model), so the loss
ranks same-sense pairs above different-sense ones — what a nearest-neighbour view of senses reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

SCALE = 20.0


def word_vectors(hidden: torch.Tensor, pieces: torch.Tensor) -> torch.Tensor:
    """(N, d): the mean of each row's marked pieces' states; hidden (N, T, d), pieces (N, T) 0/1."""
    weights = pieces.to(hidden.dtype)
    return (hidden * weights[..., None]).sum(1) / weights.sum(1, keepdim=True).clamp_min(1.0)


def found_in_both(pieces: torch.Tensor) -> torch.Tensor:
    """(P,) bool: the pairs (rows 2k, 2k+1 of ``pieces``) whose word has pieces in both sentences."""
    return (pieces[0::2].sum(1) > 0) & (pieces[1::2].sum(1) > 0)


Encode = Callable[[torch.Tensor, torch.Tensor], "list[torch.Tensor] | tuple[torch.Tensor, ...]"]
"""(ids (N, T), attention (N, T) bool) -> every layer's states, [(N, T, d)] * (layers + 1), 0 = the input."""


def pair_cosines(encode: Encode, ids: torch.Tensor, pieces: torch.Tensor, pad: int, layer: int) -> torch.Tensor:
    """(P,): the cosine of the target word's vectors in each pair's two sentences (rows 2k, 2k+1) at state
    ``layer`` of an encoder (0: the last layer; k: after layer k); ``pad`` pads the rows."""
    attention = ids != pad
    width = int(attention.any(0).nonzero().max()) + 1  # drop the columns that are padding in every row
    ids, pieces, attention = ids[:, :width], pieces[:, :width], attention[:, :width]
    states = encode(ids, attention)
    hidden = states[-1] if layer == 0 else states[layer]
    vectors = word_vectors(hidden, pieces).float()
    return nn.functional.cosine_similarity(vectors[0::2], vectors[1::2], dim=-1)


def sense_pair_loss(encode: Encode, ids: torch.Tensor, pieces: torch.Tensor, same: torch.Tensor, pad: int,
                    layer: int = 0) -> dict[str, torch.Tensor]:
    """The loss above over the pairs whose word was found in both sentences; ``sense_correct`` counts pairs
    on the right side of the batch's mean cosine."""
    found = found_in_both(pieces)
    if not bool(found.any()):  # no pair to learn from: a zero that still reaches the weights
        zero = pair_cosines(encode, ids[:2], pieces[:2], pad, layer).sum() * 0.0
        return {"loss": zero, "sense_loss": zero.detach(), "sense_count": torch.tensor(0), "sense_correct": torch.tensor(0)}
    rows = torch.stack([found, found], 1).reshape(-1)
    cos = pair_cosines(encode, ids[rows], pieces[rows], pad, layer)
    target = same[found].float()
    centred = cos - cos.mean().detach()
    loss = nn.functional.binary_cross_entropy_with_logits(SCALE * centred, target)
    return {"loss": loss, "sense_loss": loss.detach(), "sense_count": torch.tensor(int(found.sum())),
            "sense_correct": ((centred >= 0) == (target > 0.5)).sum()}


def hf_states(model: Any) -> Encode:
    """The ``Encode`` of a transformers model (its base encoder's hidden states)."""
    def encode(ids: torch.Tensor, attention: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return model.base_model(input_ids=ids, attention_mask=attention.long(), output_hidden_states=True).hidden_states
    return encode
