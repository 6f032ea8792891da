"""Which of the text's tokens a Transformer language model's prediction rests on: the lab's attribution
(LIT's salience maps), three ways at once from one batch of backward passes, the token embeddings faded in
from zero (engine.handles.gradient_walk: integrated gradients, gradient × input, the gradient's norm).

What is explained: the log-probability of the model's prediction at the [MASK] (masked LMs) or after the
text (left-to-right LMs), or of a word the user names; with a ``foil`` word, the log-probability of the
target less the foil's ("why 'are' rather than 'is'": Yin & Neubig 2022, contrastive explanations).
The special tokens and the [MASK] keep their embeddings: they are not attributed. Positions and segments
are added inside the model after the token embeddings, so "faded out" keeps where each token stands.
"""

from __future__ import annotations

import threading
from typing import Any

import torch

from engine.data.text import word_spans
from engine.errors import InputError
from engine.handles.base import check_text
from engine.handles.gradient_walk import Quantity, unnamed, walk_until_close, zero_fixed
from engine.handles.lens import _inputs, _model_text, prediction_position
from engine.lab_results import Attribution

MAX_ATTRIBUTION_TOKENS = 128  # a paragraph; beyond it the first tokens are explained, with a notice


def one_token(handle: Any, word: str, what: str) -> int:
    """The model's one token for ``word`` (a byte-level or metaspace vocabulary: the word after a space
    first, as a continuation would write it); refused, with the tokens it would take, when it is several."""
    word = check_text(word, what).strip()
    adapter = handle.adapter
    spaced = adapter.byte_level or getattr(adapter, "metaspace", False)
    unknown_name = getattr(getattr(adapter.tokenizer, "model", None), "unk_token", None)
    unknown = adapter.tokenizer.token_to_id(unknown_name) if isinstance(unknown_name, str) else None
    tried: list[int] = []
    for form in ([f" {word}", word] if spaced else [word]):
        tried = adapter.tokenizer.encode(form, add_special_tokens=False).ids
        if len(tried) == 1 and tried[0] != unknown:
            return int(tried[0])
    pieces = " ".join(handle._token_text(i).strip() or "␣" for i in tried) or "nothing"
    raise InputError(f"the {what} '{word}' is not one token for {handle.name} ({pieces}): name a word of its "
                     f"vocabulary, or the first piece")


def token_attribution(handle: Any, text: str, target: str | None = None, foil: str | None = None) -> Attribution:
    """Each of ``text``'s tokens' share in ``handle``'s prediction at the [MASK] (or after the text): the model's
    top prediction, or ``target``; against ``foil`` when given (engine.handles.gradient_walk: its steps)."""
    adapter = handle.adapter
    ids, segments, special, notice = _inputs(handle, text, MAX_ATTRIBUTION_TOKENS)
    position = prediction_position(handle, ids, "the text has no [MASK] (or it lies beyond the tokens explained): "
                                   "attribution explains the prediction at a [MASK]")
    fixed = [special[t] or (adapter.objective == "masked" and ids[t] == adapter.mask_id) for t in range(len(ids))]
    if all(fixed):
        raise InputError("the text has no words besides the [MASK] to attribute the prediction to")
    with torch.inference_mode():
        out = handle._forward(ids, segments, logits=True, positions=[position])
        assert out.logits is not None
        probs = out.logits[0, 0].float().softmax(-1)
    target_id = int(probs.argmax()) if unnamed(target, "target") else one_token(handle, str(target), "target")
    foil_id = None if unnamed(foil, "foil") else one_token(handle, str(foil), "foil")
    if foil_id == target_id:
        raise InputError("the foil is the target itself: name another word to explain it against")
    x, quantity, hook = _quantity_and_input(handle, ids, segments, position, target_id, foil_id)
    try:
        result = walk_until_close(x, fixed, quantity)
    finally:
        hook.remove()
    words, word_of = _words(handle, text, len(ids), special)
    return Attribution(
        text, tuple(handle._token_text(i) for i in ids), tuple(fixed), position,
        handle._token_text(target_id), float(probs[target_id]),
        handle._token_text(foil_id) if foil_id is not None else "",
        float(probs[foil_id]) if foil_id is not None else float("nan"),
        zero_fixed(result, fixed), result.f_input, result.f_baseline, result.steps, notice, words, word_of)


