"""Cosine around a centre: which way of comparing two occurrences of a word tells its senses apart best, by the rule
declared in bench/studies/RESULTS.md ("Cosine around a centre", before any result): leave-one-out 1-NN sense
accuracy on the development sense set, each model at the layer the polysemy lens opens it at, for four ways —
raw cosine, centred (the layer's mean token vector over a sample of the default corpus removed), standardised
(centred, each dimension divided by its spread), word-centred (the mean of the word's own corpus occurrences removed).
The test sense set is scored after the choice, for the record.

    python bench/studies/centring.py [--models elmo-tiny,gpt-tiny,...] [--sentences 400]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from bench._report import loaded_models, machine, write_section  # noqa: E402
from engine import api  # noqa: E402
from engine.inspection.quality import (  # noqa: E402
    _by_word,
    _leave_one_out,
    _occurrence,
    sense_dev_items,
    sense_items,
)

MODELS = ("elmo-tiny", "gpt-tiny", "bert-tiny", "minilm-gpt", "minilm-mlm", "all-minilm-l6-v2")
WAYS = ("raw", "centred", "standardised", "word-centred")
GAIN, LOSS = 0.02, 0.02  # the declared rule's margins


def token_stats(handle, layer: int, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The mean and spread of every word's vector at ``layer`` over ``sentences`` (dim,), (dim,)."""
    rows = []
    for start in range(0, len(sentences), 32):
        for cv in handle.contextual_vectors_batch(sentences[start : start + 32]):
            rows.append(np.asarray(cv.vectors[layer], np.float64))  # (words, dim)
    tokens = np.concatenate(rows)
    return tokens.mean(0), tokens.std(0) + 1e-6


def scores(handle, layer: int, items, mean: np.ndarray, spread: np.ndarray) -> dict[str, np.ndarray]:
    """Per way, per word of ``items``: (right, counted) rows of the leave-one-out choice."""
    out: dict[str, list[tuple[float, int]]] = {w: [] for w in WAYS}
    for word, group in _by_word(items).items():
        rows, senses = [], []
        for item in group:
            cv = handle.contextual_vectors(item.sentence)
            k = _occurrence(cv.words, word)
            if k >= 0:
                rows.append(np.asarray(cv.vectors[layer, k], np.float64))
                senses.append(item.sense)
        if len(rows) < 3:
            continue
        v = np.stack(rows)
        occ = api.word_occurrences(handle, word)
        word_mean = occ.layer_vectors(layer).astype(np.float64).mean(0) if len(occ.sentences) else np.zeros_like(mean)
        ways = {"raw": v, "centred": v - mean, "standardised": (v - mean) / spread, "word-centred": v - word_mean}
        for way, x in ways.items():
            out[way].append(_leave_one_out(x, senses))
    return {w: np.array(r, np.float64) for w, r in out.items()}  # (words, 2)


def accuracy(rc: np.ndarray) -> float:
    return float(rc[:, 0].sum() / rc[:, 1].sum())


def gain_interval(per_model: list[dict[str, np.ndarray]], way: str, draws: int = 2000) -> tuple[float, float, float]:
    """The mean over models of (way − raw), and its 95% interval over a bootstrap of the set's words (the same words
    drawn for every model: they share the sentences)."""
    words = len(per_model[0]["raw"])
    picks = np.random.default_rng(0).integers(0, words, (draws, words))
    gains = np.zeros(draws)
    for m in per_model:
        a, r = m[way][picks], m["raw"][picks]  # (draws, words, 2)
        gains += a[..., 0].sum(1) / a[..., 1].sum(1) - r[..., 0].sum(1) / r[..., 1].sum(1)
    gains /= len(per_model)
    point = float(np.mean([accuracy(m[way]) - accuracy(m["raw"]) for m in per_model]))
    low, high = np.quantile(gains, [0.025, 0.975])
    return point, float(low), float(high)


def choose(per_model: list[dict[str, np.ndarray]]) -> tuple[str, dict[str, tuple[float, float, float]]]:
    """The declared rule: the best way whose mean gain over raw is ≥ GAIN with its interval above 0 and that costs no
    model more than LOSS; raw where none does."""
    gains = {w: gain_interval(per_model, w) for w in WAYS[1:]}
    fit = [w for w, (g, low, _) in gains.items()
           if g >= GAIN and low > 0 and all(accuracy(m[w]) >= accuracy(m["raw"]) - LOSS for m in per_model)]
    return (max(fit, key=lambda w: gains[w][0]) if fit else "raw"), gains


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    index = api.word_index("default")
    picks = np.linspace(0, len(index) - 1, args.sentences).astype(np.int64)
    sample = [index.sentence(int(i)) for i in picks]
    dev, test = sense_dev_items(), sense_items()
    names, dev_scores, test_scores, layers = [], [], [], []
    for name, handle in loaded_models(args.models.split(",")):
        layer = api.sense_layer(handle.info)
        mean, spread = token_stats(handle, layer, sample)
        dev_scores.append(scores(handle, layer, dev, mean, spread))
        test_scores.append(scores(handle, layer, test, mean, spread))
        names.append(name)
        layers.append(layer)
        print(name, layer, {w: round(accuracy(s), 3) for w, s in dev_scores[-1].items()}, flush=True)
        del handle
        api.release_memory()
    way, gains = choose(dev_scores)
    lines = [f"`python bench/studies/centring.py` (rule above; {args.sentences} corpus sentences for the centre and "
             "spread, up to 300 corpus occurrences of each word for its own centre).", f"Machine: {machine()}", "",
             "| model (layer) | " + " | ".join(f"dev: {w}" for w in WAYS) + " | " + " | ".join(f"test: {w}" for w in WAYS) + " |",
             "|---|" + "---:|" * (2 * len(WAYS))]
    for name, layer, d, t in zip(names, layers, dev_scores, test_scores, strict=True):
        lines.append(f"| {name} ({layer}) | " + " | ".join(f"{accuracy(d[w]):.3f}" for w in WAYS) + " | "
                     + " | ".join(f"{accuracy(t[w]):.3f}" for w in WAYS) + " |")
    lines.append("| **mean** | " + " | ".join(f"{np.mean([accuracy(d[w]) for d in dev_scores]):.3f}" for w in WAYS) + " | "
                 + " | ".join(f"{np.mean([accuracy(t[w]) for t in test_scores]):.3f}" for w in WAYS) + " |")
    lines.append("")
    lines.append("Mean gain over raw on the development set (95% interval over its words): "
                 + "; ".join(f"{w} {g:+.3f} ({low:+.3f} to {high:+.3f})" for w, (g, low, high) in gains.items())
                 + f". **Chosen by the rule: {way}.**")
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section("centring", "## Cosine around a centre: the results\n\n" + body)


if __name__ == "__main__":
    main()
