"""Our BERT's and GPT's wrappers (``engine.models.wrappers.protocol.Adapter``): what each reads and
predicts for a query, and what fine-tuning trains (no branch on the family's name)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from engine.data.inputs import Specials, bert_specials, separator
from engine.models.packed_linear import pack_linears
from engine.models.wrappers.protocol import ForwardOutput, blocks_of, reset_weights
from engine.models.wrappers.readout import DirectReadout, post_norm_refusal


class OurAdapter:
    """What our BERT and GPT share; ``BertAdapter`` and ``GPTAdapter`` say what each reads and predicts."""

    model: Any  # engine.models.bert.Bert or engine.models.gpt.GPT
    objective = ""
    byte_level = False
    metaspace = False
    causal = False

    def __init__(self, kind: str, model: Any, tokenizer: Any, device: torch.device) -> None:
        self.kind, self.model, self.tokenizer, self.device = kind, model.to(device).eval(), tokenizer, device
        pack_linears(self.model)  # queries' short products through oneDNN on the CPU (see its module)
        self.max_len: int = model.cfg.max_len
        self.has_nsp = False
        self.mask_id = tokenizer.token_to_id("[MASK]")
        self.pad_id = tokenizer.token_to_id("[PAD]")
        self.specials = Specials()
        self.task_specials = Specials()
        self.end_of_text: int | None = None
        self.missing_head_reason = ""
        self.body: nn.Module = self.model
        self.hidden_size: int = model.cfg.hidden
        self.n_layers: int = model.cfg.layers

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
            rows = torch.arange(len(row_positions), device=hidden[-1].device)  # (on the states' device)
            last = hidden[-1][rows, torch.tensor(row_positions, device=hidden[-1].device)]  # (B, d)
        lg = self._logits(last) if logits else None
        ns = self.model.nsp_logits(hidden[-1]) if nsp and self.has_nsp else None
        return ForwardOutput(hidden, atts, lg, ns)

    def features(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self._encode(ids, segments, mask, False)[0][-1]

    def input_embedding(self) -> nn.Module:
        return self.model.token_emb

    def layer_modules(self) -> tuple[nn.Module, list[nn.Module]]:
        return self.model.token_emb, blocks_of(self.model, self.n_layers)

    def lm_loss(self, states: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
        return None

    def direct_readout(self, name: str) -> DirectReadout:
        """The final norm and head a pre-LN network's heads write straight into (engine.models.wrappers.readout);
        our BERT is post-LN."""
        raise post_norm_refusal(name)

    def reset(self) -> None:
        reset_weights(self.body)

    def files(self) -> dict[str, Callable[[Path], None]]:
        return {"tokenizer.json": lambda p: self.tokenizer.save(str(p))}

    def save_network(self, folder: Path) -> None:
        return None  # rebuilt from the run's config.json and its tokenizer.json


class BertAdapter(OurAdapter):
    """A masked LM that reads both sides ([CLS] A [SEP] B [SEP]), with next-sentence prediction if trained
    so; its sentence vector is the pooler's tanh(W h_[CLS]) (BERT §4.1)."""

    objective = "masked"

    def __init__(self, model: Any, tokenizer: Any, device: torch.device, kind: str = "bert") -> None:
        super().__init__(kind, model, tokenizer, device)
        self.has_nsp = bool(model.cfg.nsp)
        self.specials = self.task_specials = bert_specials(tokenizer)

    def _encode(self, ids: torch.Tensor, segments: torch.Tensor | None, pad_mask: torch.Tensor | None,
                attention: bool) -> tuple[list[torch.Tensor], Any]:
        return self.model.encode(ids, segments, pad_mask, need_weights=attention)

    def _logits(self, states: torch.Tensor) -> torch.Tensor:
        return self.model.mlm_logits(states)

    def read_layers(self, states: list[torch.Tensor]) -> torch.Tensor:
        return self.model.mlm_logits(torch.stack(states))  # (layers + 1, V)

    def pooled(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model.pooled(states)


class GPTAdapter(OurAdapter):
    """A left-to-right LM: a query's text starts with its separator token; a task's text or pair is
    <s> A <$> B <e> with that one token in the three places (GPT §3.3), read at the last token."""

    objective = "causal"
    causal = True

    def __init__(self, model: Any, tokenizer: Any, device: torch.device, kind: str = "gpt") -> None:
        super().__init__(kind, model, tokenizer, device)
        self.byte_level = getattr(model.cfg, "tokenizer", "bpe") == "bpe"
        delimiter = tokenizer.token_to_id(separator(self.byte_level))
        self.specials = Specials((delimiter,))
        self.task_specials = Specials((delimiter,), (delimiter,), (delimiter,), 1)
        self.end_of_text = delimiter  # (it trained on documents one after another, this token after each)
        # read a document's sentences glued together, "day.she" (trained before 2026-12-06; a run's config says
        # "sentences_spaced" since): its continuations get the space back (engine.handles.continuation)
        self.glued_sentences = self.byte_level

    def _encode(self, ids: torch.Tensor, segments: torch.Tensor | None, pad_mask: torch.Tensor | None,
                attention: bool) -> tuple[list[torch.Tensor], Any]:
        return self.model.encode(ids, need_weights=attention)

    def _logits(self, states: torch.Tensor) -> torch.Tensor:
        return self.model.logits(states)

    def read_layers(self, states: list[torch.Tensor]) -> torch.Tensor:
        h = torch.stack(states)  # (layers + 1, d)
        # the last state already went through the final LayerNorm; the ones below get it here
        return self.model.logits(torch.cat([self.model.final_norm(h[:-1]), h[-1:]]))

    def pooled(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model.last_token(states, mask.sum(1))

    def direct_readout(self, name: str) -> DirectReadout:
        return DirectReadout(self.model.final_norm, self.model.logits)  # (pre-LN: engine.models.gpt)

    def lm_loss(self, states: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.model.logits(states[:, :-1]).float()  # (B, T-1, V)
        keep = mask[:, 1:]
        return nn.functional.cross_entropy(logits[keep], ids[:, 1:][keep])
