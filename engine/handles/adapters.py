"""What a transformer handle talks to: an ``Adapter`` that runs one network (ours or a Hugging Face
model) and says what it reads and predicts. Our BERT and GPT have one each here; a Hugging Face
model's is ``engine.handles.hf.HFAdapter``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import torch

from engine.data.inputs import Specials, bert_specials, separator
from engine.models.packed_linear import pack_linears


@dataclass
class ForwardOutput:
    hidden: list[torch.Tensor]  # (layers + 1) x (B, T, d); 0 = the input (embedding) layer
    attentions: list[torch.Tensor]  # layers x (B, H, T, T), when asked
    logits: torch.Tensor | None  # (B, T, V) or (B, P, V) for asked positions, when the model has an LM head
    nsp: torch.Tensor | None  # (B, 2), index 0 = IsNext


class Adapter(Protocol):
    objective: str  # "masked", "causal" or "none" (no LM head)
    tokenizer: Any  # a tokenizers.Tokenizer
    max_len: int
    mask_id: int | None
    specials: Specials  # the special tokens around a text (or a pair): BERT's [CLS]/[SEP], GPT's BOS
    has_nsp: bool
    byte_level: bool
    missing_head_reason: str

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None, *, attention: bool = False,
                logits: bool = False, nsp: bool = False, positions: list[int] | None = None,
                pad_mask: torch.Tensor | None = None, row_positions: list[int] | None = None) -> ForwardOutput:
        """pad_mask (B, T): 1 on real tokens (right padding). logits (B, T, V), or (B, len(positions), V)
        when only those positions are asked for, or (B, V) at one position per row (row_positions)."""

    def read_layers(self, states: list[torch.Tensor]) -> torch.Tensor:
        """(layers + 1) x (d,) hidden states at one position -> (layers + 1, V) logits through the output
        head (the logit lens)."""


class OurAdapter:
    """Our BERT or GPT behind the Adapter interface: what the two share. ``BertAdapter`` and
    ``GPTAdapter`` say what each reads and predicts (no branch on the family's name)."""

    model: Any  # engine.models.bert.Bert or engine.models.gpt.GPT
    objective = ""
    byte_level = False

    def __init__(self, kind: str, model: Any, tokenizer: Any, device: torch.device) -> None:
        self.kind, self.model, self.tokenizer, self.device = kind, model.to(device).eval(), tokenizer, device
        pack_linears(self.model)  # queries' short products through oneDNN on the CPU (see its module)
        self.max_len: int = model.cfg.max_len
        self.has_nsp = False
        self.mask_id = tokenizer.token_to_id("[MASK]")
        self.pad_id = tokenizer.token_to_id("[PAD]")
        self.specials = Specials()
        self.missing_head_reason = ""

    def _encode(self, ids: torch.Tensor, segments: torch.Tensor | None, pad_mask: torch.Tensor | None,
                attention: bool) -> tuple[list[torch.Tensor], Any]:
        raise NotImplementedError

    def _logits(self, states: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, ids: torch.Tensor, segments: torch.Tensor | None, *, attention: bool = False,
                logits: bool = False, nsp: bool = False, positions: list[int] | None = None,
                pad_mask: torch.Tensor | None = None, row_positions: list[int] | None = None) -> ForwardOutput:
        hidden, atts = self._encode(ids, segments, pad_mask, attention)
        last = hidden[-1] if positions is None else hidden[-1][:, positions]  # the LM head only where asked
        if row_positions is not None:
            last = hidden[-1][torch.arange(len(row_positions)), torch.tensor(row_positions)]  # (B, d)
        lg = self._logits(last) if logits else None
        ns = self.model.nsp_logits(hidden[-1]) if nsp and self.has_nsp else None
        return ForwardOutput(hidden, atts, lg, ns)


class BertAdapter(OurAdapter):
    """A masked LM that reads both sides ([CLS] A [SEP] B [SEP]), with next-sentence prediction if trained so."""

    objective = "masked"

    def __init__(self, model: Any, tokenizer: Any, device: torch.device, kind: str = "bert") -> None:
        super().__init__(kind, model, tokenizer, device)
        self.has_nsp = bool(model.cfg.nsp)
        self.specials = bert_specials(tokenizer)

    def _encode(self, ids: torch.Tensor, segments: torch.Tensor | None, pad_mask: torch.Tensor | None,
                attention: bool) -> tuple[list[torch.Tensor], Any]:
        return self.model.encode(ids, segments, pad_mask, need_weights=attention)

    def _logits(self, states: torch.Tensor) -> torch.Tensor:
        return self.model.mlm_logits(states)

    def read_layers(self, states: list[torch.Tensor]) -> torch.Tensor:
        return self.model.mlm_logits(torch.stack(states))  # (layers + 1, V)


class GPTAdapter(OurAdapter):
    """A left-to-right LM: texts start with (and are separated by) its separator token."""

    objective = "causal"

    def __init__(self, model: Any, tokenizer: Any, device: torch.device, kind: str = "gpt") -> None:
        super().__init__(kind, model, tokenizer, device)
        self.byte_level = getattr(model.cfg, "tokenizer", "bpe") == "bpe"
        self.specials = Specials((tokenizer.token_to_id(separator(self.byte_level)),))

    def _encode(self, ids: torch.Tensor, segments: torch.Tensor | None, pad_mask: torch.Tensor | None,
                attention: bool) -> tuple[list[torch.Tensor], Any]:
        return self.model.encode(ids, need_weights=attention)

    def _logits(self, states: torch.Tensor) -> torch.Tensor:
        return self.model.logits(states)

    def read_layers(self, states: list[torch.Tensor]) -> torch.Tensor:
        h = torch.stack(states)  # (layers + 1, d)
        # the last state already went through the final LayerNorm; the ones below get it here
        return self.model.logits(torch.cat([self.model.final_norm(h[:-1]), h[-1:]]))
