"""Scaled dot-product attention shared by BERT and GPT: a fast path for training and an explicit one
that also returns the attention probabilities for inspection.

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_head) + mask) V        (Vaswani et al. 2017, eq. 1)
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def _mask(key_padding_mask: torch.Tensor | None, causal: bool, t_q: int, t_k: int,
          device: torch.device) -> torch.Tensor | None:
    """Boolean (B|1, 1, Tq, Tk) mask, True where a query may attend to a key."""
    mask = None
    if key_padding_mask is not None:
        mask = key_padding_mask[:, None, None, :].bool()  # (B, 1, 1, Tk)
    if causal:
        tri = torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril()[None, None]  # (1, 1, Tq, Tk)
        mask = tri if mask is None else mask & tri
    return mask


def fast_dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Inverted dropout with the mask drawn by ``uniform_`` on a fresh buffer: the same result in
    distribution as F.dropout, several times faster on the CPU (where bernoulli_ dominates a step)."""
    if not training or p <= 0.0:
        return x
    with torch.no_grad():  # a float mask built in place: 0 or 1/(1-p)
        mask = torch.empty_like(x).uniform_().ge_(p).mul_(1.0 / (1.0 - p))
    return x * mask


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, key_padding_mask: torch.Tensor | None = None,
           causal: bool = False, dropout: float = 0.0, need_weights: bool = False
           ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """q, k, v: (B, H, T, d_head); key_padding_mask: (B, T), True on real tokens.

    Returns the output (B, H, T, d_head) and, when ``need_weights``, the probabilities (B, H, T, T).
    """
    t_q, t_k = q.shape[-2], k.shape[-2]
    # SDPA's own dropout is fast on GPUs (flash kernels) but slow on the CPU: there, the explicit path
    if not need_weights and (dropout == 0.0 or q.device.type != "cpu"):
        if key_padding_mask is None:
            return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=causal), None
        mask = _mask(key_padding_mask, causal, t_q, t_k, q.device)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout), None
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (B, H, Tq, Tk)
    mask = _mask(key_padding_mask, causal, t_q, t_k, q.device)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    probs = scores.float().softmax(-1).to(q.dtype)
    out = fast_dropout(probs, dropout, dropout > 0) @ v
    return out, (probs if need_weights else None)


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(B, T, H*d) -> (B, H, T, d)"""
    b, t, c = x.shape
    return x.view(b, t, heads, c // heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, d) -> (B, T, H*d)"""
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)
