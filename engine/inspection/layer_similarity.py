"""Model against model, layer by layer: how alike two models' layers represent the same words.

Both models read the same sentences; each word's vector at each layer (``contextual_vectors``: a word split into
pieces is the mean of its pieces) is one row of that layer's matrix, the same words in the same order for both.
Two layers are compared by linear CKA (centered kernel alignment, Kornblith et al. 2019, "Similarity of Neural
Network Representations Revisited"): 1 when one layer's words are the other's up to a rotation and a scale, near 0
when their arrangements of the words have nothing in common. It does not care which basis, width or tokenizer a
model has, so a BERT can be set against a GPT, a run against the model it began from, a checkpoint against the
last. With ``debiased`` the unbiased estimate of the HSIC (Song et al. 2012) replaces the plain one: linear CKA of
unrelated layers sits above 0 when the words are few beside the layers' widths, and the debiased one does not
(it can then be slightly below 0).

Computed in feature space (Kornblith et al.'s ``feature_space_linear_cka``), never as n × n Gram matrices: a layer
of 5,000 words × 384 costs 5,000 × 384² multiply-adds a pair of layers.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.cancel import check_cancelled
from engine.errors import InputError, Unsupported
from engine.results import Capability

BATCH = 16  # sentences encoded at a time (a progress step, a point to stop at)


@dataclass(frozen=True)
class LayerSimilarity:
    model_a: str
    model_b: str
    cka: np.ndarray  # (layers of A, layers of B), layer 0 = each model's input layer
    words: int  # the words both models read, the rows of every layer's matrix
    sentences: int  # the sentences they came from
    skipped: int  # sentences left out: the two models split them into different words
    debiased: bool

    def best_match(self) -> np.ndarray:
        """For each layer of A, the layer of B most like it: (layers of A,)."""
        return self.cka.argmax(axis=1)


def _centred(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.result_type(x, np.float32))  # (a model's float32 words stay float32: half the memory)
    return x - x.mean(axis=0, keepdims=True)


@dataclass(frozen=True)
class _Layer:
    """What CKA needs of one layer's centred words: the matrix, each row's squared norm, their sum, and the
    layer's own (debiased or plain) squared-HSIC normaliser."""

    x: np.ndarray
    rows: np.ndarray
    total: float
    self_norm: float


def _debias(xty: float, rows_x: np.ndarray, rows_y: np.ndarray, total_x: float, total_y: float, n: int) -> float:
    """The unbiased HSIC estimator of Song et al., written in feature space (as Kornblith et al.'s code)."""
    return xty - n / (n - 2.0) * float(rows_x @ rows_y) + total_x * total_y / ((n - 1.0) * (n - 2.0))


def _prepare(x: np.ndarray, debiased: bool) -> _Layer:
    c = _centred(x)
    rows = np.einsum("ij,ij->i", c, c).astype(np.float64)
    total = float(rows.sum())
    self_dot = float(np.linalg.norm(c.T @ c) ** 2)
    if debiased:
        self_dot = _debias(self_dot, rows, rows, total, total, len(c))
    return _Layer(c, rows, total, float(np.sqrt(max(self_dot, 0.0))))


def _pair(a: _Layer, b: _Layer, debiased: bool) -> float:
    if a.self_norm <= 0 or b.self_norm <= 0:  # a layer whose words are all one vector: nothing to align
        return float("nan")
    xty = float(np.linalg.norm(a.x.T @ b.x) ** 2)
    if debiased:
        xty = _debias(xty, a.rows, b.rows, a.total, b.total, len(a.x))
    return xty / (a.self_norm * b.self_norm)


def linear_cka(x: np.ndarray, y: np.ndarray, debiased: bool = False) -> float:
    """Linear CKA of two matrices whose rows are the same n examples (n × d1 and n × d2)."""
    if len(x) != len(y):
        raise InputError(f"the two matrices have {len(x)} and {len(y)} rows: CKA compares the same examples")
    if len(x) < 4:
        raise InputError("CKA needs at least 4 examples")
    return _pair(_prepare(x, debiased), _prepare(y, debiased), debiased)


def cka_matrix(layers_a: list[np.ndarray], layers_b: list[np.ndarray], debiased: bool = False) -> np.ndarray:
    """CKA of every layer of A with every layer of B (each layer an n × d matrix of the same n examples)."""
    a = [_prepare(x, debiased) for x in layers_a]
    b = [_prepare(y, debiased) for y in layers_b]
    out = np.empty((len(a), len(b)))
    for i, la in enumerate(a):
        check_cancelled("layer similarity")
        for j, lb in enumerate(b):
            out[i, j] = _pair(la, lb, debiased)
    return out


