"""Which of the text's tokens a Transformer language model's prediction rests on: the lab's attribution
(LIT's salience maps), three ways at once, from one batch of backward passes:

* integrated gradients (Sundararajan et al. 2017): each token's embedding faded in from zero along a
  straight line, the gradient of the explained quantity averaged along it, times the embedding. The
  attributions add up to the change of that quantity from the faded-out text to the text (completeness);
  how far they miss it is reported, and the line is walked in finer steps until they come within
  ``GAP_ALLOWED``.
* gradient × input (Shrikumar et al. 2016): the gradient at the text, times the embedding, summed.
* the gradient's norm (Simonyan et al. 2013; LIT's "Grad L2 norm"): how much the quantity moves when the
  token's embedding does, in any direction: a size, not a sign.

What is explained: the log-probability of the model's prediction at the [MASK] (masked LMs) or after the
text (left-to-right LMs), or of a word the user names; with a ``foil`` word, the log-probability of the
target less the foil's ("why 'are' rather than 'is'": Yin & Neubig 2022, contrastive explanations).
The special tokens and the [MASK] keep their embeddings: they are not attributed. Positions and segments
are added inside the model after the token embeddings, so "faded out" keeps where each token stands.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import torch

from engine.cancel import check_cancelled
from engine.data.text import word_spans
from engine.errors import InputError
from engine.handles.base import check_text
from engine.handles.lens import _inputs, _model_text
from engine.lab_results import Attribution

MAX_ATTRIBUTION_TOKENS = 128  # a paragraph; beyond it the first tokens are explained, with a notice
STEPS = (32, 128)  # integrated gradients' steps along the line: the first, and the finer walk where it misses
GAP_ALLOWED = 0.05  # the share of the explained change the attributions may miss before the finer walk
ROW_TOKENS = 2048  # interpolated copies x tokens in one backward pass


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
    top prediction, or ``target``; against ``foil`` when given. Integrated gradients take ``STEPS[0]`` steps, then
    ``STEPS[1]`` where those miss the change by more than ``GAP_ALLOWED``."""
    adapter = handle.adapter
    ids, segments, special, notice = _inputs(handle, text, MAX_ATTRIBUTION_TOKENS)
    if adapter.objective == "masked":
        if adapter.mask_id not in ids:
            raise InputError("the text has no [MASK] (or it lies beyond the tokens explained): attribution explains "
                             "the prediction at a [MASK]")
        position = ids.index(adapter.mask_id)
    else:
        position = len(ids) - 1
    fixed = [special[t] or (adapter.objective == "masked" and ids[t] == adapter.mask_id) for t in range(len(ids))]
    if all(fixed):
        raise InputError("the text has no words besides the [MASK] to attribute the prediction to")
    with torch.inference_mode():
        out = handle._forward(ids, segments, logits=True, positions=[position])
        assert out.logits is not None
        probs = out.logits[0, 0].float().softmax(-1)
    target_id = int(probs.argmax()) if _unnamed(target, "target") else one_token(handle, str(target), "target")
    foil_id = None if _unnamed(foil, "foil") else one_token(handle, str(foil), "foil")
    if foil_id == target_id:
        raise InputError("the foil is the target itself: name another word to explain it against")
    for n in STEPS:
        result = _attribute(handle, ids, segments, fixed, position, target_id, foil_id, n)
        if result["relative_gap"] <= GAP_ALLOWED:
            break
    keep = ~np.array(fixed)
    words, word_of = _words(handle, text, len(ids), special)
    return Attribution(
        text, tuple(handle._token_text(i) for i in ids), tuple(fixed), position,
        handle._token_text(target_id), float(probs[target_id]),
        handle._token_text(foil_id) if foil_id is not None else "",
        float(probs[foil_id]) if foil_id is not None else float("nan"),
        {name: np.where(keep, values, 0.0).astype(np.float32) for name, values in result["scores"].items()},
        result["f_input"], result["f_baseline"], n, notice, words, word_of)


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


def _unnamed(word: object, what: str) -> bool:
    """Whether a target or foil is left to the model (None, or blank); anything but text is refused."""
    if word is None:
        return True
    if not isinstance(word, str):
        raise InputError(f"the {what} must be a word, not {type(word).__name__}")
    return not word.strip()


def _attribute(handle: Any, ids: list[int], segments: list[int], fixed: list[bool], position: int, target: int,
               foil: int | None, steps: int) -> dict[str, Any]:
    """One walk of ``steps`` midpoints from the faded-out text to the text, with its two ends (rows 0 and
    the last: the quantity explained there, and the gradient at the text)."""
    adapter = handle.adapter
    embedding = adapter.input_embedding()  # (no blocks needed: ALBERT's shared layers are explained too)
    alphas = torch.tensor([0.0, *[(k + 0.5) / steps for k in range(steps)], 1.0])
    n = len(ids)
    device = next(adapter.body.parameters()).device
    keep = torch.tensor(fixed, device=device)[None, :, None]
    plan: dict[str, Any] = {}
    owner = threading.get_ident()  # other queries run the same model from their own threads: left alone

    def fade(module: Any, inputs: Any, output: torch.Tensor) -> torch.Tensor:
        if threading.get_ident() != owner or "alphas" not in plan:
            return output
        x = output.detach()
        scaled = torch.where(keep, x, x * plan["alphas"].to(x.device, x.dtype)[:, None, None])
        scaled.requires_grad_(True)
        plan["scaled"], plan["x"] = scaled, x[0]
        return scaled

    rows = max(1, ROW_TOKENS // n)
    values = np.zeros(len(alphas), np.float64)
    grads: list[torch.Tensor] = []
    hook = embedding.register_forward_hook(fade)
    try:
        for a in range(0, len(alphas), rows):
            check_cancelled("attribution")  # a newer question supersedes this one
            chunk = alphas[a : a + rows]
            plan.clear()
            plan["alphas"] = chunk
            ids_t = torch.tensor([ids] * len(chunk), device=device)
            seg_t = torch.tensor([segments] * len(chunk), device=device)
            with torch.enable_grad():
                out = adapter.forward(ids_t, seg_t, logits=True, positions=[position])
                assert out.logits is not None
                logp = out.logits[:, 0].float().log_softmax(-1)
                f = logp[:, target] - (logp[:, foil] if foil is not None else 0.0)
                (grad,) = torch.autograd.grad(f.sum(), [plan["scaled"]])
            values[a : a + len(chunk)] = f.detach().double().cpu().numpy()
            grads.append(grad.float())
        x = plan["x"].float()
    finally:
        hook.remove()
        plan.clear()
    g = torch.cat(grads)  # (steps + 2, T, d)
    integrated = (x * g[1:-1].mean(0)).sum(-1).double().cpu().numpy()
    at_text = g[-1]
    scores = {"integrated gradients": integrated,
              "gradient × input": (x * at_text).sum(-1).double().cpu().numpy(),
              "gradient norm": at_text.norm(dim=-1).double().cpu().numpy()}
    f_input, f_baseline = float(values[-1]), float(values[0])
    change = f_input - f_baseline
    gap = float(integrated[~np.array(fixed)].sum()) - change
    return {"scores": scores, "f_input": f_input, "f_baseline": f_baseline,
            "relative_gap": abs(gap) / max(abs(change), 1e-6)}
