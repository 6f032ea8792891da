"""Which attention heads a prediction needs (the lab's fourth question): each head of each layer knocked out in
turn, its output at every token replaced by its mean over the text's tokens ("mean ablation", as
TransformerLens's head-ablation demos and Wang et al. 2022's path patching use a mean rather than zeros, which
a model never sees), and the prediction at the [MASK] (or after the text) measured again: log P(target),
or log P(target) − log P(foil) with a foil. ``effect[l, h]`` is what removing head h of layer l costs that
quantity (positive: the head pushed the prediction up). A head is its slice of the attention's output
projection's input (the heads' outputs side by side, before the projection mixes them), found per
architecture by name; one batch of rows, a head knocked out per row. Where one head matters: the same knock-out at
one token at a time (``head_positions``; activation patching by position, as TransformerLens's
``get_act_patch_attn_head_out_by_pos``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import torch

from engine.cancel import check_cancelled
from engine.errors import InputError, Unsupported
from engine.handles.attribution import one_token
from engine.handles.direct_effects import block_parts, mlp_output, read_direct, read_neurons
from engine.handles.gradient_walk import unnamed
from engine.handles.lens import TRACE_ROWS, _contrast_ids, _inputs, prediction_position
from engine.lab_results import DirectEffects, HeadAblation, HeadPositions, MlpNeurons

MAX_ABLATION_TOKENS = 128  # a paragraph: layers × heads rows of it run
MEAN_OVER = ("text", "corpus")  # what a knocked-out head's output is replaced by: its mean over the text's tokens,
# or over held-out sentences of the default corpus (engine.handles.head_means); or, given a contrast sentence of as
# many tokens, its output there, token by token (activation patching: "contrast")
# where a block keeps its attention's output projection (its input: the heads' outputs side by side): ours,
# BERT-likes, GPT-2, Llama-likes and BART-likes, GPT-NeoX, GPT-J and GPT-Neo, DistilBERT, Phi, Falcon and BLOOM,
# ModernBERT, MPNet
OUT_PROJECTIONS = ("attn_out", "attention.output.dense", "attn.c_proj", "self_attn.o_proj", "self_attn.out_proj",
                   "attention.dense", "attn.out_proj", "attn.attention.out_proj", "attention.out_lin",
                   "self_attn.dense", "self_attention.dense", "attention.o_proj", "attn.o_proj", "attn.Wo",
                   "attention.attn.o")


def out_projections(handle: Any) -> list[Any]:
    """Each block's attention output projection; refused, with the reason, where a block has none by a known
    name (a head is then not a slice of anything this code can reach)."""
    return block_parts(handle, OUT_PROJECTIONS, "attention's output projection",
                       "its heads cannot be knocked out one by one")


def head_count(handle: Any) -> int:
    heads = handle.info.get("heads")
    if not isinstance(heads, int) or heads < 1:
        raise Unsupported(f"{handle.name} does not say how many attention heads a layer has")
    return heads


class _Question(NamedTuple):
    ids: list[int]
    segments: list[int]
    position: int
    target: int | None  # None: the model's top word
    foil: int | None
    notice: str


def _question(handle: Any, text: str, target: str | None, foil: str | None) -> _Question:
    """The text's tokens, where the prediction is read, and the named target and foil (refused: one the model spells
    in pieces, or a foil that is the target)."""
    ids, segments, _special, notice = _inputs(handle, text, MAX_ABLATION_TOKENS)
    position = prediction_position(handle, ids, "the text has no [MASK] (or it lies beyond the tokens read): "
                                   "knocking out heads explains the prediction at a [MASK]")
    named = None if unnamed(target, "target") else one_token(handle, str(target), "target")
    foil_id = None if unnamed(foil, "foil") else one_token(handle, str(foil), "foil")
    if foil_id is not None and foil_id == named:
        raise InputError("the foil is the target itself: name another word to explain it against")
    return _Question(ids, segments, position, named, foil_id, notice)


def _explained(clean: torch.Tensor, logp: torch.Tensor, question: _Question) -> tuple[int, float, np.ndarray, np.ndarray]:
    """(target id, the explained quantity with every head in place, each row's cost of it, each row's log P(target))."""
    target_id = int(clean.argmax()) if question.target is None else question.target
    if question.foil == target_id:
        raise InputError("the foil is the target itself: name another word to explain it against")
    ablated = logp[:, target_id].cpu().double().numpy()
    foil = question.foil
    value = float(clean[target_id]) - (float(clean[foil]) if foil is not None else 0.0)
    per_row = ablated - (logp[:, foil].cpu().double().numpy() if foil is not None else 0.0)
    return target_id, value, value - per_row, ablated


def _means(handle: Any, mean_over: str, q: _Question | None = None,
           contrast: str | None = None) -> list[torch.Tensor] | None:
    """The knocked-out heads' replacements: None for the text's own means (the clean pass takes them); with a
    ``contrast`` sentence, each layer's (tokens, width) outputs on it."""
    if contrast is not None and contrast.strip() and q is not None:
        return contrast_outputs(handle, _contrast_ids(handle, q.ids, q.segments, contrast, MAX_ABLATION_TOKENS + 1),
                                q.segments)
    if mean_over not in MEAN_OVER:
        raise InputError(f"a head is knocked out to its mean over {' or '.join(MEAN_OVER)}, not {mean_over!r}")
    if mean_over == "text":
        return None
    from engine.handles.head_means import corpus_head_means

    return corpus_head_means(handle, out_projections(handle), "default", MAX_ABLATION_TOKENS)


