"""The lab's lens grid for ELMo's forward LM (the logit lens, nostalgebraist 2020, read off an LSTM): the word
vectors of its character CNN (layer 0) and the states of each LSTM layer at every word, read through the adaptive
softmax that only the top layer was trained for. The dimensions agree (each layer is projected down to the
softmax's size, the second adds the first's output back in), so every layer can be read; what the lower layers
say is what that head makes of them. The grid is of the next word, as a GPT's is."""

from __future__ import annotations

from typing import Any

import torch

from engine.handles.base import check_k
from engine.handles.lens import MASK_TEXT, MAX_GRID_TOKENS, grid_of, read_layers
from engine.lab_results import LensGrid
from engine.models.ngram import BOS, EOS, UNK
from engine.results import LogitLens, TokenCandidates


def elmo_lens_grid(handle: Any, text: str, k: int = 5) -> LensGrid:
    """Every layer's next word at every word of ``text`` (its first ``MAX_GRID_TOKENS`` - 1 words after <s>)."""
    k = check_k(k, 20)
    context = handle._context(text)
    notice = ""
    if len(context) >= MAX_GRID_TOKENS:
        notice = f"the text is longer than {MAX_GRID_TOKENS - 1} words; the first {MAX_GRID_TOKENS - 1} are shown"
        context = context[: MAX_GRID_TOKENS - 1]
    find = handle.word_list.find
    unknown = find(UNK)
    ids = [find(BOS), *(i if (i := find(w)) is not None else unknown for w in context)]
    words = [BOS, *context]
    special = [w in (BOS, EOS) for w in words]
    n = len(words)
    target_ids = [int(ids[t + 1]) if t + 1 < n and not special[t + 1] else -1 for t in range(n)]  # (the next word)
    model = handle.model
    with torch.inference_mode():
        x = handle.forward_inputs(context)
        hidden = [h[0] for h in (x, *model.forward_lm(x))]  # (layers + 1) x (T, proj)
        stats = read_layers(hidden, target_ids, k,
                            lambda chunk: torch.stack([model.softmax.log_prob(h.float()) for h in chunk]))
    # (the tokens are the words as read: an unknown one keeps its spelling, as ELMo reads its characters)
    return grid_of(handle.word_list.__getitem__, text, "logit", "causal", words, special, target_ids, stats, notice)


def elmo_logit_lens(handle: Any, text: str, k: int, most_words: int) -> LogitLens:
    """Every layer's next word after the text's last word (its last ``most_words`` words read, as the Next token
    view reads them): the grid's last column, with up to ``MAX_K`` words each."""
    k = check_k(k)
    context = handle._context(text)[-most_words:]
    model = handle.model
    with torch.inference_mode():
        x = handle.forward_inputs(context)
        probs = torch.stack([model.softmax.log_prob(h[0, -1:].float())[0] for h in (x, *model.forward_lm(x))]).exp()
    top = probs.topk(min(k, probs.shape[-1]), dim=-1)
    values, indices = top.values.cpu().numpy(), top.indices.cpu().numpy()
    name = handle.word_list.__getitem__
    layers = tuple(TokenCandidates(text, tuple(name(int(i)) for i in idx), tuple(float(v) for v in val))
                   for idx, val in zip(indices, values, strict=True))
    return LogitLens(text, len(context), layers)


def elmo_blank_grid(handle: Any, text: str, k: int = 5) -> LensGrid:
    """Every layer's word at every word of a text with a [MASK] (the masked view's lab): at each word, the forward
    LM's layer at the word before it times the backward LM's at the word after it, over how common the word is (as
    the blank is filled: engine.handles.elmo_blank) — what that layer would put there from both sides, neither LM
    having read the word itself. The blank's column, top row, is the masked view's answer. Up to
    ``MAX_GRID_TOKENS`` words around the blank."""
    from engine.handles.elmo_blank import blank_log_probs, blank_words

    k = check_k(k, 20)
    words, blank = blank_words(handle, text)
    notice = ("ELMo's two LMs: at each word, the forward LM's layer at the word before it times the backward LM's "
              "at the word after it, over how common the word is")
    if len(words) > MAX_GRID_TOKENS:
        start = max(0, min(blank - MAX_GRID_TOKENS // 2, len(words) - MAX_GRID_TOKENS))
        words, blank = words[start:start + MAX_GRID_TOKENS], blank - start
        notice += f"; the {MAX_GRID_TOKENS} words around the blank are shown"
    find = handle.word_list.find
    shown = [MASK_TEXT if i == blank else w for i, w in enumerate(words)]
    special = [w in (BOS, EOS) for w in shown]  # (the marks between sentences)
    target_ids = [-1 if special[i] or i == blank or (j := find(w)) is None or w == UNK else j
                  for i, w in enumerate(words)]
    model = handle.model
    n, d = len(words), model.cfg.proj

    def head(chunk: list[torch.Tensor]) -> torch.Tensor:  # each layer's (c, 2d): the state before, the state after
        return torch.stack([blank_log_probs(handle, h[:, :d], h[:, d:]) for h in chunk])

    with torch.inference_mode():
        x, fwd, bwd = model.layers(handle._chars(words))  # (1, n + 2, d) each: <s> words </s>
        hidden = [torch.cat([f[0, :n], b[0, 2:n + 2]], -1) for f, b in zip((x, *fwd), (x, *bwd), strict=True)]
        stats = read_layers(hidden, target_ids, k, head)
    return grid_of(handle.word_list.__getitem__, text, "logit", "masked", shown, special, target_ids, stats, notice)
