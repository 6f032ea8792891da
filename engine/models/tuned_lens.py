"""The tuned lens (Belrose et al. 2023, "Eliciting Latent Predictions from Transformers with the Tuned
Lens"): one affine translator per layer below the output, h -> h + A h + b, trained so that the model's
own output head reads the translated state as the output layer's distribution (KL(final || layer)
minimised). A and b start at zero: untrained, the tuned lens is the logit lens."""

from __future__ import annotations

import torch
from torch import nn


class TunedLens(nn.Module):
    def __init__(self, states: int, dim: int) -> None:
        """``states``: the hidden states a forward pass gives (layers + 1, the embeddings first)."""
        super().__init__()
        self.translators = nn.ModuleList(nn.Linear(dim, dim) for _ in range(states - 1))
        for translator in self.translators:
            assert isinstance(translator, nn.Linear)
            nn.init.zeros_(translator.weight)
            nn.init.zeros_(translator.bias)

    @property
    def states(self) -> int:
        return len(self.translators) + 1

    def translate(self, hidden: list[torch.Tensor]) -> list[torch.Tensor]:
        """Every state below the output translated (the output's is the model's own: kept)."""
        if len(hidden) != self.states:
            raise ValueError(f"a tuned lens of {self.states} states cannot read {len(hidden)}")
        out = []
        for translator, h in zip(self.translators, hidden[:-1], strict=True):
            out.append(h + translator(h))
        return [*out, hidden[-1]]


def lens_kl(read_layers, hidden: list[torch.Tensor]) -> torch.Tensor:
    """(layers,) mean KL(final || layer l) over the positions of ``hidden`` ((layers + 1) x (P, d)), each
    state read through ``read_layers`` (the model's output head); the output layer's own is left out."""
    logp = read_layers(hidden).float().log_softmax(-1)  # (layers + 1, P, V)
    final = logp[-1].detach()
    kl = (final.exp() * (final - logp[:-1])).sum(-1)  # (layers, P)
    return kl.mean(-1)
