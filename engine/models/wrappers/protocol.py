"""The one wrapper of a Transformer network (``Adapter``): what the queries of a loaded model
(engine/handles/transformer.py) and fine-tuning (engine/finetune/encoders.py) both talk to. Every
choice about the network is made here, once: whether it reads left to right, its special tokens around
a text or a pair, how long a text it reads, its sentence vector, what fine-tuning trains."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import nn

from engine.data.inputs import Specials
from engine.errors import Unsupported


@dataclass
class ForwardOutput:
    hidden: list[torch.Tensor]  # (layers + 1) x (B, T, d); 0 = the input (embedding) layer
    attentions: list[torch.Tensor]  # layers x (B, H, T, T), when asked
    logits: torch.Tensor | None  # (B, T, V) or (B, P, V) for asked positions, when the model has an LM head
    nsp: torch.Tensor | None  # (B, 2), index 0 = IsNext


class Adapter(Protocol):
    # ---- what a query reads and predicts
    objective: str  # "masked", "causal" or "none" (no LM head)
    tokenizer: Any  # a tokenizers.Tokenizer that neither truncates nor pads (engine.data.inputs.whole_texts)
    max_len: int  # the longest input it reads, special tokens included
    mask_id: int | None
    specials: Specials  # the special tokens around a query's text (or pair): BERT's [CLS]/[SEP], GPT's BOS
    end_of_text: int | None  # the token a left-to-right model writes where a text ends (a continuation stops)
    has_nsp: bool
    byte_level: bool
    metaspace: bool  # SentencePiece's "▁" marks a word's start (Llama, T5, ALBERT, XLM-R): shown as a space
    missing_head_reason: str
    # ---- what fine-tuning reads
    causal: bool  # each position sees only what comes before it (its sentence vector: the last real token's)
    task_specials: Specials  # around a task's text or pair (GPT §3.3: start, delimiter, extract)
    hidden_size: int
    n_layers: int
    body: nn.Module  # the network fine-tuning trains (a Hugging Face model's without its LM head)

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None, *, attention: bool = False,
                logits: bool = False, nsp: bool = False, positions: list[int] | None = None,
                pad_mask: torch.Tensor | None = None, row_positions: list[int] | None = None) -> ForwardOutput:
        """pad_mask (B, T): 1 on real tokens (right padding). logits (B, T, V), or (B, len(positions), V)
        when only those positions are asked for, or (B, V) at one position per row (row_positions)."""

    def read_layers(self, states: list[torch.Tensor]) -> torch.Tensor:
        """(layers + 1) x (..., d) hidden states -> (layers + 1, ..., V) logits through the output head (the
        logit lens): one position's states, or every position's."""

    def direct_readout(self, name: str) -> Any:
        """A pre-LN network's final norm and head (engine.models.wrappers.readout.DirectReadout), which its heads
        write straight into; Unsupported, with the reason, for a post-LN one (``name``: the model's, for it)."""

    def input_embedding(self) -> nn.Module:
        """The token embedding (its output: a (B, T, d) vector per token, before positions are added): where
        attribution fades the text in."""

    def layer_modules(self) -> tuple[nn.Module, list[nn.Module]]:
        """The token embedding and the blocks whose outputs are hidden states 1..layers: where causal
        tracing noises a token and restores a state (forward hooks)."""

    def features(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, T) -> (B, T, hidden_size): the last layer's states, with gradients where they are on."""

    def pooled(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, T, d) -> (B, d): the sentence vector a task head reads."""

    def lm_loss(self, states: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
        """The language-model loss on a task's own text (GPT's auxiliary objective); None without one."""

    def reset(self) -> None:
        """Random weights in ``body``, the same architecture (fine-tuning's from-scratch ablation)."""

    def files(self) -> dict[str, Callable[[Path], None]]:
        """Files a fine-tuned run keeps beside its weights to rebuild this network (our tokenizer.json)."""

    def save_network(self, folder: Path) -> None:
        """Write what rebuilds this network untrained into ``folder`` (a Hugging Face config and tokenizer);
        ours need nothing there (their settings go into the run's config.json)."""


def blocks_of(network: nn.Module, n_layers: int) -> list[nn.Module]:
    """The first list of ``n_layers`` modules in ``network``: its Transformer blocks, whatever their name
    (ours: layers or blocks; Hugging Face: encoder.layer, h, layers)."""
    for module in network.modules():
        if isinstance(module, nn.ModuleList) and len(module) == n_layers:
            return list(module)
    raise Unsupported(f"{type(network).__name__} keeps no separate module for each of its {n_layers} layers (ALBERT's "
                      "layers share one set of weights), so one layer cannot be read or changed on its own: causal "
                      "tracing, the heads' knock-outs and the MLP neurons need a model with a block per layer (BERT, "
                      "GPT, RoBERTa, …)")


def reset_weights(network: nn.Module) -> None:
    """Random weights, same architecture: N(0, 0.02) for linear and embedding weights, zero biases, a
    module's own reset for the rest (LayerNorms kept)."""
    for module in network.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        elif callable(reset := getattr(module, "reset_parameters", None)) and not isinstance(module, nn.LayerNorm):
            reset()
