"""Where a Transformer's attention heads write straight into what its output reads: the residual stream of a pre-LN
network (GPT-2, Llama), which only the final norm and the output head stand between and the logits. There a head's
*direct* effect on the logits is a part of a sum (Elhage et al. 2021; TransformerLens's ``decompose_resid``); in a
post-LN network (BERT) every block's LayerNorm rescales what each head wrote, and no such sum exists.

Whether a network is pre-LN is declared here by architecture — a post-LN network also has a final state and a head,
so no probe of those could tell — and what its final norm does is found by a probe in engine.handles.direct_effects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from engine.errors import Unsupported

# transformers' model types whose blocks add each attention's output projection to the residual stream unscaled and
# unnormalised (pre-LN, in sequence or in parallel with the MLP), the stream then read through a final norm and a
# linear head; OPT and BLOOM only with the flags that make them so (OPT-350m and BLOOM's post-LN variant: not)
PRE_NORM_TYPES = frozenset({
    "gpt2", "gpt_neo", "gptj", "gpt_neox", "gpt_bigcode", "codegen", "llama", "mistral", "mixtral", "qwen2", "qwen3",
    "phi", "phi3", "falcon", "stablelm", "starcoder2", "gemma", "olmo", "cohere", "opt", "bloom"})
POST_NORM_TYPES = frozenset({
    "bert", "roberta", "xlm-roberta", "camembert", "distilbert", "electra", "albert", "mpnet", "deberta", "deberta-v2",
    "ernie", "megatron-bert", "roformer"})
# pre-LN, but each attention's output normalised again before it is added to the stream ("sandwich" norms): a head's
# share of it is rescaled by that norm, the heads' outputs together
NORMED_OUTPUT_TYPES = frozenset({"gemma2", "gemma3", "gemma3_text", "olmo2"})
EXACT_IN = "GPT-2, Llama and the other pre-LN decoders, and gpt-tiny"


@dataclass(frozen=True)
class DirectReadout:
    """What stands between the residual stream and the logits: the final norm (None: the stream is read as it is)
    and the head (states past the norm -> logits)."""

    norm: Any
    head: Callable[[torch.Tensor], torch.Tensor]


def post_norm_refusal(name: str) -> Unsupported:
    return Unsupported(
        f"{name} normalises after each block (post-LN, as BERT does): every LayerNorm above a head rescales what it "
        "wrote, so a head's direct effect on the logits is not a part of them. The knock-outs measure its whole "
        f"effect; direct effects are exact in pre-LN models ({EXACT_IN})")


def hf_pre_norm_refusal(name: str, config: Any) -> Unsupported | None:
    """None where a Hugging Face ``config`` declares a pre-LN network; else why its heads' direct effects are not
    read."""
    kind = str(getattr(config, "model_type", ""))
    if kind in POST_NORM_TYPES:
        return post_norm_refusal(name)
    if kind == "opt" and not getattr(config, "do_layer_norm_before", True):
        return post_norm_refusal(name)
    if kind == "bloom" and getattr(config, "apply_residual_connection_post_layernorm", False):
        return post_norm_refusal(name)
    if kind in NORMED_OUTPUT_TYPES:
        return Unsupported(
            f"{name} normalises each attention's output again before adding it to the stream (a '{kind}' network), "
            "so what one head writes is rescaled with what the others write and is not a part of the logits by "
            f"itself (direct effects are exact in {EXACT_IN}); the knock-outs measure each head's whole effect")
    if kind not in PRE_NORM_TYPES:
        return Unsupported(
            f"{name} is a '{kind}' network, which word2bert does not know to add its heads' outputs straight to the "
            f"stream its head reads (pre-LN), so their direct effects are not read rather than read wrong (they are "
            f"for {EXACT_IN}); the knock-outs measure each head's whole effect")
    return None
