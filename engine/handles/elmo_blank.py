"""ELMo fills a blank with its two language models at once: the forward LM reads the words before the [MASK] and
guesses it, the backward LM reads the words after it, right to left, and guesses it too; the candidates are the
two guesses multiplied, divided by how common each word is in training (the word's prior is in both guesses:
Bayes' rule, were the two sides independent given the word), and made to add up to one again. Dividing the prior
out was chosen by a rule declared before its results, on development blanks of the held-out corpus (bench/studies/
RESULTS.md, "ELMo's blank"): top-10 0.513 → 0.544 there. Neither direction sees both sides
of the blank — the "shallow" bidirectionality BERT's authors set against their masked LM (Devlin et al. 2019,
section 1; Peters et al. 2018 trained the two LMs apart) — so where a word needs both sides at once, ELMo's
answer shows it.

Only the states just before and just after the blank are read: the forward LM's state at the word before it and
the backward LM's at the word after it, neither of which has read the blank, so what stands in its place changes
nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from engine.errors import InputError
from engine.handles.base import check_k, check_text
from engine.handles.continuation import context_words
from engine.handles.lens import MASK_TEXT, no_mask
from engine.models.ngram import BOS, EOS, UNK
from engine.results import MaskCandidates

if TYPE_CHECKING:
    from engine.handles.word_attribution import WordInput

STAND_IN = "elmoblankstandin"  # the blank while the text is split into words (one word whatever the splitter)
SIDE_WORDS = 200  # the words read on each side of the blank (as the Next token view reads the last 200)
ATTRIBUTION_SIDE = 32  # the words weighed on each side of the blank (the next word's: its last 64; the fuzz bench
# found 53 s of one thread for a blank with 200 hostile words each side)
SIDE_SHOWN = 3  # each LM's own likeliest words, given beside the answer
SIDES = ("both", "before", "after")  # whose guesses are multiplied: both LMs', or one alone (what each side adds)


def blank_words(handle: Any, text: str, side_words: int = SIDE_WORDS) -> tuple[list[str], int]:
    """The text's words as the model reads them (sentences after the first begun with </s> <s>), at most
    ``side_words`` on each side of the blank, and where the blank is among them."""
    text = check_text(text)
    count = text.count(MASK_TEXT)
    if count == 0:
        raise no_mask(text)
    if count > 1:
        raise InputError(f"{handle.name} (ELMo) fills one [MASK] at a time: its forward LM would read the other "
                         "[MASK] as a word. Leave one")
    stand_in = STAND_IN
    while stand_in in text.lower():  # (a text that has the stand-in itself: its blank is still the [MASK])
        stand_in += "x"
    words = context_words(text.replace(MASK_TEXT, f" {stand_in} "), handle.lowercase)  # (lowercase: either way)
    blank = words.index(stand_in)
    start = max(0, blank - side_words)
    words = words[start:blank + side_words + 1]
    return words, blank - start


def log_prior(handle: Any) -> torch.Tensor:
    """(V,): log of each word's share of the training corpus (its vocabulary count plus one), kept on the handle
    (a grid asks for it once a layer)."""
    cached = getattr(handle, "_blank_log_prior", None)  # (a handle's model stays on the device it was loaded on)
    if cached is None:
        counts = torch.as_tensor(np.asarray(handle.counts, np.float64) + 1.0)
        cached = handle._blank_log_prior = (counts / counts.sum()).log().float().to(handle.device)
    return cached


def without_markers(handle: Any, log_probs: torch.Tensor) -> torch.Tensor:
    """(..., V) log-probabilities made to add up to one again without <s>, </s> and <unk>: no word to fill in."""
    out = log_probs.clone()
    out[..., [i for i in (handle.word_list.find(m) for m in (BOS, EOS, UNK)) if i is not None]] = float("-inf")
    return out.log_softmax(-1)


def blank_scores(handle: Any, forward: torch.Tensor, backward: torch.Tensor, prior: bool = True) -> torch.Tensor:
    """The blank's log-distribution (..., V) from the forward LM's guess and the backward LM's (log-distributions
    (..., V)): their product, over the word's prior (``prior``), without the markers — the one rule the masked view,
    the lab's grid, its attribution and its trace all read."""
    scores = forward + backward
    return without_markers(handle, scores - log_prior(handle) if prior else scores)


