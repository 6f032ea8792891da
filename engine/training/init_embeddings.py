"""Start from what big data already learned: a Transformer's token embeddings initialised from GloVe
6B-50d (400k words from 6B tokens) before pre-training, so the model begins knowing that *money*,
*deposit* and *bank* belong together. The MLM decoder (BERT) and the output layer (GPT) are tied to the
embeddings, so predictions start from the same similarities.

Every vocabulary token whose text (without WordPiece's "##" or byte-level BPE's "Ġ") is a GloVe word
gets that vector through a fixed orthonormal projection 50 -> hidden, scaled to the network's own
initial size; a projection with orthonormal rows keeps every cosine similarity between GloVe vectors.
Tokens GloVe does not know (punctuation pieces, rare pieces, special tokens) keep their random start.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

CHOICES = ("", "glove-6b-50d")


def token_text(token: str) -> str:
    return token.removeprefix("##").removeprefix("Ġ").lower()


def projected_rows(tokenizer: Any, vectors: Any, hidden: int, target_norm: float,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(ids that GloVe knows, their (n, hidden) starting rows): GloVe vector @ Q, with Q (dim, hidden)
    orthonormal rows, rescaled so the mean row norm is ``target_norm``."""
    dim = vectors.dim
    if hidden < dim:
        raise ValueError(f"hidden ({hidden}) must be at least GloVe's {dim} dimensions to keep its geometry")
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((hidden, dim)))  # (hidden, dim), orthonormal columns
    ids, rows = [], []
    for token, i in tokenizer.get_vocab().items():
        text = token_text(token)
        if text and text in vectors and not (token.startswith("[") and token.endswith("]")):
            ids.append(i)
            rows.append(vectors.vector(text))
    if not ids:
        return np.zeros(0, np.int64), np.zeros((0, hidden), np.float32)
    projected = np.asarray(rows, np.float32) @ q.T.astype(np.float32)  # (n, hidden)
    projected *= target_norm / np.linalg.norm(projected, axis=1).mean()
    return np.asarray(ids, np.int64), projected.astype(np.float32)


def init_token_embeddings(embedding: torch.nn.Embedding, tokenizer: Any, source: str, seed: int = 0) -> dict[str, Any]:
    """Overwrite the rows of ``embedding`` that ``source`` knows; returns what happened (for config.json)."""
    if not source:
        return {}
    if source != "glove-6b-50d":
        raise ValueError(f"init_embeddings must be one of {', '.join(repr(c) for c in CHOICES)}, not {source!r}")
    from engine.models.glove import load_glove_package

    weight = embedding.weight
    target = float(weight.detach().norm(dim=1).mean())  # the network's own initial scale
    ids, rows = projected_rows(tokenizer, load_glove_package(), weight.shape[1], target, seed)
    with torch.no_grad():
        weight[torch.from_numpy(ids)] = torch.from_numpy(rows).to(weight.dtype)
    return {"init_embeddings": source, "init_embeddings_rows": int(len(ids)), "vocabulary_rows": int(weight.shape[0])}
