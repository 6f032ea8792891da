"""A Transformer's lab queries (the logit lens, the lens grid, causal tracing, attribution, the heads' knock-outs and
direct effects), mixed into engine.handles.transformer.TransformerHandle: each reads the network through the handle's
wrapper and hands the work to its own module under engine.handles."""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from engine.errors import InputError, Unsupported
from engine.handles.base import check_k, check_text
from engine.handles.lens import MASK_TEXT
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
from engine.models.wrappers.hf_lens import encoder_decoder_refusal
from engine.results import LogitLens, TokenCandidates


class TransformerLab:
    """The lab's queries of a TransformerHandle (its wrapper, encoding and forward pass)."""

    name: str
    adapter: Any
    tuned_lens: Any
    tuned_lens_notice: str
    _encode: Any
    _forward: Any
    _token_text: Any

    def logit_lens(self, text: str, k: int = 10) -> LogitLens:
        """Each layer's hidden state at the first [MASK] (masked LMs) or at the last token (left-to-right
        LMs), read through the model's own output head (final layer norm first where the model has one)."""
        k = check_k(k)
        if self.adapter.objective not in ("masked", "causal"):
            raise Unsupported(self.adapter.missing_head_reason or f"{self.name} has no output head to read layers with")
        if getattr(self.adapter, "encoder_decoder", False):
            raise Unsupported(encoder_decoder_refusal(self.name))
        text = check_text(text)
        if self.adapter.objective == "masked":
            if MASK_TEXT not in text:
                raise InputError("the text has no [MASK]: the lens reads the layers at a [MASK]")
            mask_token = self.adapter.tokenizer.id_to_token(self.adapter.mask_id)
            ids, segments, _, _, _ = self._encode(text.replace(MASK_TEXT, mask_token))
            if self.adapter.mask_id not in ids:
                raise InputError("the [MASK] lies beyond the part of the text this model reads")
            position = ids.index(self.adapter.mask_id)
        else:
            ids, segments, _, _, _ = self._encode(text)
            position = len(ids) - 1
        out = self._forward(ids, segments)
        with torch.inference_mode():
            logits = self.adapter.read_layers([h[0, position] for h in out.hidden])  # (layers + 1, V)
        probs = logits.float().softmax(-1)
        top = probs.topk(min(max(1, int(k)), probs.shape[-1]), dim=-1)
        values, indices = top.values.cpu().numpy(), top.indices.cpu().numpy()
        layers = tuple(TokenCandidates(text, tuple(self._token_text(int(i)) for i in idx), tuple(float(v) for v in val))
                       for idx, val in zip(indices, values, strict=True))
        return LogitLens(text, position, layers)

    def lens_grid(self, text: str, k: int = 5, lens: str = "logit") -> LensGrid:
        """Every layer's prediction at every position (engine.handles.lens): ``lens`` "logit", or "tuned"
        where a tuned lens was trained for this model and loaded with it."""
        from engine.handles.lens import lens_grid

        if lens not in ("logit", "tuned"):
            raise InputError(f"no lens '{lens}' (logit or tuned)")
        if lens == "tuned" and self.tuned_lens is None:
            raise Unsupported(f"{self.name} has no tuned lens: train one with word2bert-train tuned-lens --model "
                              f"{self.name}, then open that run")
        grid = lens_grid(self, text, k, self.tuned_lens if lens == "tuned" else None)
        if lens == "tuned" and self.tuned_lens_notice:
            grid = dataclasses.replace(grid, notice="; ".join(n for n in (grid.notice, self.tuned_lens_notice) if n))
        return grid

    def causal_trace(self, text: str, subject: str, samples: int = 3, contrast: str | None = None) -> CausalTrace:
        """Where the prediction at the [MASK] (or after the text) comes from (engine.handles.lens): the subject
        noised, or (``contrast``) a sentence of as many tokens run in the text's place."""
        from engine.handles.lens import causal_trace

        return causal_trace(self, text, subject, samples=samples, contrast=contrast)

    def token_attribution(self, text: str, target: str | None = None, foil: str | None = None) -> Attribution:
        """Which of the text's tokens the prediction at the [MASK] (or after the text) rests on
        (engine.handles.attribution): integrated gradients, gradient × input and the gradient's norm."""
        from engine.handles.attribution import token_attribution

        return token_attribution(self, text, target, foil)

    def head_ablation(self, text: str, target: str | None = None, foil: str | None = None,
                      mean_over: str = "text", contrast: str | None = None) -> HeadAblation:
        """Which attention heads the prediction at the [MASK] (or after the text) needs: each knocked out in
        turn (engine.handles.head_ablation)."""
        from engine.handles.head_ablation import head_ablation

        return head_ablation(self, text, target, foil, mean_over, contrast)

    def direct_effects(self, text: str, target: str | None = None, foil: str | None = None) -> DirectEffects:
        """Each head's (and MLP's) direct effect on the logits at the [MASK] (or after the text): pre-LN networks
        only (engine.handles.direct_effects)."""
        from engine.handles.head_ablation import direct_effects

        return direct_effects(self, text, target, foil)

    def mlp_neurons(self, text: str, layer: int, target: str | None = None, foil: str | None = None) -> MlpNeurons:
        """What one layer's MLP writes straight into the logits, neuron by neuron: pre-LN networks only
        (engine.handles.direct_effects)."""
        from engine.handles.head_ablation import mlp_neurons

        return mlp_neurons(self, text, layer, target, foil)

    def neuron_examples(self, layer: int, neuron: int, k: int = 10, corpus: str = "default",
                        progress: Any = None) -> NeuronExamples:
        """The held-out sentences of ``corpus`` where one MLP neuron fires most, and what it writes into the logits
        (engine.handles.neuron_examples)."""
        from engine.handles.neuron_examples import neuron_examples

        return neuron_examples(self, layer, neuron, k, corpus, progress)

    def head_positions(self, text: str, layer: int, head: int, target: str | None = None,
                       foil: str | None = None, mean_over: str = "text",
                       contrast: str | None = None) -> HeadPositions:
        """Where one head matters to the prediction: knocked out at one token at a time
        (engine.handles.head_ablation)."""
        from engine.handles.head_ablation import head_positions

        return head_positions(self, text, layer, head, target, foil, mean_over, contrast)
