"""What a knocked-out head's output is replaced by when it is knocked out to its mean over the corpus rather than
over the text (``head_ablation(..., mean_over="corpus")``): each layer's attention output, as its output projection
reads it (the heads' outputs side by side), averaged over every token of held-out sentences of the corpus — the
usual reference of mean ablation in TransformerLens's demos and Wang et al. 2022 (a dataset's mean), where the text's
own mean takes the head's output at the very token explained into its reference. One pass a sentence, kept for the
loaded model and the corpus."""

from __future__ import annotations

import threading
import weakref
from typing import Any

import torch

from engine.cancel import check_cancelled
from engine.errors import InputError, Unsupported

MEAN_SENTENCES = 128  # held-out sentences read for a model's corpus means (spread evenly over the held-out part)
_LOCK = threading.Lock()
_MEANS: weakref.WeakKeyDictionary[Any, dict[str, list[torch.Tensor]]] = weakref.WeakKeyDictionary()


def corpus_head_means(handle: Any, projections: list[Any], corpus: str = "default",
                      max_tokens: int = 128) -> list[torch.Tensor]:
    """Per layer, the attention output (the heads' outputs side by side, as each block's output projection of
    ``projections`` reads it) averaged over every token of ``MEAN_SENTENCES`` held-out sentences of ``corpus``
    (``spread_sample``'s; each read up to ``max_tokens``), on the model's device; computed once per loaded model and
    corpus."""
    from engine.data.corpora import corpus_identity, spread_sample
    from engine.handles.lens import _inputs

    key = corpus_identity(corpus)
    with _LOCK:
        kept = _MEANS.get(handle, {}).get(key)
    if kept is not None:
        return kept
    sums: list[torch.Tensor | None] = [None] * len(projections)
    counts = [0] * len(projections)
    owner = threading.get_ident()  # (the model is shared: only this thread's passes are read)

    def hook_for(index: int) -> Any:
        def hook(module: Any, inputs: Any) -> None:
            if threading.get_ident() != owner:
                return
            x = inputs[0].reshape(-1, inputs[0].shape[-1]).float().cpu().double()  # (MPS has no float64)
            sums[index] = x.sum(0) if sums[index] is None else sums[index] + x.sum(0)
            counts[index] += x.shape[0]
        return hook

    hooks = [p.register_forward_pre_hook(hook_for(i)) for i, p in enumerate(projections)]
    read = 0
    try:
        for sentence in spread_sample(corpus, MEAN_SENTENCES, "heldout"):
            check_cancelled("averaging the heads' outputs over the corpus")
            try:
                ids, segments, _special, _notice = _inputs(handle, sentence, max_tokens)
            except InputError:
                continue  # a sentence the model cannot read
            with torch.inference_mode():
                handle._forward(ids, segments, logits=False)
            read += 1
    finally:
        for h in hooks:
            h.remove()
    if not read or any(s is None for s in sums):
        raise Unsupported(f"{handle.name}: no held-out sentence of the corpus '{corpus}' reached its attention's "
                          "output projection, so its heads cannot be knocked out to their corpus means")
    device = handle.adapter.device  # (summed on the CPU in float64, which MPS has not; kept where the model is)
    means = [(s / n).float().to(device) for s, n in zip(sums, counts, strict=True) if s is not None]
    with _LOCK:
        _MEANS.setdefault(handle, {})[key] = means
    return means