@dataclass
class _Encoded:
    handle: Any  # a weak reference to the model that read them (an id alone could be the next model's)
    vectors: list[Any]
    nbytes: int


_ENCODED: OrderedDict[tuple[int, int], _Encoded] = OrderedDict()  # (id of the model, hash of the sentences)
_LOCK = threading.Lock()  # (a model let go on another thread drops its entries through its weak reference)
KEPT_BYTES = 256 << 20  # what the latest encodings may hold: A against B, then against C, reads A once


def _encode(handle: Any, sentences: list[str], progress: Callable[[float, str], None] | None, share: tuple[float, float]
            ) -> list[Any]:
    key = (id(handle), hash(tuple(sentences)))
    with _LOCK:
        kept = _ENCODED.get(key)
        if kept is not None and kept.handle() is handle:
            _ENCODED.move_to_end(key)
            return kept.vectors
    out: list[Any] = []
    start, width = share
    for i in range(0, len(sentences), BATCH):
        check_cancelled("layer similarity")
        if progress is not None:
            progress(start + width * i / len(sentences), f"{handle.name}: sentence {i + 1} of {len(sentences)}")
        out.extend(handle.contextual_vectors_batch(sentences[i:i + BATCH]))
    _keep(key, handle, out)
    return out


def forget_read_words() -> None:
    """Let go of every model's words kept for the next comparison (a benchmark times a cold read)."""
    with _LOCK:
        _ENCODED.clear()


def _forget(ref: Any) -> None:
    """A model is gone: so are its encodings (they hold only arrays, but up to KEPT_BYTES of them)."""
    with _LOCK:
        for key in [k for k, e in _ENCODED.items() if e.handle is ref]:
            del _ENCODED[key]


def _keep(key: tuple[int, int], handle: Any, vectors: list[Any]) -> None:
    """Keep a model's encoding of the sentences, the oldest let go beyond KEPT_BYTES."""
    try:
        ref = weakref.ref(handle, _forget)
    except TypeError:  # a model that cannot be referred to weakly is not kept (it would be kept alive)
        return
    nbytes = sum(cv.vectors.nbytes for cv in vectors)
    if nbytes > KEPT_BYTES:  # (one encoding larger than the whole allowance is not kept at all)
        return
    with _LOCK:
        _ENCODED[key] = _Encoded(ref, vectors, nbytes)
        while len(_ENCODED) > 1 and sum(e.nbytes for e in _ENCODED.values()) > KEPT_BYTES:
            _ENCODED.popitem(last=False)


def _same_words(a: Any, b: Any) -> bool:
    return len(a.words) == len(b.words) and all(x.lower() == y.lower() for x, y in zip(a.words, b.words, strict=True))


def layer_similarity(handle_a: Any, handle_b: Any, sentences: list[str], *, debiased: bool = False,
                     progress: Callable[[float, str], None] | None = None) -> LayerSimilarity:
    """Every layer of ``handle_a`` against every layer of ``handle_b`` over the words of ``sentences``."""
    for handle in (handle_a, handle_b):
        if Capability.CONTEXTUAL not in handle.capabilities:
            raise Unsupported(handle.missing(Capability.CONTEXTUAL))
    sentences = [s for s in sentences if s.strip()]
    if not sentences:
        raise InputError("no sentences to compare the layers on")
    encoded_a = _encode(handle_a, sentences, progress, (0.0, 0.45))
    encoded_b = encoded_a if handle_b is handle_a else _encode(handle_b, sentences, progress, (0.45, 0.45))
    kept = [(a, b) for a, b in zip(encoded_a, encoded_b, strict=True) if a.words and _same_words(a, b)]
    words = sum(len(a.words) for a, _ in kept)
    if words < 10:
        raise InputError(f"only {words} words read alike by {handle_a.name} and {handle_b.name}: CKA needs more "
                         "(at least 10)")
    if progress is not None:
        progress(0.9, f"CKA of {len(kept)} sentences' {words:,} words")
    layers_a = [np.concatenate([a.vectors[layer] for a, _ in kept]) for layer in range(kept[0][0].vectors.shape[0])]
    layers_b = [np.concatenate([b.vectors[layer] for _, b in kept]) for layer in range(kept[0][1].vectors.shape[0])]
    cka = cka_matrix(layers_a, layers_b, debiased)
    return LayerSimilarity(handle_a.name, handle_b.name, cka, words, len(kept), len(sentences) - len(kept), debiased)
