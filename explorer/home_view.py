"""Where a model is shown when the user asks to explore it (the Pretrain tab's "Open in the explorer"): the
view that shows what its family is for, read from what the model can do (its capabilities), not its name."""

from __future__ import annotations

from typing import Any


def home_view(capabilities: Any) -> tuple[str, str | None] | None:
    """(panel, view) for a model of these ``engine.api.Capability`` flags, as a scene names them; None where
    no view shows it (a fine-tuned classifier: the Fine-tune tab has it).

    A masked LM fills in a [MASK] (BERT); a transformer that predicts the next token writes on (GPT); any other
    contextual model gives each occurrence its vector (ELMo: the polysemy lens); any other language model predicts
    the next word (an n-gram, a feed-forward neural LM); static vectors have their neighbours (word2vec, GloVe);
    a model that only scores sentences compares them."""
    from engine.api import Capability

    caps = capabilities
    if Capability.MASKED_LM in caps:
        return "predictions", "masked"
    if Capability.NEXT_TOKEN in caps and Capability.ATTENTION in caps:
        return "predictions", "next"
    if Capability.CONTEXTUAL in caps:
        return "polysemy", "neighbours"
    if Capability.NEXT_TOKEN in caps:  # (before its word vectors: a neural LM, Bengio's, is a language model first)
        return "predictions", "next"
    if Capability.STATIC in caps:
        return "neighbours", None
    if Capability.SENTENCE_SCORE in caps:
        return "predictions", "probability"
    return None


# how the window names those views (its tabs, and the Predictions tab's own)
NAMES = {"polysemy": "the Polysemy lens", "neighbours": "Neighbours", "predictions": "Predictions",
         "masked": "Masked LM", "next": "Next token", "probability": "Sentence probability"}


def home_name(capabilities: Any) -> str:
    """Where ``home_view`` shows such a model, as the window's tabs say it ("Predictions → Next token"); "" where
    none does."""
    home = home_view(capabilities)
    if home is None:
        return ""
    panel, view = home
    return f"{NAMES[panel]} → {NAMES[view]}" if panel == "predictions" and view else NAMES[panel]
