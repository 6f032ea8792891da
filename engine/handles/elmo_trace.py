"""Causal tracing (Meng et al. 2022) of ELMo's forward LM: why its next word comes, read off an LSTM.

The subject's word vectors (its character CNN's) are noised, then one state of the clean run is put back at a
time: a word's vector (layer 0), or an LSTM layer's state at one word — its output there (what the layer above
reads) and its recurrent state (h, c), from which the layer goes on along the sentence. The probability of the
clean prediction after the last word is measured each time. Where a Transformer moves a fact between tokens by
attention, an LSTM can only carry it along the sentence, word by word, in its recurrent state: a restored state
brings the prediction back only where the information is still on its way. With a ``contrast`` sentence of as
many words the contrast's run is the corrupted one (activation patching) and the subject is where the two differ.
"""

from __future__ import annotations

from typing import Any

import torch

from engine.cancel import check_cancelled
from engine.data.text import word_spans
from engine.errors import InputError
from engine.handles.base import check_samples, check_text
from engine.handles.lens import MAX_TRACE_TOKENS, NOISE_TIMES_STD
from engine.lab_results import CausalTrace
from engine.models.ngram import BOS, EOS


def elmo_causal_trace(handle: Any, text: str, subject: str, samples: int = 3, contrast: str | None = None,
                      seed: int = 0) -> CausalTrace:
    """``handle``'s (ELMo's) forward LM traced on ``text``: each (layer, word) state of the clean run restored in a
    run whose ``subject`` words are noised (``samples`` draws), or run as ``contrast``."""
    model = handle.model
    context = handle._context(text)
    words = [BOS, *context]
    n = len(words)
    if n > MAX_TRACE_TOKENS:
        raise InputError(f"tracing explains one sentence of at most {MAX_TRACE_TOKENS - 1} words; this text has "
                         f"{n - 1}: shorten it")
    with torch.inference_mode():
        x = handle.forward_inputs(context)[0]  # (T, proj): <s> and the words
    other: list[str] | None = None
    if contrast is not None and contrast.strip():
        other = _contrast_words(handle, context, contrast)
        subj = [t for t in range(1, n) if words[t] != other[t - 1]]
        samples, std = 1, 0.0
        with torch.inference_mode():
            corrupted = handle.forward_inputs(other)  # (1, T, proj)
    else:
        subj = _subject_positions(handle, context, subject)
        samples = check_samples(samples)
        std = _noise_scale(handle)
        draws = torch.randn(samples, len(subj), x.shape[-1], generator=torch.Generator().manual_seed(seed)) * std
        corrupted = x[None].repeat(samples, 1, 1)
        corrupted[:, subj] = corrupted[:, subj] + draws.to(x.device, x.dtype)
    lstms = list(model.forward_lm.lstms)
    with torch.inference_mode():
        clean_top, corrupt_top, tops = restored_tops(lstms, x, corrupted)
        clean = model.softmax.log_prob(clean_top[None].float()).exp()[0]
        target = int(clean.argmax())
        p_corrupt = float(model.softmax.log_prob(corrupt_top.float()).exp()[:, target].mean())
        layers, _, samples_, d = tops.shape
        p = model.softmax.log_prob(tops.reshape(-1, d).float()).exp()[:, target]
        restored = p.reshape(layers, n, samples_).mean(-1).float().cpu().numpy()
    name = handle.word_list.__getitem__
    return CausalTrace(text, tuple(words), tuple(subj), n - 1, name(target), float(clean[target]), p_corrupt,
                       restored, samples, std, contrast=contrast.strip() if other is not None and contrast else "",
                       contrast_tokens=(BOS, *other) if other is not None else ())


