"""GPT (Radford et al. 2018): a decoder-only Transformer trained as a left-to-right language model.

    h^0   = E_token[u] + E_position                                  (learned positions)
    h^l   = b + MLP(LN(b)),  b = h^{l-1} + MaskedMultiHead(LN(h^{l-1}))  (pre-LN, as in GPT-2)
    P(u_i | u_<i) = softmax(LN(h^L_{i-1}) E_token^T)                  (output tied to the input embeddings)
    L     = -sum_i log P(u_i | u_<i)

The activation is GELU (tanh form, GPT-2's "gelu_new"). Names map one-to-one onto Hugging Face
``GPT2LMHeadModel`` (whose Conv1D weights are our Linear weights transposed).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from engine.config.settings import GPTConfig
from engine.models.attention import attend, fast_dropout, merge_heads, split_heads
from engine.models.packed_linear import linear

LN_EPS = 1e-5


class GPTBlock(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        h = cfg.hidden
        self.heads, self.dropout = cfg.heads, cfg.dropout
        self.norm1 = nn.LayerNorm(h, eps=LN_EPS)
        self.qkv = nn.Linear(h, 3 * h)
        self.attn_out = nn.Linear(h, h)
        self.norm2 = nn.LayerNorm(h, eps=LN_EPS)
        self.ffn_in = nn.Linear(h, cfg.intermediate)
        self.ffn_out = nn.Linear(cfg.intermediate, h)

    def forward(self, x: torch.Tensor, need_weights: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
        # x: (B, T, h)
        q, k, v = (split_heads(t, self.heads) for t in self.qkv(self.norm1(x)).chunk(3, dim=-1))  # (B, H, T, d)
        drop = self.dropout if self.training else 0.0
        ctx, probs = attend(q, k, v, causal=True, dropout=drop, need_weights=need_weights)
        x = x + fast_dropout(self.attn_out(merge_heads(ctx)), drop, self.training)
        f = self.ffn_out(F.gelu(self.ffn_in(self.norm2(x)), approximate="tanh"))
        return x + fast_dropout(f, drop, self.training), probs


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        if cfg.hidden % cfg.heads:
            raise ValueError(f"hidden size {cfg.hidden} is not divisible by {cfg.heads} heads")
        self.cfg = cfg
        self.token_emb = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.position_emb = nn.Embedding(cfg.max_len, cfg.hidden)
        self.blocks = nn.ModuleList(GPTBlock(cfg) for _ in range(cfg.layers))
        self.final_norm = nn.LayerNorm(cfg.hidden, eps=LN_EPS)
        self.apply(self._init)
        for block in self.blocks:  # GPT-2: residual projections scaled by 1/sqrt(2 * layers)
            assert isinstance(block, GPTBlock)
            nn.init.normal_(block.attn_out.weight, std=0.02 / (2 * cfg.layers) ** 0.5)
            nn.init.normal_(block.ffn_out.weight, std=0.02 / (2 * cfg.layers) ** 0.5)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def encode(self, ids: torch.Tensor, need_weights: bool = False) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """ids: (B, T). Hidden states [(B, T, h)] * (layers + 1) (0 = embeddings; the last one after the
        final LayerNorm) and, when asked, attention probabilities [(B, H, T, T)] * layers."""
        t = ids.shape[1]
        if t > self.cfg.max_len:
            raise ValueError(f"{t} tokens; this model reads at most {self.cfg.max_len}")
        x = self.token_emb(ids) + self.position_emb(torch.arange(t, device=ids.device))[None]
        x = fast_dropout(x, self.cfg.dropout, self.training)
        hidden, attentions = [x], []
        for i, block in enumerate(self.blocks):
            x, probs = block(x, need_weights)
            hidden.append(self.final_norm(x) if i == len(self.blocks) - 1 else x)
            if probs is not None:
                attentions.append(probs)
        return hidden, attentions

    @staticmethod
    def last_token(h: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """h: (B, T, hidden), lengths: (B,) -> (B, hidden): the state at each row's last real token (the
        "extract" token GPT's fine-tuning classifies from, §3.3; right padding never reaches it)."""
        return h[torch.arange(h.shape[0], device=h.device), lengths - 1]

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        """h: (..., hidden) final hidden states -> (..., vocab)."""
        return linear(h, self.token_emb.weight, None, self, "_decoder_packed")

    def forward(self, ids: torch.Tensor, targets: torch.Tensor) -> dict[str, torch.Tensor]:
        """ids, targets: (B, T), targets = ids shifted left by one. Mean cross-entropy per token."""
        hidden, _ = self.encode(ids)
        logits = self.logits(hidden[-1]).float()  # (B, T, V)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.reshape(-1))
        return {"loss": loss}
