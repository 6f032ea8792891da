"""The lab's queries as engine.api offers them: the lens over every layer and position, causal tracing,
attribution and knocking out heads; each answers for any loaded Transformer language model and (but heads)
for ELMo (attribution for an NNLM too), and explains, for any other, why not."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.cancel import check_cancelled
from engine.lab_results import (
    Attribution,
    CausalTrace,
    DirectEffects,
    HeadAblation,
    HeadPositions,
    LensGrid,
    MlpNeurons,
    NeuronExamples,
)

LENS_SENTENCES = 50  # the held-out sentences word2bert-eval --tasks lens reads: the first ones, the same every time


def lens_grid(handle: Any, text: str, k: int = 5, lens: str = "logit") -> LensGrid:
    """Layers × tokens of ``handle``'s top predictions on ``text``, read through its output head (``lens``
    "logit") or through a loaded tuned lens ("tuned"); masked LMs read a [MASK] as the hidden word."""
    return handle.lens_grid(text, k, lens)


def causal_trace(handle: Any, text: str, subject: str, samples: int = 3, contrast: str | None = None) -> CausalTrace:
    """Layers × tokens: the probability of ``handle``'s prediction (at the [MASK], or after the text) when
    that one state is restored into a run whose ``subject`` embeddings are noised (Meng et al. 2022), or into the
    run of ``contrast``, a sentence of as many tokens (activation patching)."""
    return handle.causal_trace(text, subject, samples, contrast=contrast)


def token_attribution(handle: Any, text: str, target: str | None = None, foil: str | None = None) -> Attribution:
    """Each token's share in ``handle``'s prediction at the [MASK] (or after the text), or in ``target``'s
    log-probability there, less ``foil``'s when given: integrated gradients, gradient × input and the
    gradient's norm (LIT's salience maps)."""
    return handle.token_attribution(text, target, foil)


def head_ablation(handle: Any, text: str, target: str | None = None, foil: str | None = None,
                  mean_over: str = "text", contrast: str | None = None) -> HeadAblation:
    """Layers × heads: what knocking out each attention head (its output replaced by its mean over the text's
    tokens, or with ``mean_over="corpus"`` over held-out sentences of the default corpus; with ``contrast``, a
    sentence of as many tokens, by its output there, token by token: activation patching, as TransformerLens's
    ``get_act_patch_attn_head_out_all_pos``) costs ``handle``'s prediction at the [MASK] (or after the text), or
    ``target``'s log-probability there, less ``foil``'s when given."""
    return handle.head_ablation(text, target, foil, mean_over, contrast)


def direct_effects(handle: Any, text: str, target: str | None = None, foil: str | None = None) -> DirectEffects:
    """Layers × heads: each head's direct effect on the logits at the [MASK] (or after the text) — what it writes into
    the residual stream read through the final norm (its scale held at the text's) and the head — with each layer's
    MLP's, the token's embedding's and the biases'; they add up to the model's own logit(target) − logit(foil), or
    logit(target) less the mean logit. Pre-LN networks only (GPT-2, Llama, gpt-tiny); Unsupported for BERT's
    post-LN blocks, with the reason."""
    return handle.direct_effects(text, target, foil)


def mlp_neurons(handle: Any, text: str, layer: int, target: str | None = None, foil: str | None = None) -> MlpNeurons:
    """What layer ``layer``'s MLP (from 0) writes straight into the logits at the [MASK] (or after the text), neuron
    by neuron — each neuron's activation times its column of the MLP's output projection, read as
    ``direct_effects`` reads a head; they and the projection's bias add up to that MLP's direct effect. Pre-LN
    networks only."""
    return handle.mlp_neurons(text, layer, target, foil)


def neuron_examples(handle: Any, layer: int, neuron: int, k: int = 10, corpus: str = "default",
                    progress: Any = None) -> NeuronExamples:
    """What makes neuron ``neuron`` of layer ``layer``'s MLP (both from 0) fire: the ``k`` held-out sentences of
    ``corpus`` (of 400 read, spread over it) where its output is highest, its output at each of their tokens, its
    mean and how often it is above 0; and, for a pre-LN network, the tokens it pushes up and down in the logits at
    its highest (else ``writes_refusal`` says why not). Any Transformer (GPT, BERT, a Hugging Face decoder or
    encoder); ``progress(fraction, message)`` is told as the corpus is read (once a model, corpus and layer)."""
    return handle.neuron_examples(layer, neuron, k, corpus, progress)


def head_positions(handle: Any, text: str, layer: int, head: int, target: str | None = None,
                   foil: str | None = None, mean_over: str = "text", contrast: str | None = None) -> HeadPositions:
    """Where head ``head`` of ``layer`` (from 0) matters: what knocking it out at each token alone (its output there
    replaced by its mean over the text's tokens, or by its output on ``contrast`` at that token) costs the
    prediction, as ``head_ablation`` measures it, and at every token together (activation patching by position, as
    TransformerLens's ``attn_head_out_by_pos``)."""
    return handle.head_positions(text, layer, head, target, foil, mean_over, contrast)


def _lens_grid(handle: Any, sentence: str, lens: str) -> Any:
    check_cancelled("the lens scores")  # Stop, or the job's owner gone: between sentences (engine.cancel)
    return handle.lens_grid(sentence, 1, lens)


def lens_scores(handle: Any, sentences: list[str]) -> dict[str, Any]:
    """How readable each layer is, over ``sentences``: per layer (embeddings first, the output last) the
    mean KL divergence from the output's distribution, the share of tokens whose top word is already the
    output's, and the median rank of the actual token (a masked LM's own word, a causal LM's next one);
    with a loaded tuned lens, its KL per layer too."""
    grids = [_lens_grid(handle, s, "logit") for s in sentences]
    tuned = [_lens_grid(handle, s, "tuned") for s in sentences] if getattr(handle, "tuned_lens", None) else []
    kl = np.concatenate([g.kl for g in grids], axis=1)  # (layers + 1, all tokens)
    agree = np.concatenate([np.array([[g.top_tokens[layer][t][0] == g.top_tokens[-1][t][0] for t in range(len(g.tokens))]
                                      for layer in range(g.layers)]) for g in grids], axis=1)
    ranks = np.concatenate([g.rank for g in grids], axis=1)
    out: dict[str, Any] = {
        "sentences": len(sentences), "tokens": int(kl.shape[1]),
        "kl_by_layer": [round(float(x), 4) for x in kl.mean(1)],
        "agreement_by_layer": [round(float(x), 4) for x in agree.mean(1)],
        "median_rank_by_layer": [float(np.nanmedian(r)) if np.isfinite(r).any() else None for r in ranks],
    }
    if tuned:
        out["tuned_kl_by_layer"] = [round(float(x), 4) for x in np.concatenate([g.kl for g in tuned], axis=1).mean(1)]
    return out