def restored_tops(lstms: list[Any], x: torch.Tensor, corrupted: torch.Tensor
                  ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One direction's LSTMs reading ``x`` (T, proj) clean and ``corrupted`` (S, T, proj): the top layer's state
    after the last word, clean (proj,) and corrupted (S, proj), and with each (layer, word) state of the clean run
    put back in the corrupted one — (layers + 1, T, S, proj): layer 0 a word's vector, layer k + 1 LSTM k's output
    at the word and its recurrent state (h, c), from which it goes on along the words."""
    n = x.shape[0]
    layers = len(lstms) + 1
    clean_outs, clean_states = _stepped(lstms, x[None])
    corrupt_outs = _run(lstms, corrupted)
    tops = torch.empty(layers, n, corrupted.shape[0], x.shape[-1], device=x.device)
    check_cancelled("causal tracing")
    # layer 0: one word's vector put back, every position at once (rows: samples x positions)
    rows = corrupted.repeat_interleave(n, 0)  # (S * T, T, proj), sample-major
    index = torch.arange(rows.shape[0], device=rows.device)
    rows[index, index % n] = x[(index % n)]
    tops[0] = _run(lstms, rows)[-1][:, -1].reshape(-1, n, x.shape[-1]).transpose(0, 1)
    for k, lstm in enumerate(lstms):  # layer k + 1: LSTM k's state at word t put back
        check_cancelled("causal tracing")
        below = corrupted if k == 0 else corrupt_outs[k - 1]  # what LSTM k reads, as corrupted
        for t in range(n):
            out = corrupt_outs[k].clone()
            out[:, t] = clean_outs[k][0, t]
            if t + 1 < n:  # the layer goes on from the clean (h, c) at t
                h, c = (s.expand(-1, out.shape[0], -1).contiguous() for s in clean_states[k][t])
                suffix, _ = lstm(below[:, t + 1:], (h, c))
                out[:, t + 1:] = suffix + below[:, t + 1:] if k > 0 else suffix
            above = _run(lstms, out, k + 1)
            tops[k + 1, t] = (above[-1] if above else out)[:, -1]
    return clean_outs[-1][0, -1], corrupt_outs[-1][:, -1], tops


def _run(lstms: list[Any], x: torch.Tensor, start: int = 0) -> list[torch.Tensor]:
    """The forward LM's layers from LSTM ``start`` on, reading ``x`` (the output of the layer below, or the word
    vectors): each layer's output (with the residual connection from the first layer on)."""
    outs = []
    for k in range(start, len(lstms)):
        h, _ = lstms[k](x)
        x = h + x if k > 0 else h
        outs.append(x)
    return outs


def _stepped(lstms: list[Any], x: torch.Tensor) -> tuple[list[torch.Tensor], list[list[tuple[torch.Tensor, ...]]]]:
    """The clean run word by word: each layer's outputs (1, T, proj) and its recurrent state (h, c) after each word."""
    outs: list[torch.Tensor] = []
    states: list[list[tuple[torch.Tensor, ...]]] = []
    for k, lstm in enumerate(lstms):
        state = None
        steps, kept = [], []
        for t in range(x.shape[1]):
            h, state = lstm(x[:, t : t + 1], state)
            steps.append(h)
            kept.append(tuple(s.clone() for s in state))
        h = torch.cat(steps, 1)
        x = h + x if k > 0 else h
        outs.append(x)
        states.append(kept)
    return outs, states


def _noise_scale(handle: Any) -> float:
    """3 x the standard deviation of the word vectors of the model's most frequent words (Meng et al.: of the
    token embeddings)."""
    return float(handle.frequent_word_vectors().float().std()) * NOISE_TIMES_STD


def _subject_positions(handle: Any, context: list[str], subject: str) -> list[int]:
    """The positions (after <s>) of ``subject``'s words where they first come in the words read."""
    subject = check_text(subject, "subject").strip()  # (empty: said there)
    wanted = [subject[a:b].lower() for a, b in word_spans(subject)]
    said = [w.lower() for w in context]
    for start in range(len(said) - len(wanted) + 1):
        if said[start : start + len(wanted)] == wanted:
            return [start + 1 + i for i in range(len(wanted))]
    raise InputError(f"'{subject}' is not in the text")


def _contrast_words(handle: Any, context: list[str], contrast: str) -> list[str]:
    """The contrast sentence's words, checked against the text's: as many, its sentence marks where the text has
    them, and not the same words."""
    other = handle._context(contrast)
    if len(other) != len(context):
        raise InputError(f"the contrast sentence must have as many words as the text ({len(context)}) to put one "
                         f"run's states in the other's place; it has {len(other)}: {' '.join(other)}")
    if [w in (BOS, EOS) for w in other] != [w in (BOS, EOS) for w in context]:
        raise InputError("the contrast sentence must have its sentences end where the text's do")
    if other == context:
        raise InputError("the contrast sentence is the text itself: change the words whose effect you want to see")
    return other
