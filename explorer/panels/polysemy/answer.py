"""What the polysemy lens's contextual column shows for one click, worked out in the query thread: for
each typed occurrence of the word its nearest corpus occurrences, the map of them all, every other
indexed model's answer, and the typed occurrences' similarity layer by layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.panels.polysemy.text import COMPARE_K, layer_similarities, nearest

Hits = list[tuple[str, list[Any]]]  # (typed sentence, its nearest corpus occurrences)


@dataclass(frozen=True)
class ContextualAnswer:
    """What the contextual column shows for one click, from the query thread."""

    word: str
    layer: int
    groups: Hits  # one per typed occurrence
    map_key: tuple[str, str, str]  # (model, word, method): the map's points are reused for the same key
    occurrence_map: Any  # engine.api.OccurrenceMap, or None with map_error saying why there is none
    map_error: str
    others: list[tuple[str, int, Hits]]  # every other indexed model: (name, its layer, its groups)
    by_layer: list[float]  # the first two typed occurrences' cosine at every layer


def compared(others: list[tuple[str, Any, Any]], word: str, sentences: list[str]) -> list[tuple[str, int, Hits]]:
    """The other indexed models' nearest COMPARE_K for each typed occurrence, each at the layer the lens opens it
    at (``engine.api.sense_layer``: its last, unless an earlier one clearly tells senses apart better)."""
    from engine.api import sense_layer

    rows = []
    for name, other, ix in others:
        layer = sense_layer(other.info)
        groups = []
        for s in sentences:
            cv = other.contextual_vectors(s)
            layer = min(layer, cv.vectors.shape[0] - 1)
            groups += [(s, nearest(ix, word, cv.vectors[layer, i], layer, COMPARE_K))
                       for i, w in enumerate(cv.words) if w.lower() == word]
        rows.append((name, layer, groups))
    return rows


def contextual_answer(handle: Any, word: str, layer: int, sentences: list[str], hits: int, index: Any,
                      others: list[tuple[str, Any, Any]], method: str, previous: Any) -> ContextualAnswer:
    """``index``: the model's corpus index or its fetched occurrences of ``word``; ``others``: (name,
    handle, index) of every other model with one; ``previous``: the last map's points, to start from."""
    import numpy as np

    from engine.api import CorpusIndex, InputError, Word2BertError, occurrence_map

    out, typed, typed_sentences, every_layer = [], [], [], []
    for s in sentences:
        cv = handle.contextual_vectors(s)
        for i, w in enumerate(cv.words):
            if w.lower() == word:
                out.append((s, nearest(index, word, cv.vectors[layer, i], layer, hits)))
                typed.append(cv.vectors[layer, i])
                typed_sentences.append(s)
                every_layer.append(cv.vectors[:, i])
    if not out:
        raise InputError(f"“{word}” is not in the sentences")
    if isinstance(index, CorpusIndex):  # a whole-corpus index
        vectors, corpus_sentences, _ = index.occurrence_vectors(word, layer)
    else:  # the word's occurrences, fetched on demand
        vectors, corpus_sentences = index.layer_vectors(layer), index.sentences
    occ_map, map_error = None, ""
    try:
        occ_map = occurrence_map(vectors, corpus_sentences, np.stack(typed), typed_sentences, method, previous)
    except Word2BertError as e:  # no map (too few occurrences): the rest still shows
        map_error = str(e)
    try:
        rows = compared(others, word, sentences)
    except Word2BertError as e:  # e.g. the word is below another index's frequency floor
        rows = [(name, 0, [(str(e), [])]) for name, _, _ in others[:1]]
    return ContextualAnswer(word, layer, out, (handle.name, word, method), occ_map, map_error, rows,
                            list(layer_similarities(every_layer)))
