"""ELMo's biLM (Peters et al. 2018): character CNN word encoder + forward and backward LSTM language models.

    x_k      = Proj(Highway^2(max-pool_t ReLU(Conv_w(CharEmb(chars of word k))) for each filter width w))
    forward  : h->_{k,j} = LSTMP_j(h->_{k,j-1}),  p(t_k | t_1..t_{k-1}) = softmax(W h->_{k-1,L})
    backward : h<-_{k,j} = LSTMP_j(h<-_{k,j-1}),  p(t_k | t_{k+1}..t_N) = softmax(W h<-_{k+1,L})
    loss     = -(log p_forward + log p_backward) / 2        (token encoder and softmax W shared)
    R_k      = {x_k ⊕ x_k, h->_{k,1} ⊕ h<-_{k,1}, h->_{k,2} ⊕ h<-_{k,2}}    (layers 0, 1, 2)
    ELMo_k   = γ Σ_j softmax(s)_j R_{k,j}                                  (ScalarMix, task-specific)

LSTMP is an LSTM whose hidden state is projected down (``proj_size``), with a residual connection
from the first layer to the second. The softmax over the word vocabulary is adaptive (Grave et al.
2017), so it scales to a large vocabulary. Characters are UTF-8 bytes, so every word has a vector.
"""

from __future__ import annotations

import contextlib
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from engine.config.settings import ElmoConfig
from engine.models.adaptive_softmax import two_losses
from engine.models.packed_linear import row_bucket

# oneDNN has no projected LSTM; torch falls back to its own kernel and says so on every call
warnings.filterwarnings("ignore", message="LSTM with projections is not supported with oneDNN")

CHAR_PAD, BOW, EOW, SENT_BEGIN, SENT_END = 0, 257, 258, 259, 260
N_CHARS = 261
BOS_WORD, EOS_WORD = "<s>", "</s>"


def parse_filters(spec: str) -> list[tuple[int, int]]:
    """'1:32,2:32' -> [(1, 32), (2, 32)] (width, count)."""
    try:
        pairs = [tuple(int(x) for x in part.split(":")) for part in spec.split(",") if part.strip()]
        if not pairs or any(len(p) != 2 or p[0] < 1 or p[1] < 1 for p in pairs):
            raise ValueError
    except ValueError:
        raise ValueError(f"filters must look like '1:32,2:64' (width:count), not {spec!r}") from None
    return [(p[0], p[1]) for p in pairs]


def word_chars(word: str, max_chars: int) -> list[int]:
    """Character ids of one word: begin-of-word, its UTF-8 bytes (+1), end-of-word, padding."""
    if word == BOS_WORD:
        body = [SENT_BEGIN]
    elif word == EOS_WORD:
        body = [SENT_END]
    else:
        body = [b + 1 for b in word.encode("utf-8")[: max_chars - 2]]
    ids = [BOW, *body, EOW]
    return ids + [CHAR_PAD] * (max_chars - len(ids))


class Highway(nn.Module):
    """y = g ⊙ x + (1 - g) ⊙ ReLU(W_h x),  g = σ(W_g x)   (Srivastava et al. 2015)"""

    def __init__(self, dim: int, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, 2 * dim) for _ in range(layers))
        for layer in self.layers:
            assert isinstance(layer, nn.Linear)
            nn.init.constant_(layer.bias[dim:], 1.0)  # start by carrying the input through

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            h, g = layer(x).chunk(2, dim=-1)
            gate = torch.sigmoid(g)
            x = gate * x + (1 - gate) * F.relu(h)
        return x