def contrast_outputs(handle: Any, ids: list[int], segments: list[int]) -> list[torch.Tensor]:
    """Per layer, the heads' outputs side by side at each token of a contrast sentence (tokens, width), as each
    block's output projection reads them: what patching puts in a head's place."""
    projections = out_projections(handle)
    caught: dict[int, torch.Tensor] = {}
    owner = threading.get_ident()

    def hook_for(index: int) -> Any:
        def hook(module: Any, inputs: Any) -> None:
            if threading.get_ident() == owner:
                caught[index] = inputs[0][0].detach().clone()
        return hook

    hooks = [p.register_forward_pre_hook(hook_for(i)) for i, p in enumerate(projections)]
    try:
        with torch.inference_mode():
            handle._forward(ids, segments, logits=False)
    finally:
        for h in hooks:
            h.remove()
    if len(caught) != len(projections):
        raise Unsupported(f"{handle.name}: its attention's output projection was not run once a layer")
    return [caught[i] for i in range(len(projections))]


def _over(mean_over: str, contrast: str | None) -> tuple[str, str]:
    """(what the answer says its heads were replaced by, the contrast sentence or "")."""
    return ("contrast", contrast.strip()) if contrast is not None and contrast.strip() else (mean_over, "")


def head_ablation(handle: Any, text: str, target: str | None = None, foil: str | None = None,
                  mean_over: str = "text", contrast: str | None = None) -> HeadAblation:
    """Every head of every layer knocked out in turn (its output replaced by its mean over the text's tokens, or
    over held-out sentences of the corpus; or, with ``contrast``, a sentence of as many tokens, by its output there,
    token by token: activation patching) and what that costs the prediction at the [MASK] (or after the text):
    the model's top word, or ``target``; against ``foil`` when given."""
    q = _question(handle, text, target, foil)
    layers, heads = len(out_projections(handle)), head_count(handle)
    cells = [(layer, h) for layer in range(layers) for h in range(heads)]
    clean, logp = knocked_out(handle, q.ids, q.segments, q.position, [[cell] for cell in cells],
                              _means(handle, mean_over, q, contrast))
    target_id, value, cost, ablated = _explained(clean, logp, q)
    direct, refusal = None, ""
    try:
        direct = _direct(handle, q, target_id)
    except Unsupported as e:  # a post-LN network: the knock-outs alone
        refusal = str(e)
    return HeadAblation(
        text, tuple(handle._token_text(i) for i in q.ids), q.position, handle._token_text(target_id),
        float(np.exp(float(clean[target_id]))), handle._token_text(q.foil) if q.foil is not None else "",
        float(np.exp(float(clean[q.foil]))) if q.foil is not None else float("nan"), value,
        cost.reshape(layers, heads).astype(np.float32), np.exp(ablated).reshape(layers, heads).astype(np.float32),
        q.notice, *_over(mean_over, contrast), direct, refusal)


