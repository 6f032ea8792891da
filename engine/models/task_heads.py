"""Task heads on a pre-trained encoder (the fine-tuning recipes of GPT §3.3 and BERT §4), one per family:

    classify / pair   p(y | x) = softmax(W v + b),  v = the encoder's sentence vector
                      (BERT: tanh(W_pool h_[CLS]); GPT: h at the last token; ELMo: mean of the scalar mix)
    tag               p(y_i | x) = softmax(W h_i + b) at each word's first sub-word; other pieces ignored
    span              p_start(i) = softmax_i(S · h_i),  p_end(j) = softmax_j(E · h_j); an answer is the
                      (i, j), i <= j, maximising S·h_i + E·h_j  (BERT §4.2)

GPT adds λ·L_LM, the language-model loss on the task's own text, when ``lm_weight`` > 0 (GPT §3.2).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

IGNORE = -100


class LinearHead(nn.Module):
    """dropout, then W x + b: on the sentence vector (B, dim) -> (B, n) to classify, or on every token
    (B, T, dim) -> (B, T, n) to tag."""

    def __init__(self, dim: int, n_labels: int, dropout: float = 0.1) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(dim, n_labels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.dropout(x))


class SpanHead(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.out = nn.Linear(dim, 2)  # rows: the start vector S and the end vector E

    def forward(self, states: torch.Tensor, allowed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """states (B, T, dim), allowed (B, T) True on context tokens -> start and end logits (B, T)."""
        logits = self.out(states).float().masked_fill(~allowed[..., None], -1e4)
        return logits[..., 0], logits[..., 1]


class FinetuneModel(nn.Module):
    """encoder + head; ``forward(batch)`` returns the loss and what the metrics need."""

    encoder: Any  # an engine.finetune.encoders.Encoder

    def __init__(self, encoder: nn.Module, family: str, n_labels: int, dropout: float = 0.1,
                 lm_weight: float = 0.0) -> None:
        super().__init__()
        self.encoder, self.family, self.lm_weight = encoder, family, lm_weight
        dim = int(self.encoder.dim)
        if family in ("classify", "pair", "tag"):
            self.head: nn.Module = LinearHead(dim, n_labels, dropout)
        elif family == "span":
            self.head = SpanHead(dim)
        else:
            raise ValueError(f"unknown task family {family!r}")
        self.frozen_encoder = False  # feature-based: the encoder runs without gradients, in eval mode

    def train(self, mode: bool = True) -> FinetuneModel:
        super().train(mode)
        if self.frozen_encoder:
            self.encoder.network.eval()  # no dropout in frozen features
        return self

    def outputs(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
        ids, segments, mask = batch["ids"], batch["segments"], batch["mask"]
        if self.frozen_encoder:
            with torch.no_grad():
                features = self.encoder.features(ids, segments, mask)
            states = self.encoder.combine(features.detach())
        else:
            states = self.encoder.states(ids, segments, mask)
        if self.family in ("classify", "pair"):
            return self.head(self.encoder.pooled(states, mask)), states
        if self.family == "tag":
            return self.head(states), states
        start, end = self.head(states, batch["allowed"])
        return start, end, states

    def forward(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        out = self.outputs(batch)
        if self.family in ("classify", "pair"):
            logits = out[0].float()
            loss = F.cross_entropy(logits, batch["labels"])
            result = {"logits": logits}
        elif self.family == "tag":
            logits = out[0].float()
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["labels"].reshape(-1),
                                   ignore_index=IGNORE)
            result = {"logits": logits}
        else:
            start, end = out[0], out[1]
            # an answer cut off by truncation has no position: its example teaches nothing (weight 0)
            has = batch["start"] >= 0
            s_loss = F.cross_entropy(start, batch["start"].clamp(min=0), reduction="none")
            e_loss = F.cross_entropy(end, batch["end"].clamp(min=0), reduction="none")
            loss = ((s_loss + e_loss) / 2 * has).sum() / has.sum().clamp(min=1)
            result = {"start": start, "end": end}
        if self.lm_weight and self.training:
            lm = self.encoder.lm_loss(out[-1], batch["ids"], batch["mask"])
            if lm is not None:
                loss = loss + self.lm_weight * lm
        result["loss"] = loss
        return result
