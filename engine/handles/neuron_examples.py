"""What makes one MLP neuron fire: the held-out sentences of a corpus where its output (the MLP output projection's
input, one entry a neuron) is highest, each with the neuron's output at every token — the view of a neuron that
Neuroscope and Bills et al. 2023 ("Language models can explain neurons in language models") give, a neuron read
from the text that drives it rather than from the weights alone. Where the network is pre-LN, also what the neuron
writes straight into the logits at its highest (its output column read through the final norm, its scale held at
that token's, and the head, as engine.handles.direct_effects reads it), the tokens pushed up and down.

One read of ``EXAMPLE_SENTENCES`` sentences keeps each sentence's highest output of every neuron of the layer (a
sentences × neurons table of float32: a neuron after another of the same layer answers at once); the best sentences
are read again, one pass each, for their tokens' outputs."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from engine.cancel import check_cancelled
from engine.errors import InputError, Unsupported
from engine.handles.base import check_k, check_text
from engine.handles.direct_effects import _final_pass, mlp_output
from engine.lab_results import NeuronExample, NeuronExamples

EXAMPLE_SENTENCES = 400  # held-out sentences read for a layer (spread evenly over the corpus's held-out part)
MAX_TOKENS = 64  # read of each
BATCH = 16  # sentences a pass while the corpus is read
EXAMPLES = 10  # the sentences shown by default
WRITTEN = 8  # the tokens named as pushed up, and as pushed down
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Peaks:
    sentences: tuple[str, ...]  # those the model could read
    ids: tuple[tuple[int, ...], ...]  # their tokens as read
    peaks: np.ndarray  # (sentences, neurons) float32: each neuron's highest output in each sentence
    where: np.ndarray  # (sentences, neurons) int16: at which of the sentence's tokens
    sums: np.ndarray  # (neurons,) float64
    fired: np.ndarray  # (neurons,) how many tokens it was above 0 at
    tokens: int


_PEAKS: weakref.WeakKeyDictionary[Any, dict[tuple[str, int], Peaks]] = weakref.WeakKeyDictionary()
Progress = Callable[[float, str], None]


def mlp_activations(handle: Any, projection: Any, rows: list[list[int]],
                 segments: list[list[int]] | None = None) -> list[torch.Tensor]:
    """Per text of ``rows`` (token ids; one pass, right-padded where several): (its tokens, neurons), the
    projection's input at each of its tokens, float32 on the CPU (this thread's pass only: the model is shared)."""
    caught: list[torch.Tensor] = []
    owner = threading.get_ident()

    def catch(module: Any, inputs: Any) -> None:
        if threading.get_ident() == owner:
            caught.append(inputs[0].detach())

    longest = max(len(r) for r in rows)
    pad = int(getattr(handle.adapter, "pad_id", None) or 0)
    ids = [r + [pad] * (longest - len(r)) for r in rows]
    mask = [[1] * len(r) + [0] * (longest - len(r)) for r in rows]
    hook = projection.register_forward_pre_hook(catch)
    try:
        with torch.inference_mode():
            handle._forward(ids, segments, logits=False, pad_mask=None if len(rows) == 1 else mask)
    finally:
        hook.remove()
    if len(caught) != 1:
        raise Unsupported(f"{handle.name}: its MLP's output projection was not run once a pass")
    x = caught[0].float().cpu()
    x = x.reshape(len(rows), longest, x.shape[-1])  # (OPT's MLP reads the batch's tokens flattened)
    return [x[i, :len(r)] for i, r in enumerate(rows)]


def layer_peaks(handle: Any, projection: Any, layer: int, corpus: str, progress: Progress | None = None) -> Peaks:
    """``read_peaks`` of ``EXAMPLE_SENTENCES`` held-out sentences of ``corpus``, spread over it; kept for the loaded
    model, corpus and layer."""
    from engine.data.corpora import corpus_identity, spread_sample

    key = (corpus_identity(corpus), layer)
    with _LOCK:
        kept = _PEAKS.get(handle, {}).get(key)
    if kept is not None:
        return kept
    found = read_peaks(handle, projection, spread_sample(corpus, EXAMPLE_SENTENCES, "heldout"),
                       f"{handle.name}'s layer {layer + 1} MLP", progress)
    with _LOCK:
        _PEAKS.setdefault(handle, {})[key] = found
    return found


def _tokens(handle: Any, text: str) -> tuple[list[int], list[int], list[bool], bool]:
    """(ids, segments, special, cut) of a text as the model reads it, its first ``MAX_TOKENS``: any Transformer,
    with a head or without (an encoder alone, a classifier: their neurons fire all the same)."""
    ids, segments, _, special, notice = handle._encode(check_text(text))
    cut = bool(notice) or len(ids) > MAX_TOKENS
    return ids[:MAX_TOKENS], segments[:MAX_TOKENS], [bool(s) for s in special[:MAX_TOKENS]], cut


def read_peaks(handle: Any, projection: Any, sentences: list[str], what: str,
               progress: Progress | None = None) -> Peaks:
    """Every neuron's highest output in each of ``sentences`` (a repeat read once, special tokens left out; those
    the model cannot read left out), where it is, its mean and how often it is above 0; read ``BATCH`` sentences a
    pass, of like lengths. ``what``: the MLP read, as the progress and a refusal name it."""
    readable = []
    for sentence in dict.fromkeys(sentences):
        try:
            ids, _segments, special, _cut = _tokens(handle, sentence)
        except InputError:
            continue  # a sentence the model cannot read
        own = np.flatnonzero(~np.array(special, bool))
        if len(own):
            readable.append((sentence, ids, own))
    order = sorted(range(len(readable)), key=lambda i: len(readable[i][1]))  # (little padding in a batch)
    peaks = where = np.zeros((len(readable), 0), np.float32)
    sums: np.ndarray | None = None
    fired: np.ndarray | None = None
    tokens = 0
    for start in range(0, len(order), BATCH):
        check_cancelled("reading the corpus for the neuron's sentences")
        if progress is not None:
            progress(start / len(order), f"reading {what} over the corpus: sentence {start + 1:,} of {len(order):,}")
        chosen = order[start:start + BATCH]
        for i, x in zip(chosen, mlp_activations(handle, projection, [readable[i][1] for i in chosen]), strict=True):
            own = readable[i][2]
            own_x = x.numpy()[own]
            if sums is None or fired is None:
                peaks = np.zeros((len(readable), own_x.shape[1]), np.float32)
                where = np.zeros((len(readable), own_x.shape[1]), np.int16)
                sums, fired = np.zeros(own_x.shape[1]), np.zeros(own_x.shape[1], np.int64)
            top = own_x.argmax(0)
            peaks[i] = own_x[top, np.arange(own_x.shape[1])]
            where[i] = own[top]
            sums += own_x.sum(0, dtype=np.float64)
            fired += (own_x > 0).sum(0)
            tokens += own_x.shape[0]
    if sums is None or fired is None:
        raise Unsupported(f"{handle.name}: no sentence of the corpus reached {what}")
    return Peaks(tuple(r[0] for r in readable), tuple(tuple(r[1]) for r in readable), peaks, where, sums, fired,
                  tokens)


def _writes(handle: Any, projection: Any, neuron: int, width: int, example: NeuronExample, ids: list[int],
            segments: list[int]) -> tuple[tuple[tuple[str, float], ...], tuple[tuple[str, float], ...]]:
    """The tokens whose logits the neuron's output at ``example``'s peak moves most, up and down, straight through
    the final norm (its scale at that token) and the head (``width``: the MLP's neurons)."""
    readout = handle.adapter.direct_readout(handle.name)
    _out, stream, linear, _offset = _final_pass(handle, readout, ids, segments, example.peak, [])
    one = torch.zeros(2, width, dtype=stream.dtype, device=stream.device)
    one[0, neuron] = float(example.activation[example.peak])
    with torch.inference_mode():
        column = projection(one).cpu().double()
        rows = linear(column[:1] - column[1:]).to(device=stream.device, dtype=stream.dtype)
        logits = readout.head(torch.cat([rows, torch.zeros_like(rows)])).float().cpu()
    moved = (logits[0] - logits[1]).numpy().astype(np.float64)
    up, down = np.argsort(-moved)[:WRITTEN], np.argsort(moved)[:WRITTEN]
    return (tuple((handle._token_text(int(t)), float(moved[t])) for t in up),
            tuple((handle._token_text(int(t)), float(moved[t])) for t in down))


def neuron_examples(handle: Any, layer: int, neuron: int, k: int = EXAMPLES, corpus: str = "default",
                    progress: Progress | None = None) -> NeuronExamples:
    """The ``k`` held-out sentences of ``corpus`` where neuron ``neuron`` of layer ``layer``'s MLP (both from 0)
    fires most, its output at each of their tokens, and (pre-LN networks) what it writes into the logits there."""
    projection = mlp_output(handle, layer)
    k = check_k(k, 100)
    found = layer_peaks(handle, projection, int(layer), corpus, progress)
    width = found.peaks.shape[1]
    if isinstance(neuron, bool) or not isinstance(neuron, int | np.integer) or not 0 <= neuron < width:
        raise InputError(f"{handle.name}'s layer {int(layer) + 1} MLP has no neuron {neuron!r}: {width:,} neurons "
                         f"(0-{width - 1:,})")
    neuron = int(neuron)
    order = np.argsort(-found.peaks[:, neuron], kind="stable")[:k]
    examples, inputs = [], []
    for index in order:
        check_cancelled("reading the neuron's sentences")
        text = found.sentences[int(index)]
        ids, segments, special, cut = _tokens(handle, text)
        x = mlp_activations(handle, projection, [ids], [segments])[0][:, neuron].numpy()
        examples.append(NeuronExample(text, tuple(handle._token_text(i) for i in ids), tuple(special),
                                      np.where(special, 0.0, x).astype(np.float32), cut))
        inputs.append((ids, segments))
    promotes: tuple[tuple[str, float], ...] = ()
    suppresses: tuple[tuple[str, float], ...] = ()
    refusal = ""
    try:
        promotes, suppresses = _writes(handle, projection, neuron, width, examples[0], *inputs[0])
    except Unsupported as e:
        refusal = str(e)
    return NeuronExamples(int(layer), neuron, width, tuple(examples), len(found.sentences), found.tokens,
                          float(found.sums[neuron] / max(1, found.tokens)),
                          float(found.fired[neuron] / max(1, found.tokens)), corpus, promotes, suppresses, refusal)
