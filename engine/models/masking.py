"""Choosing what a masked LM must predict: BERT's 80/10/10 rule by whole words (every piece of a chosen
word), for any WordPiece vocabulary — our BERT's and a foreign encoder's (engine/models/masked_lm_head.py).
(Per-piece masking, the original BERT's, is engine.models.bert.mask_tokens.)"""

from __future__ import annotations

from typing import Any

import torch

IGNORE = -100


def vocabulary_roles(tokenizer: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """(continuation: (V,) True for a WordPiece "##" piece, ordinary: the ids a random replacement
    draws from — not special, not [unusedN])."""
    vocab = tokenizer.get_vocab()
    size = max(vocab.values()) + 1
    continuation = torch.zeros(size, dtype=torch.bool)
    continuation[[i for token, i in vocab.items() if token.startswith("##")]] = True  # (one assignment: one a
    # token took 20 ms of the window's training example for BERT-tiny's 8,000)
    special = set(getattr(tokenizer, "all_special_ids", ()))  # (a bare tokenizers.Tokenizer: "[...]" below)
    ordinary = [i for token, i in vocab.items()
                if i not in special and not (token.startswith("[") and token.endswith("]"))]
    return continuation, torch.tensor(sorted(ordinary), dtype=torch.long)


def mask_words(ids: torch.Tensor, special: torch.Tensor, continuation: torch.Tensor, ordinary: torch.Tensor, *,
               mask_id: int, prob: float = 0.15, whole_word: bool = True,
               generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's 80/10/10 rule, by whole words when ``whole_word``: a word is chosen with probability
    ``prob`` and then every piece of it is predicted; a chosen word becomes [MASK] 80% of the time, random
    pieces 10%, stays itself 10%. ids, special: (B, T). Returns (inputs, labels; IGNORE where not chosen)."""
    shape = ids.shape
    draw = torch.rand(shape, device=ids.device, generator=generator)
    roll = torch.rand(shape, device=ids.device, generator=generator)
    if whole_word:
        positions = torch.arange(shape[1], device=ids.device).expand(shape)
        piece = continuation.to(ids.device)[ids] & ~special
        start = torch.cummax(torch.where(piece, torch.zeros_like(positions), positions), dim=1).values  # (B, T)
        draw, roll = draw.gather(1, start), roll.gather(1, start)  # a word's pieces share its draws
    chosen = (draw < prob) & ~special
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE))
    pool = ordinary.to(ids.device)
    random_ids = pool[torch.randint(len(pool), shape, device=ids.device, generator=generator)]
    inputs = torch.where(chosen & (roll < 0.8), torch.full_like(ids, mask_id), ids)
    inputs = torch.where(chosen & (roll >= 0.8) & (roll < 0.9), random_ids, inputs)
    return inputs, labels
