"""BERT (Devlin et al. 2019): a Transformer encoder pre-trained with a masked LM and next-sentence prediction.

    input   = [CLS] A [SEP] B [SEP]                       (WordPiece; segment 0 for A, 1 for B)
    h^0     = LayerNorm(E_token + E_segment + E_position)
    h^l     = LayerNorm(a + FFN(a)),  a = LayerNorm(h^{l-1} + MultiHead(h^{l-1}))        (post-LN)
    MLM     : of 15% of the tokens (never [CLS]/[SEP]/[PAD]), 80% become [MASK], 10% a random token,
              10% stay; predict the original at those positions only:
              p = softmax(E_token^T LayerNorm(GELU(W h_i)) + b)     (decoder tied to the input embeddings)
    NSP     : p(IsNext) = softmax(W_nsp tanh(W_pool h_[CLS]))  with B the true next sentence 50% of the time
    loss    = L_MLM + L_NSP

Parameter names follow Hugging Face ``BertForPreTraining`` closely so that export is a renaming.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine.config.settings import BertConfig
from engine.models.attention import attend, fast_dropout, merge_heads, split_heads
from engine.models.masked_rows import masked_lm_loss, masked_rows, row_bound
from engine.models.packed_linear import gelu, linear

LN_EPS = 1e-12
IGNORE = -100
# a training step's masked rows as a fixed number, on CUDA (engine.models.masked_rows); the GPU check
# measures it against the boolean index (bench/RESULTS.md: the rule declared before its figure)
STATIC_ROWS = True
STATIC_ROWS_ON_CPU = False  # (tests: the same path on a CPU)


class BertLayer(nn.Module):
    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        h = cfg.hidden
        self.heads, self.dropout = cfg.heads, cfg.dropout
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.attn_out = nn.Linear(h, h)
        self.attn_norm = nn.LayerNorm(h, eps=LN_EPS)
        self.ffn_in = nn.Linear(h, cfg.intermediate)
        self.ffn_out = nn.Linear(cfg.intermediate, h)
        self.ffn_norm = nn.LayerNorm(h, eps=LN_EPS)

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor | None, need_weights: bool
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        # x: (B, T, h); pad_mask: (B, T) True on real tokens
        # one matrix product for Q, K and V (the weights stay three tensors, named as in BERT)
        w, b = self._fused_qkv()
        q, k, v = (split_heads(t, self.heads) for t in linear(x, w, b, self, "_qkv_packed").chunk(3, dim=-1))  # (B, H, T, d)
        drop = self.dropout if self.training else 0.0
        ctx, probs = attend(q, k, v, key_padding_mask=pad_mask, dropout=drop, need_weights=need_weights)
        a = self.attn_norm(x + fast_dropout(self.attn_out(merge_heads(ctx)), drop, self.training))
        f = self.ffn_out(gelu(self.ffn_in(a)))
        return self.ffn_norm(a + fast_dropout(f, drop, self.training)), probs

    def _fused_qkv(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Q, K and V's weights side by side, (3h, h) and (3h,). Training concatenates them at each step
        (the gradient flows back to the three); without gradients the result is kept until a weight
        changes: copying 7 MB per layer per query was a tenth of a BERT-base keystroke's pass."""
        params = (self.query.weight, self.key.weight, self.value.weight,
                  self.query.bias, self.key.bias, self.value.bias)
        if torch.is_grad_enabled():
            return torch.cat(params[:3]), torch.cat(params[3:])
        key = tuple((p.data_ptr(), p._version, p.device) for p in params)
        cached = self.__dict__.get("_qkv_cache")
        if cached is None or cached[0] != key:
            cached = (key, torch.cat(params[:3]), torch.cat(params[3:]))
            self.__dict__["_qkv_cache"] = cached  # not a buffer: never saved, never moved
        return cached[1], cached[2]


