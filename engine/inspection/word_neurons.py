"""Which of a layer's MLP neurons fire for a word: the inverse of a neuron's sentences (engine.handles.neuron_examples).
Up to ``SENTENCES`` sentences of the corpus holding the word (its word index's, spread evenly) are read a batch a
pass; each neuron's output at the word's tokens (every piece of it) is set against its output at the sentences' other
tokens: selectivity = (mean at the word − mean elsewhere) / the spread elsewhere, a z-score, so that a neuron that
is high everywhere does not count as the word's. The most selective come first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from engine.cancel import check_cancelled
from engine.errors import InputError, Unsupported
from engine.lab_results import WordNeurons

SENTENCES = 120  # sentences holding the word read at most
SHOWN = 12


def _word_positions(handle: Any, text: str, key: str) -> tuple[list[int], list[int], np.ndarray]:
    """(ids, the tokens of the word's occurrences, the text's other own tokens) of one sentence, as the model reads
    its first tokens (engine.handles.neuron_examples.MAX_TOKENS)."""
    from engine.data.text import word_spans
    from engine.handles.neuron_examples import MAX_TOKENS

    ids, _segments, offsets, special, _notice = handle._encode(text)
    spans = [(a, b) for a, b in word_spans(text) if text[a:b].lower() == key]
    at: list[int] = []
    other: list[int] = []
    for t, ((a, b), s) in enumerate(zip(offsets[:MAX_TOKENS], special[:MAX_TOKENS], strict=False)):
        if s or b <= a:
            continue
        (at if any(a < end and b > start for start, end in spans) else other).append(t)
    return ids[:MAX_TOKENS], at, np.array(other, np.int64)


def word_neurons(handle: Any, layer: int, word: str, k: int = SHOWN, corpus: str = "default",
                 progress: Callable[[float, str], None] | None = None) -> WordNeurons:
    """The ``k`` neurons of layer ``layer``'s MLP (from 0) most selective for ``word`` in ``corpus``."""
    from engine.data.text import word_tokenize
    from engine.handles.direct_effects import mlp_output
    from engine.handles.neuron_examples import BATCH, mlp_activations
    from engine.inspection.occurrences import word_index
    from engine.results import Capability

    if Capability.ATTENTION not in handle.capabilities:
        raise Unsupported(f"{handle.name} ({handle.kind}) has no MLP neurons to read: only Transformer language "
                          "models (GPT, BERT) have them")
    words = word_tokenize(word.strip()) if isinstance(word, str) else []
    if len(words) != 1:
        raise InputError("type one word")
    key = words[0].lower()
    projection = mlp_output(handle, layer)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= 1000:
        raise InputError(f"k must be 1 to 1000, not {k!r}")
    index = word_index(corpus, progress)
    found = index.sentences_of(key)  # (UnknownWord where no sentence holds it)
    chosen = np.unique(found[np.linspace(0, len(found) - 1, min(SENTENCES, len(found))).astype(np.int64)])
    read = [(ids, at, other) for ids, at, other in (_word_positions(handle, index.sentence(int(i)), key)
                                                      for i in chosen) if at]
    if not read:
        raise InputError(f"'{word}' is not read as a word of its own by {handle.name} in the corpus's sentences")
    sums: dict[str, np.ndarray] = {}  # at the word, where it is above 0 there; elsewhere, and its squares
    at_count = else_count = 0
    for start in range(0, len(read), BATCH):
        check_cancelled(f"reading the neurons for '{key}'")
        if progress is not None:
            progress(start / len(read), f"reading {handle.name}'s layer {int(layer) + 1} MLP at '{key}': sentence "
                                        f"{start + 1} of {len(read)}")
        batch = read[start:start + BATCH]
        for (_, at, other), x in zip(batch, mlp_activations(handle, projection, [b[0] for b in batch]), strict=True):
            y = x.numpy().astype(np.float64)
            here, rest = y[at], y[other]
            for name, part in (("at", here.sum(0)), ("fired", (here > 0).sum(0)), ("else", rest.sum(0)),
                               ("square", np.square(rest).sum(0))):
                sums[name] = sums[name] + part if name in sums else part.astype(np.float64)
            at_count += len(at)
            else_count += len(other)
    at_mean = sums["at"] / at_count
    else_mean = sums["else"] / max(1, else_count)
    spread = np.sqrt(np.maximum(sums["square"] / max(1, else_count) - else_mean ** 2, 0.0)) + 1e-6
    selectivity = (at_mean - else_mean) / spread
    order = np.argsort(-selectivity, kind="stable")[:int(k)]
    return WordNeurons(key, int(layer), order.astype(np.int64), selectivity[order].astype(np.float32),
                       at_mean[order].astype(np.float32), else_mean[order].astype(np.float32),
                       (sums["fired"][order] / at_count).astype(np.float32), at_count, len(read), corpus)
