"""Which attention heads a prediction needs (the lab's fourth question): each head of each layer knocked out in
turn, its output at every token replaced by its mean over the text's tokens ("mean ablation", as
TransformerLens's head-ablation demos and Wang et al. 2022's path patching use a mean rather than zeros, which
a model never sees), and the prediction at the [MASK] (or after the text) measured again: log P(target),
or log P(target) − log P(foil) with a foil. ``effect[l, h]`` is what removing head h of layer l costs that
quantity (positive: the head pushed the prediction up). A head is its slice of the attention's output
projection's input (the heads' outputs side by side, before the projection mixes them), found per
architecture by name; one batch of rows, a head knocked out per row.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import torch

from engine.cancel import check_cancelled
from engine.errors import InputError, Unsupported
from engine.handles.attribution import one_token
from engine.handles.gradient_walk import unnamed
from engine.handles.lens import TRACE_ROWS, _inputs, prediction_position
from engine.lab_results import HeadAblation

MAX_ABLATION_TOKENS = 128  # a paragraph: layers × heads rows of it run
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
    _, blocks = handle.adapter.layer_modules()
    found = []
    for block in blocks:
        modules = dict(block.named_modules())
        module = next((modules[name] for name in OUT_PROJECTIONS if name in modules), None)
        if module is None:
            raise Unsupported(f"{handle.name}: its attention's output projection is not where word2bert looks for "
                              f"it ({type(block).__name__}), so its heads cannot be knocked out one by one")
        found.append(module)
    return found


def head_count(handle: Any) -> int:
    heads = handle.info.get("heads")
    if not isinstance(heads, int) or heads < 1:
        raise Unsupported(f"{handle.name} does not say how many attention heads a layer has")
    return heads


def head_ablation(handle: Any, text: str, target: str | None = None, foil: str | None = None) -> HeadAblation:
    """Every head of every layer knocked out in turn (its output replaced by its mean over the text's tokens)
    and what that costs the prediction at the [MASK] (or after the text): the model's top word, or
    ``target``; against ``foil`` when given."""
    ids, segments, _special, notice = _inputs(handle, text, MAX_ABLATION_TOKENS)
    position = prediction_position(handle, ids, "the text has no [MASK] (or it lies beyond the tokens read): "
                                   "knocking out heads explains the prediction at a [MASK]")
    layers, heads = len(out_projections(handle)), head_count(handle)
    cells = [(layer, h) for layer in range(layers) for h in range(heads)]
    named = None if unnamed(target, "target") else one_token(handle, str(target), "target")
    foil_id = None if unnamed(foil, "foil") else one_token(handle, str(foil), "foil")
    if foil_id is not None and foil_id == named:
        raise InputError("the foil is the target itself: name another word to explain it against")
    clean, logp = knocked_out(handle, ids, segments, position, [[cell] for cell in cells])
    target_id = int(clean.argmax()) if named is None else named
    if foil_id == target_id:
        raise InputError("the foil is the target itself: name another word to explain it against")
    ablated = logp[:, target_id].double().cpu().numpy()
    value = float(clean[target_id]) - (float(clean[foil_id]) if foil_id is not None else 0.0)
    per_head = ablated - (logp[:, foil_id].double().cpu().numpy() if foil_id is not None else 0.0)
    return HeadAblation(
        text, tuple(handle._token_text(i) for i in ids), position, handle._token_text(target_id),
        float(np.exp(float(clean[target_id]))), handle._token_text(foil_id) if foil_id is not None else "",
        float(np.exp(float(clean[foil_id]))) if foil_id is not None else float("nan"), value,
        (value - per_head).reshape(layers, heads).astype(np.float32),
        np.exp(ablated).reshape(layers, heads).astype(np.float32), notice)


def knocked_out(handle: Any, ids: list[int], segments: list[int], position: int,
                groups: list[list[tuple[int, int]]]) -> tuple[torch.Tensor, torch.Tensor]:
    """The log-probabilities at ``position``: (V,) with every head in place, and (len(groups), V) with each
    group's (layer, head)s knocked out together, one row a group (their outputs at every token replaced by their
    means over these tokens, which the clean pass reads)."""
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
            out = [(r, h) for r, group in enumerate(plan["rows"]) for layer, h in group if layer == index]
            if not out:
                return None
            x = x.clone()
            for r, h in out:
                x[r, :, h * size : (h + 1) * size] = clean_means[index][h * size : (h + 1) * size]
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