def direct_effects(handle: Any, text: str, target: str | None = None, foil: str | None = None) -> DirectEffects:
    """Each head's direct effect on the prediction at the [MASK] (or after the text), in logits of the model's top
    word, or ``target``'s; against ``foil`` when given (engine.handles.direct_effects). Unsupported for a post-LN
    network (BERT), whose heads' outputs are rescaled by every norm above them."""
    handle.adapter.direct_readout(handle.name)  # (a post-LN network refuses first, whatever the text)
    return _direct(handle, _question(handle, text, target, foil), None)


def mlp_neurons(handle: Any, text: str, layer: int, target: str | None = None, foil: str | None = None) -> MlpNeurons:
    """What layer ``layer``'s MLP (from 0) writes straight into the logits, neuron by neuron, at the [MASK] (or after
    the text): pre-LN networks only, as ``direct_effects``."""
    handle.adapter.direct_readout(handle.name)  # (a post-LN network refuses first)
    q = _question(handle, text, target, foil)
    effect, activation, bias, top = read_neurons(handle, mlp_output(handle, layer), q.ids, q.segments, q.position,
                                                 q.target, q.foil)
    if q.foil == top:
        raise InputError("the foil is the target itself: name another word to explain it against")
    return MlpNeurons(int(layer), handle._token_text(top), handle._token_text(q.foil) if q.foil is not None else "",
                      effect.astype(np.float32), activation, bias)


def _direct(handle: Any, q: _Question, target_id: int | None) -> DirectEffects:
    got = read_direct(handle, out_projections(handle), head_count(handle), q.ids, q.segments, q.position,
                      q.target if target_id is None else target_id, q.foil)
    if q.foil == got.target:
        raise InputError("the foil is the target itself: name another word to explain it against")
    return DirectEffects(handle._token_text(got.target), handle._token_text(q.foil) if q.foil is not None else "",
                         got.value, got.heads.astype(np.float32), got.mlps.astype(np.float32), got.embedding,
                         got.biases)


def head_positions(handle: Any, text: str, layer: int, head: int, target: str | None = None,
                   foil: str | None = None, mean_over: str = "text", contrast: str | None = None) -> HeadPositions:
    """Where head ``head`` of ``layer`` (from 0) matters to the prediction: knocked out at one token at a time
    (its output there replaced by its mean over the text's tokens, as ``head_ablation`` does at every token), and
    at every token together."""
    q = _question(handle, text, target, foil)
    layers, heads = len(out_projections(handle)), head_count(handle)
    for what, given, count in (("layer", layer, layers), ("head", head, heads)):
        if isinstance(given, bool) or not isinstance(given, (int, np.integer)) or not 0 <= given < count:
            raise InputError(f"{handle.name} has no {what} {given!r}: {layers} layers (0-{layers - 1}) of "
                             f"{heads} heads (0-{heads - 1})")
    groups = [[(int(layer), int(head), t)] for t in range(len(q.ids))] + [[(int(layer), int(head))]]
    clean, logp = knocked_out(handle, q.ids, q.segments, q.position, groups, _means(handle, mean_over, q, contrast))
    target_id, value, cost, _ = _explained(clean, logp, q)
    return HeadPositions(
        text, tuple(handle._token_text(i) for i in q.ids), q.position, int(layer), int(head),
        handle._token_text(target_id), float(np.exp(float(clean[target_id]))),
        handle._token_text(q.foil) if q.foil is not None else "",
        float(np.exp(float(clean[q.foil]))) if q.foil is not None else float("nan"), value,
        cost[:-1].astype(np.float32), float(cost[-1]), q.notice, *_over(mean_over, contrast))