class Bert(nn.Module):
    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        if cfg.hidden % cfg.heads:
            raise ValueError(f"hidden size {cfg.hidden} is not divisible by {cfg.heads} heads")
        self.cfg = cfg
        h = cfg.hidden
        self.token_emb = nn.Embedding(cfg.vocab_size, h)
        self.segment_emb = nn.Embedding(2, h)
        self.position_emb = nn.Embedding(cfg.max_len, h)
        self.emb_norm = nn.LayerNorm(h, eps=LN_EPS)
        self.layers = nn.ModuleList(BertLayer(cfg) for _ in range(cfg.layers))
        self.pooler = nn.Linear(h, h)
        self.mlm_dense = nn.Linear(h, h)
        self.mlm_norm = nn.LayerNorm(h, eps=LN_EPS)
        self.mlm_bias = nn.Parameter(torch.zeros(cfg.vocab_size))
        self.nsp = nn.Linear(h, 2)
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def encode(self, ids: torch.Tensor, segments: torch.Tensor | None = None, pad_mask: torch.Tensor | None = None,
               need_weights: bool = False) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """ids, segments: (B, T). Returns the hidden states of every layer [(B, T, h)] * (layers + 1)
        (0 = the embedding layer) and, when asked, the attention probabilities [(B, H, T, T)] * layers."""
        b, t = ids.shape
        if t > self.cfg.max_len:
            raise ValueError(f"{t} tokens; this model reads at most {self.cfg.max_len}")
        if segments is None:
            segments = torch.zeros_like(ids)
        pos = torch.arange(t, device=ids.device)
        x = self.token_emb(ids) + self.segment_emb(segments) + self.position_emb(pos)[None]
        x = fast_dropout(self.emb_norm(x), self.cfg.dropout, self.training)
        hidden, attentions = [x], []
        for layer in self.layers:
            x, probs = layer(x, pad_mask, need_weights)
            hidden.append(x)
            if probs is not None:
                attentions.append(probs)
        return hidden, attentions

    def _static_rows(self, device: torch.device) -> bool:
        """Whether a training step takes the masked rows as a fixed number (engine.models.masked_rows): on CUDA,
        where the boolean index makes the host wait for the device (on a CPU it only adds filler rows; Apple's MPS
        keeps the boolean index until the stable sort it needs has been run there)."""
        return STATIC_ROWS and self.training and (device.type == "cuda" or STATIC_ROWS_ON_CPU)

    def mlm_logits(self, h: torch.Tensor) -> torch.Tensor:
        """h: (..., hidden) -> (..., vocab); the decoder is the (tied) token embedding matrix."""
        z = self.mlm_norm(gelu(self.mlm_dense(h)))
        return linear(z, self.token_emb.weight, self.mlm_bias, self, "_decoder_packed")

    def pooled(self, h: torch.Tensor) -> torch.Tensor:
        """h: (B, T, hidden) -> (B, hidden): tanh(W_pool h_[CLS]), the sentence vector that NSP trained and
        that fine-tuning classifies from (BERT §4.1)."""
        return torch.tanh(self.pooler(h[:, 0]))

    def nsp_logits(self, h: torch.Tensor) -> torch.Tensor:
        """h: (B, T, hidden) -> (B, 2), index 0 = IsNext (as in the original and Hugging Face)."""
        return self.nsp(self.pooled(h))

    def forward(self, ids: torch.Tensor, segments: torch.Tensor, pad_mask: torch.Tensor | None,
                labels: torch.Tensor, is_next: torch.Tensor | None = None,
                keep_hidden: list[list[torch.Tensor]] | None = None,
                keep_logits: list[torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        """Pre-training losses. labels: (B, T) original ids at the chosen positions, IGNORE elsewhere;
        is_next: (B,) 1 when B follows A. The MLM head runs only on the chosen positions. ``keep_hidden``:
        a list the layers' states are appended to, ``keep_logits`` one the (n_chosen, V) MLM logits are
        appended to (distillation reads them)."""
        hidden, _ = self.encode(ids, segments, pad_mask)
        if keep_hidden is not None:
            keep_hidden.append(hidden)
        h = hidden[-1]
        chosen = labels != IGNORE  # (B, T)
        if keep_logits is None and self._static_rows(ids.device):  # no wait for the device, one compiled graph
            rows, valid = masked_rows(chosen, row_bound(chosen.numel(), self.cfg.mask_prob,
                                                        getattr(self.cfg, "whole_word", False)))
            logits = self.mlm_logits(h.reshape(-1, h.shape[-1])[rows]).float()  # (K, V)
            target = torch.where(valid, labels.reshape(-1)[rows], IGNORE)
            mlm_loss, correct, count = masked_lm_loss(logits, target, valid)
            out = {"mlm_loss": mlm_loss, "mlm_correct": correct, "mlm_count": count}
        else:
            logits = self.mlm_logits(h[chosen]).float()  # (n_chosen, V)
            if keep_logits is not None:
                keep_logits.append(logits)
            target = labels[chosen]
            out = {"mlm_loss": F.cross_entropy(logits, target) if target.numel() else logits.sum() * 0.0}
            out["mlm_correct"] = (logits.argmax(-1) == target).sum()
            out["mlm_count"] = torch.as_tensor(target.numel(), device=ids.device)
        loss = out["mlm_loss"]
        if is_next is not None and self.cfg.nsp:
            nsp = self.nsp_logits(h).float()
            nsp_target = 1 - is_next.long()  # class 0 = IsNext
            out["nsp_loss"] = F.cross_entropy(nsp, nsp_target)
            out["nsp_correct"] = (nsp.argmax(-1) == nsp_target).sum()
            loss = loss + out["nsp_loss"]
        out["loss"] = loss
        return out


def mask_tokens(ids: torch.Tensor, special: torch.Tensor, *, mask_id: int, vocab_size: int, first_normal: int,
                prob: float = 0.15, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking rule. ids: (B, T); special: (B, T) True on [CLS]/[SEP]/[PAD] (never chosen).

    Each other token is chosen with probability ``prob``; a chosen token becomes [MASK] 80% of the
    time, a random ordinary token 10%, and stays itself 10%. Returns (inputs, labels) where labels hold
    the original id at chosen positions and IGNORE elsewhere.
    """
    def uniform() -> torch.Tensor:
        return torch.rand(ids.shape, device=ids.device, generator=generator)

    chosen = (uniform() < prob) & ~special
    labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE))
    roll = uniform()
    to_mask = chosen & (roll < 0.8)
    to_random = chosen & (roll >= 0.8) & (roll < 0.9)
    random_ids = torch.randint(first_normal, vocab_size, ids.shape, device=ids.device, generator=generator)
    inputs = torch.where(to_mask, torch.full_like(ids, mask_id), ids)
    inputs = torch.where(to_random, random_ids, inputs)
    return inputs, labels
