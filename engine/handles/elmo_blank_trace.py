"""Causal tracing (Meng et al. 2022) of ELMo's blank, as the masked view fills it (engine.handles.elmo_blank): the
subject's word vectors are noised, then one state of the clean run is put back at a time, and the probability of
the clean answer at the blank is measured. The blank is filled from the forward LM's state at the word before it
and the backward LM's at the word after it, so a word before the blank can bring the answer back only through the
forward LM (its vector, or a forward layer's state there, carried on towards the blank) and a word after it only
through the backward LM: each cell restores the direction that reads that word on its way to the blank, while the
other direction stays as noised. (With ``contrast``, a sentence of as many words with the blank in the same place,
the contrast's run is the corrupted one.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from engine.errors import InputError
from engine.handles.base import check_samples
from engine.handles.elmo_blank import blank_log_probs, blank_words
from engine.handles.elmo_trace import _noise_scale, restored_tops
from engine.handles.lens import MASK_TEXT, MAX_TRACE_TOKENS
from engine.lab_results import CausalTrace
from engine.models.ngram import BOS, EOS


def elmo_blank_trace(handle: Any, text: str, subject: str, samples: int = 3, contrast: str | None = None,
                     seed: int = 0) -> CausalTrace:
    """``handle``'s (ELMo's) blank traced on ``text``: each (layer, word) state of the clean run restored, in the
    direction that reads the word on its way to the blank, in a run whose ``subject`` words are noised."""
    from engine.handles.elmo_trace import _subject_positions

    words, blank = blank_words(handle, text)
    row = blank + 1  # the blank among <s> words </s>
    tokens = [BOS, *(MASK_TEXT if i == blank else w for i, w in enumerate(words)), EOS]
    n = len(tokens)
    if n - 2 > MAX_TRACE_TOKENS:
        raise InputError(f"tracing explains one sentence of at most {MAX_TRACE_TOKENS} words; this text has "
                         f"{n - 2}: shorten it")
    model = handle.model
    with torch.inference_mode():
        x = model.token_encoder(handle._chars(words))[0]  # (T, proj)
    other: list[str] | None = None
    shown = tokens[1:-1]
    if contrast is not None and contrast.strip():
        other_words, other_blank = blank_words(handle, contrast)
        if (other_blank, len(other_words)) != (blank, len(words)):
            raise InputError(f"the contrast sentence must have as many words as the text ({len(words)}) and its "
                             f"[MASK] in the same place, to put one run's states in the other's")
        other = [MASK_TEXT if i == blank else w for i, w in enumerate(other_words)]
        if other == shown:
            raise InputError("the contrast sentence is the text itself: change the words whose effect you want to see")
        subj = [t for t in range(1, n - 1) if tokens[t] != other[t - 1]]
        samples, std = 1, 0.0
        with torch.inference_mode():
            corrupted = model.token_encoder(handle._chars(other_words))  # (1, T, proj)
    else:
        subj = _subject_positions(handle, shown, subject)
        if row in subj:
            raise InputError("the subject is the blank itself: name words of the text, which the blank is filled from")
        samples = check_samples(samples)
        std = _noise_scale(handle)
        draws = torch.randn(samples, len(subj), x.shape[-1], generator=torch.Generator().manual_seed(seed)) * std
        corrupted = x[None].repeat(samples, 1, 1)
        corrupted[:, subj] = corrupted[:, subj] + draws.to(x.device, x.dtype)

    def probs(before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:  # (..., proj) each -> (..., V)
        return blank_log_probs(handle, before, after).exp()

    with torch.inference_mode():
        forward = restored_tops(list(model.forward_lm.lstms), x[:row], corrupted[:, :row])  # <s> … the word before
        backward = restored_tops(list(model.backward_lm.lstms), x[row + 1:].flip(0), corrupted[:, row + 1:].flip(1))
        clean = probs(forward[0][None], backward[0][None])[0]
        target = int(clean.argmax())
        p_corrupt = float(probs(forward[1], backward[1])[:, target].mean())
        layers = forward[2].shape[0]
        restored = np.full((layers, n), p_corrupt, np.float32)  # (the blank itself: neither LM reads it)
        before = probs(forward[2], backward[1][None, None].expand_as(forward[2]))[..., target].mean(-1)
        after = probs(forward[1][None, None].expand_as(backward[2]), backward[2])[..., target].mean(-1)
        restored[:, :row] = before.float().cpu().numpy()
        restored[:, row + 1:] = after.flip(1).float().cpu().numpy()
    name = handle.word_list.__getitem__
    return CausalTrace(text, tuple(tokens), tuple(subj), row, name(target), float(clean[target]), p_corrupt,
                       restored, samples, std, contrast=contrast.strip() if other is not None and contrast else "",
                       contrast_tokens=(BOS, *other, EOS) if other is not None else ())