def knocked_out(handle: Any, ids: list[int], segments: list[int], position: int,
                groups: Sequence[Sequence[tuple[int, ...]]],
                means: list[torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The log-probabilities at ``position``: (V,) with every head in place, and (len(groups), V) with each
    group's heads knocked out together, one row a group: a (layer, head) at every token, a (layer, head, token) at
    that token alone (its output replaced by its mean over these tokens, which the clean pass reads, or by
    ``means``, one (width,) per layer: the corpus's, or one (tokens, width) per layer: a contrast sentence's outputs,
    token by token)."""
    projections = out_projections(handle)
    heads = head_count(handle)
    layers = len(projections)
    size = 0  # each head's width in the projection's input: set by the clean pass
    clean_means: list[torch.Tensor] = []  # per layer: each head's output averaged over the text's tokens
    plan: dict[str, Any] = {}  # the knocked-out (layer, head)s of each row of the pass under way
    owner = threading.get_ident()  # (the model is shared: only this thread's passes are changed)

    def hook_for(index: int) -> Any:
        def hook(module: Any, inputs: Any) -> Any:
            if threading.get_ident() != owner:
                return None
            x = inputs[0]
            if "rows" not in plan:  # the clean pass
                clean_means.append(x[0].mean(0).clone())
                return None
            out = [(r, cell[1], cell[2] if len(cell) > 2 else None) for r, group in enumerate(plan["rows"])
                   for cell in group if cell[0] == index]
            if not out:
                return None
            x = x.clone()
            mean = (means if means is not None else clean_means)[index]  # (width,), or (tokens, width): a contrast's
            for r, h, t in out:
                part = slice(h * size, (h + 1) * size)
                if t is None:
                    x[r, :, part] = mean[..., part]
                else:
                    x[r, t, part] = mean[t, part] if mean.dim() == 2 else mean[part]
            return (x, *inputs[1:])
        return hook

    hooks = [p.register_forward_pre_hook(hook_for(i)) for i, p in enumerate(projections)]
    try:
        with torch.inference_mode():
            clean = _log_probs(handle, [ids], [segments], position)[0]
            if len(clean_means) != layers:
                raise Unsupported(f"{handle.name}: its attention's output projection was not run once a layer, so "
                                  "its heads cannot be knocked out one by one")
            width = int(clean_means[0].shape[-1])  # the heads' outputs side by side, as the projection reads them
            if width % heads:
                raise Unsupported(f"{handle.name}: its attention's output ({width} wide) does not split into "
                                  f"{heads} heads")
            size = width // heads
            if means is not None and (len(means) != layers or any(
                    m.shape[-1] != width or (m.dim() == 2 and m.shape[0] != len(ids)) for m in means)):
                raise InputError(f"{handle.name}: the means given are not one of {width} numbers a layer (or a "
                                 f"token)")
            rows = []
            for a in range(0, len(groups), TRACE_ROWS):
                check_cancelled("knocking out heads")  # a newer question supersedes this one
                chunk = groups[a : a + TRACE_ROWS]
                plan["rows"] = chunk
                rows.append(_log_probs(handle, [ids] * len(chunk), [segments] * len(chunk), position))
    finally:
        for h in hooks:
            h.remove()
        plan.clear()
    return clean, (torch.cat(rows) if rows else clean.new_zeros((0, clean.shape[0])))


def _log_probs(handle: Any, ids: list[list[int]], segments: list[list[int]], position: int) -> torch.Tensor:
    """(B, V) the model's log-probabilities at ``position`` of each row."""
    out = handle._forward(ids, segments, logits=True, positions=[position])
    assert out.logits is not None
    return out.logits[:, 0].float().log_softmax(-1)