class CharCNN(nn.Module):
    def __init__(self, cfg: ElmoConfig) -> None:
        super().__init__()
        self.filters = parse_filters(cfg.filters)
        self.char_emb = nn.Embedding(N_CHARS, cfg.char_dim, padding_idx=CHAR_PAD)
        self.convs = nn.ModuleList(nn.Conv1d(cfg.char_dim, n, w) for w, n in self.filters)
        total = sum(n for _, n in self.filters)
        self.highway = Highway(total, cfg.highway)
        self.proj = nn.Linear(total, cfg.proj)

    def forward(self, chars: torch.Tensor) -> torch.Tensor:
        """chars: (..., C) -> (..., proj)"""
        shape = chars.shape[:-1]
        e = self.char_emb(chars.reshape(-1, chars.shape[-1])).transpose(1, 2)  # (N, char_dim, C)
        rows = padded = e.shape[0]
        if not torch.is_grad_enabled() and e.device.type == "cpu":
            # a query's words, padded to a few counts: oneDNN builds and keeps a convolution for every input shape
            # (five for each count of words it met, as it did a GELU per sentence length: engine/models/packed_linear.py)
            padded = row_bucket(rows)
        if padded != rows:
            e = torch.cat([e, e.new_zeros(padded - rows, *e.shape[1:])])
        pooled = [F.relu(conv(e).max(dim=-1).values[:rows]) for conv in self.convs]  # [(N, n_w)]
        x = self.proj(self.highway(torch.cat(pooled, dim=-1)))  # (N, proj)
        return x.view(*shape, -1)


class ScalarMix(nn.Module):
    """ELMo_k = γ Σ_j softmax(s)_j R_{k,j}: the task-specific mix of the biLM layers, learned in fine-tuning."""

    def __init__(self, layers: int = 3) -> None:
        super().__init__()
        self.scalars = nn.Parameter(torch.zeros(layers))
        self.gamma = nn.Parameter(torch.ones(()))

    def forward(self, layers: torch.Tensor) -> torch.Tensor:
        """layers: (L, ..., d) -> (..., d)"""
        w = self.scalars.softmax(0).view(-1, *([1] * (layers.dim() - 1)))
        return self.gamma * (w * layers).sum(0)


class Direction(nn.Module):
    """One direction's stack of projected LSTMs, with a residual connection between layers."""

    def __init__(self, cfg: ElmoConfig) -> None:
        super().__init__()
        self.lstms = nn.ModuleList(
            nn.LSTM(cfg.proj, cfg.hidden, proj_size=cfg.proj, batch_first=True) for _ in range(cfg.layers)
        )
        self.dropout = cfg.dropout

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        """x: (B, T, proj) -> outputs of each layer [(B, T, proj)]; float32 under autocast too (see LSTM_IN_FP32)."""
        outs = []
        with _lstm_precision(x):
            if LSTM_IN_FP32:
                x = x.float()
            for j, lstm in enumerate(self.lstms):
                h, _ = lstm(F.dropout(x, self.dropout, self.training))
                x = h + x if j > 0 else h  # residual from the first layer on
                outs.append(x)
        return outs


# The recurrences run in float32 with autocast off. Under CUDA's bf16 autocast the LSTM's input is bf16, which
# torch has long not handed to cuDNN (its cudnn_is_acceptable took float, double and half): torch then steps
# through the 20 positions itself, a few kernels per position, layer and direction. The third GPU check counted
# 858 launches and 21 waits a step of ELMo-tiny (32 windows), a step bound by the host; cuDNN runs a layer in one call
# (float32, TF32 tensor cores). It also keeps the recurrence's sums out of bf16's 8-bit mantissa. Not yet
# measured on a GPU; False: the old path, kept to measure against (bench/gpu_figures.py elmo --old-path).
LSTM_IN_FP32 = True


def _lstm_precision(x: torch.Tensor) -> contextlib.AbstractContextManager:
    if LSTM_IN_FP32 and torch.is_autocast_enabled(x.device.type):
        return torch.autocast(x.device.type, enabled=False)
    return contextlib.nullcontext()


