"""The lab's queries as engine.api offers them: the lens over every layer and position, and causal
tracing; both answer for any loaded Transformer language model and explain, for any other, why not."""

from __future__ import annotations

from typing import Any

from engine.lab_results import CausalTrace, LensGrid


def lens_grid(handle: Any, text: str, k: int = 5, lens: str = "logit") -> LensGrid:
    """Layers × tokens of ``handle``'s top predictions on ``text``, read through its output head (``lens``
    "logit") or through a loaded tuned lens ("tuned"); masked LMs read a [MASK] as the hidden word."""
    return handle.lens_grid(text, k, lens)


def causal_trace(handle: Any, text: str, subject: str, samples: int = 3) -> CausalTrace:
    """Layers × tokens: the probability of ``handle``'s prediction (at the [MASK], or after the text) when
    that one state is restored into a run whose ``subject`` embeddings are noised (Meng et al. 2022)."""
    return handle.causal_trace(text, subject, samples)