def _words(handle: Any, text: str, n: int, special: list[bool]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The words of the text as the model read it, and each token's word (-1: a special token): a token
    belongs to the word its first character falls in; the [MASK] is one word."""
    model_text = _model_text(handle, text)
    _, _, offsets, _, _ = handle._encode(model_text)
    mask = handle.adapter.tokenizer.id_to_token(handle.adapter.mask_id) if handle.adapter.objective == "masked" else None
    spans: list[tuple[int, int]] = []
    for start, end in word_spans(model_text):  # the mask token ("[MASK]", "<mask>") split by punctuation: joined
        if spans and start < spans[-1][1]:
            continue  # (a piece of the mask token, taken whole already)
        if mask and model_text.startswith(mask, start):
            end = start + len(mask)
        spans.append((start, end))
    word_of: list[int] = []
    for t in range(n):
        lo, hi = offsets[t] if t < len(offsets) else (0, 0)
        if special[t]:
            word_of.append(-1)
            continue
        while lo < hi and model_text[lo].isspace():  # a byte-level token's leading space ("Ġcapital")
            lo += 1
        if lo >= hi:  # a space alone (a lone "Ġ"): the word it comes before, else the last one
            word_of.append(next((w for w, (ws, _) in enumerate(spans) if ws >= hi), len(spans) - 1))
            continue
        word_of.append(next((w for w, (ws, we) in enumerate(spans) if ws <= lo < we), -1))
    used = sorted({w for w in word_of if w >= 0})
    renumber = {w: i for i, w in enumerate(used)}  # (words beyond the tokens read are left out)
    words = tuple("[MASK]" if mask and model_text[spans[w][0]:spans[w][1]] == mask else
                  model_text[spans[w][0]:spans[w][1]] for w in used)
    return words, tuple(renumber.get(w, -1) for w in word_of)


def _quantity_and_input(handle: Any, ids: list[int], segments: list[int], position: int, target: int,
                        foil: int | None) -> tuple[torch.Tensor, Quantity, Any]:
    """The token embeddings of the text (T, d), the explained quantity of a batch of them put in the model's
    place (a forward hook on the token embedding: no blocks needed, so ALBERT's shared layers are explained too),
    and the hook's handle, to remove once the walk is done."""
    adapter = handle.adapter
    embedding = adapter.input_embedding()
    device = next(adapter.body.parameters()).device
    owner = threading.get_ident()  # other queries run the same model from their own threads: left alone
    plan: dict[str, torch.Tensor] = {}

    def put(module: Any, inputs: Any, output: torch.Tensor) -> torch.Tensor:
        if threading.get_ident() != owner:
            return output
        if "x" not in plan:
            plan["x"] = output.detach()[0].clone()
            return output
        return plan["scaled"].to(output.dtype)

    hook = embedding.register_forward_hook(put)
    ids_t, seg_t = torch.tensor([ids], device=device), torch.tensor([segments], device=device)
    try:
        with torch.no_grad():
            adapter.forward(ids_t, seg_t, logits=True, positions=[position])
    except BaseException:
        hook.remove()
        raise

    def quantity(scaled: torch.Tensor) -> torch.Tensor:
        plan["scaled"] = scaled
        n = scaled.shape[0]
        out = adapter.forward(ids_t.expand(n, -1), seg_t.expand(n, -1), logits=True, positions=[position])
        assert out.logits is not None
        logp = out.logits[:, 0].float().log_softmax(-1)
        return logp[:, target] - (logp[:, foil] if foil is not None else 0.0)

    return plan["x"], quantity, hook