class BiLM(nn.Module):
    def __init__(self, cfg: ElmoConfig, vocab_size: int) -> None:
        super().__init__()
        self.cfg, self.vocab_size = cfg, vocab_size
        self.token_encoder = CharCNN(cfg)
        self.forward_lm = Direction(cfg)
        self.backward_lm = Direction(cfg)
        cutoffs = sorted({c for c in (vocab_size // 20, vocab_size // 4) if 0 < c < vocab_size - 1})
        self.softmax = nn.AdaptiveLogSoftmaxWithLoss(cfg.proj, vocab_size, cutoffs, div_value=4.0)

    def layers(self, chars: torch.Tensor, lengths: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """chars: (B, T, C); lengths: (B,) real words per row when rows are right-padded (the backward
        LM then reads each row from its own last word, not from the padding). Returns the token vectors
        (B, T, proj), the forward layers and the backward layers (each [(B, T, proj)], aligned with the input)."""
        x = self.token_encoder(chars)
        fwd = self.forward_lm(x)
        if lengths is None:
            bwd = [h.flip(1) for h in self.backward_lm(x.flip(1))]
        else:
            t = torch.arange(x.shape[1], device=x.device)[None]  # (1, T)
            rev = torch.where(t < lengths[:, None], lengths[:, None] - 1 - t, t)  # (B, T), its own inverse
            index = rev[..., None].expand(-1, -1, x.shape[-1])
            bwd = [h.gather(1, index) for h in self.backward_lm(x.gather(1, index))]
        return x, fwd, bwd

    def representations(self, chars: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """(B, T, C) -> (layers + 1, B, T, 2 * proj): layer 0 = [x; x], layer j = [forward_j; backward_j]."""
        x, fwd, bwd = self.layers(chars, lengths)
        return torch.stack([torch.cat([x, x], -1), *(torch.cat([f, b], -1) for f, b in zip(fwd, bwd, strict=True))])

    def forward(self, chars: torch.Tensor, next_ids: torch.Tensor, prev_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """chars: (B, T, C) the input words; next_ids / prev_ids: (B, T) the word after / before each
        (vocabulary ids). Loss: the mean of the two directions' cross-entropies."""
        _, fwd, bwd = self.layers(chars)
        d = self.cfg.dropout if self.training else 0.0
        f_out = F.dropout(fwd[-1], d, self.training).reshape(-1, self.cfg.proj).float()
        b_out = F.dropout(bwd[-1], d, self.training).reshape(-1, self.cfg.proj).float()
        # both directions in one call of the softmax: one wait for the device a step (engine/models/adaptive_softmax.py)
        forward_loss, backward_loss = two_losses(self.softmax, f_out, next_ids.reshape(-1), b_out, prev_ids.reshape(-1))
        return {"loss": (forward_loss + backward_loss) / 2, "forward_loss": forward_loss,
                "backward_loss": backward_loss}

    def next_word_log_probs(self, chars: torch.Tensor) -> torch.Tensor:
        """(1, T, C) with <s> … </s> -> (V,): the forward LM's distribution after the last word (the
        adaptive softmax at that one position, not at every position)."""
        _, fwd, _ = self.layers(chars)
        return self.softmax.log_prob(fwd[-1][0, -2:-1].float())[0]

    def target_log_probs(self, chars: torch.Tensor, lengths: torch.Tensor, ids: torch.Tensor
                         ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows of <s> w_1 … w_n </s>, right-padded: chars (B, T, C), lengths (B,) = n + 2, ids (B, T) their
        vocabulary ids. Returns the forward LM's log p of each word after <s> given the words before it, and the
        backward LM's of each word before </s> given the words after it (each (Σ (n + 1),), the rows' in turn):
        the terms of a sentence's score, read only at the words scored (no whole-vocabulary rows)."""
        _, fwd, bwd = self.layers(chars, lengths)
        valid = torch.arange(chars.shape[1] - 1, device=chars.device)[None] < (lengths - 1)[:, None]  # (B, T - 1)
        forward = self.softmax(fwd[-1][:, :-1][valid].float(), ids[:, 1:][valid]).output
        backward = self.softmax(bwd[-1][:, 1:][valid].float(), ids[:, :-1][valid]).output
        return forward, backward

    def log_probs(self, chars: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(1, T, C) -> forward and backward log-distributions (T, V): the forward one at position k
        predicts word k+1, the backward one predicts word k-1."""
        _, fwd, bwd = self.layers(chars)
        return (self.softmax.log_prob(fwd[-1][0].float()), self.softmax.log_prob(bwd[-1][0].float()))
