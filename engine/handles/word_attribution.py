"""Which words a word-level language model's next word rests on: the lab's attribution for ELMo and the NNLM,
by the same walk as a Transformer's (engine.handles.gradient_walk), each word's input vector faded in:

* ELMo: a word's vector from its character CNN, faded in from the model's average word (``elmo_input``: from
  zero its LSTMs leave the range they were trained in), read by the forward LSTM from <s> to the last word, whose
  state predicts the next word (as the Next token view's ``next_token``: the same distribution);
* the NNLM (Bengio et al. 2003): the feature vectors C(w) of its window, faded in from zero, the last n-1 words of the sentence;
  the words before them score exactly 0 — the model cannot see them, which is the lesson of its window.

The sentence marks (<s>, and </s> <s> between sentences) keep their vectors: they are not attributed. What is
explained is the log-probability of the model's likeliest next word (<unk> and <s> aside), or of a word the
user names, less a foil word's when one is given.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from engine.errors import InputError
from engine.handles.base import check_text
from engine.handles.continuation import last_sentence
from engine.handles.gradient_walk import ROW_TOKENS, unnamed, walk_until_close, zero_fixed
from engine.lab_results import Attribution
from engine.models.ngram import BOS, EOS, UNK

LogProbs = Callable[[torch.Tensor], torch.Tensor]  # (B, rows, d) input vectors -> (B, V) next-word log-probs


@dataclass(frozen=True)
class WordInput:
    """What a word-level model reads for its next word: the tokens shown (<s> and the words), which are kept as
    they are, the input vectors (one row per position read; ``shown_of_row``: the shown token each row is, -1 for
    padding) and the log-probabilities of the next word given a batch of such rows."""

    tokens: list[str]
    fixed: list[bool]
    x: torch.Tensor
    shown_of_row: list[int]
    log_probs: LogProbs
    notice: str = ""
    baseline: torch.Tensor | None = None  # (d,) what each word fades in from (None: zero)
    row_tokens: int = ROW_TOKENS  # copies x rows in one backward pass
    position: int = -1  # the token whose word is explained (-1: the next word, after the last)
    marks: list[bool] | None = None  # per token: a sentence mark, no word (None: the fixed ones; a blank is a word)


def word_attribution(handle: Any, text: str, read: WordInput, find: Callable[[str], int | None],
                     words: Sequence[str], target: str | None, foil: str | None) -> Attribution:
    """``read``'s attribution of the next word after ``text``, or of its blank (``find``: a word's id in the
    vocabulary ``words``)."""
    with torch.no_grad():
        logp = read.log_probs(read.x[None])[0].float()
    probs = logp.exp()
    if unnamed(target, "target"):
        allowed = logp.clone()
        for w in (UNK, BOS):
            if (i := find(w)) is not None:
                allowed[i] = -torch.inf
        target_id = int(allowed.argmax())
    else:
        target_id = _word_id(handle, str(target), "target", find)
    foil_id = None if unnamed(foil, "foil") else _word_id(handle, str(foil), "foil", find)
    if foil_id == target_id:
        raise InputError("the foil is the target itself: name another word to explain it against")

    def quantity(scaled: torch.Tensor) -> torch.Tensor:
        out = read.log_probs(scaled).float()
        return out[:, target_id] - (out[:, foil_id] if foil_id is not None else 0.0)

    rows_fixed = [s < 0 or read.fixed[s] for s in read.shown_of_row]
    result = walk_until_close(read.x, rows_fixed, quantity, read.baseline, read.row_tokens)
    row_scores = zero_fixed(result, rows_fixed)
    scores = {}
    for method, values in row_scores.items():
        shown = np.zeros(len(read.tokens), np.float32)
        for row, s in enumerate(read.shown_of_row):
            if s >= 0:
                shown[s] += values[row]
        scores[method] = shown
    word_of: list[int] = []
    shown_words: list[str] = []
    for token, mark in zip(read.tokens, read.fixed if read.marks is None else read.marks, strict=True):
        word_of.append(-1 if mark else len(shown_words))
        if not mark:
            shown_words.append(token)
    position = read.position if read.position >= 0 else len(read.tokens) - 1
    return Attribution(text, tuple(read.tokens), tuple(read.fixed), position, words[target_id],
                       float(probs[target_id]), words[foil_id] if foil_id is not None else "",
                       float(probs[foil_id]) if foil_id is not None else float("nan"), scores, result.f_input,
                       result.f_baseline, result.steps, read.notice, tuple(shown_words), tuple(word_of))


def _word_id(handle: Any, word: str, what: str, find: Callable[[str], int | None]) -> int:
    """The vocabulary id of the word the user names (lowercased where the model reads lowercase)."""
    word = check_text(word, what).strip()
    if len(word.split()) > 1:
        raise InputError(f"the {what} '{word}' is several words: {handle.name} predicts one word at a time")
    key = word.lower() if handle.lowercase else word
    found = find(key)
    if found is None or key == UNK:
        raise InputError(f"the {what} '{word}' is not in {handle.name}'s vocabulary (it would be read as {UNK}): "
                         f"name a word it knows")
    return found


def _sentence_marks(context: list[str]) -> list[bool]:
    return [w in (BOS, EOS) for w in context]


def elmo_input(handle: Any, text: str, most_words: int) -> WordInput:
    """What ELMo's forward LM reads for the next word: <s> and the text's last ``most_words`` words."""
    context = handle._context(text)
    notice = ""
    if len(context) > most_words:
        notice = f"the text has {len(context)} words; it reads the next word from the last {most_words}"
        context = context[-most_words:]
    model = handle.model
    with torch.no_grad():
        x = handle.forward_inputs(context)[0]  # (T, proj): <s> and the words

    def log_probs(scaled: torch.Tensor) -> torch.Tensor:
        with without_cudnn(scaled):  # (cuDNN's LSTM has no backward pass in evaluation mode)
            states = model.forward_lm(scaled)[-1]
        return model.softmax.log_prob(states[:, -1].float())

    tokens = [BOS, *context]
    # each word fades in from the model's average word, not from zero: zero vectors drive its LSTMs out of the range
    # they were trained in (over 60 words the walk from zero missed its change 300-fold in 128 steps; from the
    # average word by 15%), and an LSTM's batch is cheap: eight times the rows a pass
    return WordInput(tokens, [True, *_sentence_marks(context)], x, list(range(len(tokens))), log_probs, notice,
                     handle.frequent_word_vectors().mean(0), ROW_TOKENS * 8)


def without_cudnn(x: torch.Tensor) -> contextlib.AbstractContextManager:
    return torch.backends.cudnn.flags(enabled=False) if x.device.type == "cuda" else contextlib.nullcontext()


def nnlm_input(handle: Any, text: str, model: Any, find: Callable[[str], int | None]) -> WordInput:
    """What the NNLM reads for the next word: its window, the last n-1 words of the sentence begun last (<s> before
    the first), from all of whose words the shown tokens are taken."""
    every = handle._context(text)
    context = last_sentence(every)
    unk, bos = find(UNK), find(BOS)
    ids = [i if (i := find(w)) is not None else unk for w in context]
    n = model.cfg.context
    padded = [bos] * n + ids
    window = padded[-n:]
    device = next(model.parameters()).device
    with torch.no_grad():
        x = model.C(torch.tensor(window, device=device))  # (n - 1, m)

    def log_probs(scaled: torch.Tensor) -> torch.Tensor:
        flat = scaled.flatten(1)
        y = model.U(torch.tanh(model.H(flat)))
        if model.W is not None:
            y = y + model.W(flat)
        return torch.log_softmax(y.float(), -1)

    notes = []
    if len(context) > n:
        notes.append(f"its window is its last {n} words: the {len(context) - n} before them cannot change its "
                     f"prediction")
    if len(context) < len(every):
        notes.append("it reads only the sentence begun last")
    unknown = sorted({w for w in context if find(w) is None})
    if unknown:
        notes.append(f"it reads as {UNK} (not in its vocabulary): {', '.join(unknown[:5])}")
    rows = [p - (n - 1) if p >= n - 1 else -1 for p in range(len(padded) - n, len(padded))]
    return WordInput([BOS, *context], [True, *(False for _ in context)], x, rows, log_probs, "; ".join(notes))
