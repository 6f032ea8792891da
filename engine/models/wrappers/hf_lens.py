"""How a Hugging Face model's layers are read through its output head (the logit lens), found by a probe.

Architectures name their parts differently — BERT's ``cls.predictions``, RoBERTa's ``lm_head``, ALBERT's
``predictions``, ELECTRA's ``generator_predictions`` then ``generator_lm_head``, DeBERTa-v3's ``lm_predictions``
(given the word embeddings), DistilBERT's ``vocab_transform`` … ``vocab_projector``, ModernBERT's ``head`` then
``decoder``, a decoder's output embeddings — and differ in whether the network ends with a norm (GPT-2's ``ln_f``,
Llama's ``norm``, OPT's ``final_layer_norm``, ModernBERT's ``final_norm``) and whether transformers' last hidden
state has passed it (GPT-2's has; ModernBERT's has not). A wrong guess draws a plausible but false lens. So the
reader is found by trying: one short text through the whole model, the final norm's input and output caught by a
hook, and each candidate head (then what the config says is done to its output: Gemma 2's soft cap, Cohere's scale)
applied to the last state must give back the model's own logits. Where none does (a model that scales or caps its
logits after the head, say), the lens is refused with that reason rather than drawn wrong.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import torch

from engine.errors import Unsupported

NORM_NAMES = ("ln_f", "norm", "final_layer_norm", "final_layernorm", "final_norm")
HEADS = (("cls.predictions",), ("cls",), ("lm_head",), ("predictions",),  # each a dotted path, applied in turn
         ("generator_predictions", "generator_lm_head"),
         ("vocab_transform", "activation", "vocab_layer_norm", "vocab_projector"), ("head", "decoder"))


def encoder_decoder_refusal(name: str) -> str:
    """Why the lab does not read an encoder-decoder (BART, T5)."""
    return (f"{name} is an encoder-decoder: its words come from its decoder, so its encoder's layers cannot be read "
            "through its output head, nor its states traced (the lab reads encoder-only and decoder-only models: "
            "BERT, GPT)")


def norms(base: Any) -> list[Any]:
    """Modules named as a norm (NORM_NAMES) outside the numbered blocks: the final norm is the last of them a
    forward pass calls (ModernBERT's embeddings have a "norm" too)."""
    found = []
    for name, module in base.named_modules():
        parts = name.split(".")
        if parts[-1] in NORM_NAMES and not any(p.isdigit() for p in parts):
            found.append(module)
    return found


def head_chains(model: Any) -> list[list[Any]]:
    """The candidate heads: each a list of modules applied in turn, in HEADS's order, then the output
    embeddings (a decoder's ``lm_head``, where no named head exists)."""
    def part(path: str) -> Any:
        module = model
        for name in path.split("."):
            module = getattr(module, name, None)
        return module if callable(module) else None

    chains = [[part(p) for p in path] for path in HEADS]
    chains = [c for c in chains if all(m is not None for m in c)]
    predictions, embeddings = part("lm_predictions"), model.get_input_embeddings()
    if predictions is not None and embeddings is not None:  # DeBERTa-v3's own head: it is given the word embeddings
        chains.append([lambda h: predictions(h, embeddings)])
    out = model.get_output_embeddings()
    if out is not None:
        chains.append([out])
    return chains


def logit_transforms(config: Any) -> list[Callable[[torch.Tensor], torch.Tensor]]:
    """What the model does to its head's output, as its config declares it (Gemma 2's soft cap, Cohere's logit
    scale), then nothing: tried in that order, so that a declared transform is applied even where a probe's small
    logits cannot tell it from none."""
    declared: list[Callable[[torch.Tensor], torch.Tensor]] = []
    scale = getattr(config, "logit_scale", None)
    if isinstance(scale, int | float) and not isinstance(scale, bool):
        def scaled(x: torch.Tensor, s: float = float(scale)) -> torch.Tensor:
            return x * s
        declared.append(scaled)
    cap = getattr(config, "final_logit_softcapping", None)
    if isinstance(cap, int | float) and not isinstance(cap, bool) and cap > 0:
        def capped(x: torch.Tensor, c: float = float(cap)) -> torch.Tensor:
            return torch.tanh(x / c) * c
        declared.append(capped)

    def unchanged(x: torch.Tensor) -> torch.Tensor:
        return x
    return [*declared, unchanged]


class LensReader:
    """The final norm (where the network has one) and the head, as a probe found them: called on stacked layer
    states (layers + 1, …, d), the logits (layers + 1, …, V). ``normed``: whether transformers' last state has
    passed the norm ("last"), none has ("all"), or there is no norm to apply ("none")."""

    def __init__(self, norm: Any, normed: str, chain: list[Any],
                 after: Callable[[torch.Tensor], torch.Tensor]) -> None:
        self.norm, self.normed, self.chain, self.after = norm, normed, chain, after

    def head(self, h: torch.Tensor) -> torch.Tensor:
        """States past the final norm -> logits: the head's modules in turn, then what the config does to them."""
        for module in self.chain:
            h = module(h)
        return self.after(h)

    def __call__(self, h: torch.Tensor) -> torch.Tensor:
        if self.normed == "last":
            h = torch.cat([self.norm(h[:-1]), h[-1:]])
        elif self.normed == "all":
            h = self.norm(h)
        return self.head(h)


def find_lens_reader(adapter: Any) -> LensReader:
    """A function from stacked layer states (layers + 1, …, d) to logits (layers + 1, …, V), checked on a probe
    to give the model's own logits from its last state; Unsupported where no candidate does."""
    model = adapter.model
    if getattr(adapter, "encoder_decoder", False):
        raise Unsupported(encoder_decoder_refusal(type(model).__name__))
    if adapter.objective not in ("masked", "causal"):
        raise Unsupported(f"{type(model).__name__} has no output head to read its layers with")
    device = next(model.parameters()).device
    vocab = int(model.config.vocab_size)
    ids = [*adapter.specials.prefix, *[min(vocab - 1, 5 + i) for i in range(4)], *adapter.specials.suffix]
    kwargs: dict[str, Any] = {"input_ids": torch.tensor([ids], device=device), "output_hidden_states": True,
                              "attention_mask": torch.ones(1, len(ids), dtype=torch.long, device=device)}
    if adapter.takes_segments:
        kwargs["token_type_ids"] = torch.zeros(1, len(ids), dtype=torch.long, device=device)
    calls: list[tuple[Any, Any, Any]] = []  # (norm, its input, its output) in the order the pass called them
    me = threading.get_ident()  # (another thread's query on the same model is not this probe's)

    def caught(module: Any, args: Any, output: Any) -> None:
        if threading.get_ident() == me and args:
            calls.append((module, args[0], output))

    hooks = [m.register_forward_hook(caught) for m in norms(model.base_model)]
    try:
        with torch.inference_mode():
            out = model(**kwargs)
    finally:
        for hook in hooks:
            hook.remove()
    norm: Any = None
    into: Any = None
    normed_out: Any = None
    if calls:
        norm, into, normed_out = calls[-1]
    logits = getattr(out, "logits", None)
    if logits is None:
        logits = getattr(out, "prediction_logits", None)
    hidden = list(getattr(out, "hidden_states", None) or [])
    if logits is None or not hidden:
        raise Unsupported(f"{type(model).__name__} gives no logits and layer states to compare: its layers are "
                          "not read through its head")
    last = hidden[-1].float()

    def close(a: torch.Tensor, b: torch.Tensor) -> bool:
        a, b = a.float(), b.float()
        return a.shape == b.shape and bool((a - b).abs().max() <= 1e-3 * max(1.0, float(b.abs().max())))

    normed = "none"  # the last state as transformers gives it: past the final norm ("last"), or not ("all")
    if isinstance(normed_out, torch.Tensor) and isinstance(into, torch.Tensor):
        if close(normed_out, last):
            normed = "last"
        elif close(into, last):
            normed = "all"
    with torch.inference_mode():
        for chain, after in [(c, a) for c in head_chains(model) for a in logit_transforms(model.config)]:
            reader = LensReader(norm, normed, chain, after)
            try:
                got = reader(torch.stack(hidden))[-1]
            except (RuntimeError, TypeError, ValueError):
                continue
            if close(got, logits):
                return reader
    raise Unsupported(f"{type(model).__name__}: no head found here turns its last layer's states into its own "
                      "logits (it may scale or cap them after its head), so its layers are not read through it "
                      "rather than read wrong")