def blank_log_probs(handle: Any, before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
    """``blank_scores`` of the forward LM's top states before a blank and the backward LM's after it ((..., proj)
    each), read through the shared softmax: (..., V)."""
    softmax, d = handle.model.softmax, before.shape[-1]
    forward = softmax.log_prob(before.reshape(-1, d).float())
    backward = softmax.log_prob(after.reshape(-1, d).float())
    return blank_scores(handle, forward, backward).reshape(*before.shape[:-1], -1)


def elmo_fill_mask(handle: Any, text: str, k: int = 10, sides: str = "both", prior: bool = True
                   ) -> list[MaskCandidates]:
    """The blank's ``k`` likeliest words: p(w) ∝ p_forward(w | the words before) · p_backward(w | the words after)
    / p(w), over the vocabulary (its markers and <unk> left out); ``prior`` False: the plain product (the study's
    other way); ``sides`` "before" or "after": one LM's guess alone.
    ``position``: the blank's index among the text's words."""
    k = check_k(k)
    if sides not in SIDES:
        raise InputError(f"no side '{sides}' ({', '.join(SIDES)})")
    words, blank = blank_words(handle, text)
    chars = handle._chars(words)  # <s> words </s>: the blank is at blank + 1
    model = handle.model
    with torch.inference_mode():
        _, fwd, bwd = model.layers(chars)
        states = torch.stack([fwd[-1][0, blank], bwd[-1][0, blank + 2]]).float()  # before it, after it
        forward, backward = model.softmax.log_prob(states)  # (V,) each
        alone = {"before": without_markers(handle, forward), "after": without_markers(handle, backward)}
        scores = blank_scores(handle, forward, backward, prior) if sides == "both" else alone[sides]
        probs = scores.exp()
        top = probs.topk(min(k, probs.shape[-1]))
        shown = [(side, guess.topk(min(SIDE_SHOWN, guess.shape[-1])).indices.cpu())  # each LM's own guess, said
                 for side, guess in alone.items()]  # beside the answer
    name = handle.word_list.__getitem__
    return [MaskCandidates(blank, tuple(name(int(i)) for i in top.indices.cpu()),
                           tuple(float(v) for v in top.values.cpu()),
                           tuple((side, tuple(name(int(i)) for i in ids)) for side, ids in shown))]



def blank_input(handle: Any, text: str) -> WordInput:
    """What ELMo reads for its blank, for the lab's attribution (engine.handles.word_attribution): <s>, the words
    and </s> as character-CNN vectors, the blank among them kept as it is (neither LM reads it); the forward LM reads
    the rows before the blank, the backward LM those after it, and the blank's log-distribution is the app's (both
    guesses, the prior divided out). Each word fades in from the model's average word, as in the next word's."""
    from engine.handles.word_attribution import ROW_TOKENS, WordInput, without_cudnn

    words, blank = blank_words(handle, text, ATTRIBUTION_SIDE + 1)
    cut = blank > ATTRIBUTION_SIDE or len(words) - blank - 1 > ATTRIBUTION_SIDE  # (a word more read: more there)
    words, blank = words[max(0, blank - ATTRIBUTION_SIDE):blank + ATTRIBUTION_SIDE + 1], min(blank, ATTRIBUTION_SIDE)
    notice = f"the {ATTRIBUTION_SIDE} words on each side of the blank are weighed, not the text's others" if cut else ""
    model = handle.model
    with torch.no_grad():
        x = model.token_encoder(handle._chars(words))[0]  # (T, proj): <s> words </s>
    row = blank + 1  # the blank's row (<s> is row 0)

    def log_probs(scaled: torch.Tensor) -> torch.Tensor:
        with without_cudnn(scaled):  # (cuDNN's LSTM has no backward pass in evaluation mode)
            before = model.forward_lm(scaled[:, :row])[-1][:, -1]  # has read <s> … the word before the blank
            after = model.backward_lm(scaled[:, row + 1:].flip(1))[-1][:, -1]  # </s> … the word after it
        return blank_log_probs(handle, before, after)

    tokens = [BOS, *(MASK_TEXT if i == blank else w for i, w in enumerate(words)), EOS]
    marks = [w in (BOS, EOS) for w in tokens]
    fixed = [m or i == row for i, m in enumerate(marks)]
    return WordInput(tokens, fixed, x, list(range(len(tokens))), log_probs, notice, handle.frequent_word_vectors().mean(0),
                     ROW_TOKENS * 4, row, marks)
