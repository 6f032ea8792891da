"""Neural probabilistic language model (Bengio et al. 2003).

For the n-1 previous words w_{t-n+1..t-1} with feature vectors C(w) (dimension m), concatenated into
x = (C(w_{t-1}), ..., C(w_{t-n+1})) of size (n-1) m:
    y = b + W x + U tanh(d + H x),      P(w_t | history) = softmax(y)_{w_t}
W are the optional direct connections from the features to the output. Trained with AdamW on the
cross-entropy (the paper used SGD); sentences are padded with ``<s>`` and end with ``</s>``.
The rows of C are word vectors in their own right and are served as static vectors.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from engine.config.settings import NNLMConfig


class NNLM(nn.Module):
    def __init__(self, vocab_size: int, cfg: NNLMConfig) -> None:
        super().__init__()
        self.cfg = cfg
        n_in = cfg.context * cfg.dim
        self.C = nn.Embedding(vocab_size, cfg.dim)  # word features
        self.H = nn.Linear(n_in, cfg.hidden)  # hidden layer (bias d)
        self.U = nn.Linear(cfg.hidden, vocab_size)  # hidden to output (bias b)
        self.W = nn.Linear(n_in, vocab_size, bias=False) if cfg.direct else None
        nn.init.normal_(self.C.weight, std=0.1)

    def forward(self, history: torch.Tensor) -> torch.Tensor:
        """history: (B, n-1) word ids, oldest first -> logits (B, V)."""
        x = self.C(history).flatten(1)  # (B, (n-1) m)
        y = self.U(torch.tanh(self.H(x)))  # (B, V)
        if self.W is not None:
            y = y + self.W(x)
        return y


def windows(sentences: list[list[int]], context: int, bos: int, eos: int) -> tuple[np.ndarray, np.ndarray]:
    """(history (T, n-1), target (T,)) for every word and </s> of every sentence."""
    from engine.models.ngram import flatten

    return flat_windows(*flatten(sentences), context, bos, eos)


def flat_windows(ids: np.ndarray, starts: np.ndarray, context: int, bos: int,
                 eos: int) -> tuple[np.ndarray, np.ndarray]:
    """``windows`` of sentences held as one flat id array and their starts (vectorised)."""
    from engine.models.ngram import pad_flat

    padded, _, target = pad_flat(np.asarray(ids, np.int64), starts, context, bos, eos)
    positions = np.flatnonzero(target)
    if not len(positions):
        return np.zeros((0, context), np.int64), np.zeros(0, np.int64)
    hist = np.lib.stride_tricks.sliding_window_view(padded, context)[positions - context]
    return np.ascontiguousarray(hist), padded[positions]


@torch.no_grad()
def token_logprobs(model: NNLM, sentences: list[list[int]], bos: int, eos: int, device: torch.device,
                   batch: int = 4096) -> list[np.ndarray]:
    model.eval()
    hist, target = windows(sentences, model.cfg.context, bos, eos)
    out = np.zeros(len(target), np.float64)
    for a in range(0, len(target), batch):
        h = torch.from_numpy(hist[a : a + batch]).to(device)
        t = torch.from_numpy(target[a : a + batch]).to(device)
        logp = torch.log_softmax(model(h).float(), -1).gather(1, t[:, None])[:, 0]
        out[a : a + batch] = logp.cpu().numpy()
    bounds = np.cumsum([len(s) + 1 for s in sentences])[:-1]
    return np.split(out, bounds)


@torch.no_grad()
def next_word_logprobs(model: NNLM, ids: list[int], bos: int, device: torch.device) -> np.ndarray:
    """Natural-log probability of every word (and of ``</s>``) after the words ``ids`` of a sentence begun: its
    last n-1 words, ``<s>`` before the first, as ``token_logprobs`` reads each word's history."""
    model.eval()
    context = model.cfg.context
    history = ([bos] * context + [int(i) for i in ids])[-context:]
    logits = model(torch.tensor([history], dtype=torch.long, device=device)).float()
    return torch.log_softmax(logits, -1)[0].cpu().double().numpy()


def perplexity(model: NNLM, sentences: list[list[int]], bos: int, eos: int, device: torch.device) -> float:
    lps = token_logprobs(model, sentences, bos, eos, device)
    n = sum(len(x) for x in lps)
    return math.exp(-sum(float(x.sum()) for x in lps) / max(n, 1))
