"""Are 400 sentences enough to say what makes a neuron fire? The neuron window (explorer/widgets/neuron_window.py)
shows a neuron's 12 highest sentences of ``EXAMPLE_SENTENCES`` = 400 held-out sentences of the default corpus. If
that sample is enough, another sample of as many sentences shows the same neuron firing at the same tokens.

Measured: for each model and layer, 100 neurons drawn at random (seed 0); two disjoint samples of N held-out
sentences each (the even and odd sentences of 2N spread over the held-out part); in each, the tokens at which the
neuron's 12 highest sentences peak (lower-cased, spaces stripped). **Agreement**: the share of neurons whose most
frequent peak token in sample A is among the peak tokens of sample B. **Chance**: the same with sample B's tokens of
another neuron of the layer (a random pairing) — how often two unrelated neurons' tokens meet (common words).

Declared before the results (session 88), on gpt-tiny and minilm-mlm, every layer, N = 400 and N = 800 in one run:
400 stays if its agreement, over all layers of both models, is at least 60% and at least 3 times chance. Otherwise
800 becomes the window's sample if it raises the agreement by 10 points or more; if it does not, 400 stays (more
sentences do not help: those neurons do not fire at one token, and the window shows them as they are).

    python bench/quality/neuron_examples.py [--models gpt-tiny,minilm-mlm] [--neurons 100]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import loaded_models, machine, write_section  # noqa: E402

SHOWN = 12  # the window's sentences
SIZES = (400, 800)


def peak_tokens(handle, peaks, neuron: int) -> list[str]:
    """The tokens at which the neuron's ``SHOWN`` highest sentences of a table peak."""
    order = np.argsort(-peaks.peaks[:, neuron], kind="stable")[:SHOWN]
    return [handle._token_text(peaks.ids[i][int(peaks.where[i, neuron])]).strip().lower() for i in order]


def measure(handle, layer: int, size: int, neurons: int) -> tuple[float, float, float]:
    """(agreement, chance, share of the drawn neurons never above 0 in sample A) for one layer and sample size."""
    from engine.data.corpora import spread_sample
    from engine.handles.direct_effects import mlp_outputs
    from engine.handles.neuron_examples import read_peaks

    sentences = spread_sample("default", 2 * size, "heldout")
    projection = mlp_outputs(handle)[layer]
    a = read_peaks(handle, projection, sentences[0::2], f"layer {layer + 1}")
    b = read_peaks(handle, projection, sentences[1::2], f"layer {layer + 1}")
    rng = np.random.default_rng(layer)
    drawn = rng.choice(a.peaks.shape[1], min(neurons, a.peaks.shape[1]), replace=False)
    others = np.roll(drawn, 1)  # (each paired with another drawn neuron of the layer)
    agree = chance = 0
    for n, m in zip(drawn, others, strict=True):
        mode = Counter(peak_tokens(handle, a, int(n))).most_common(1)[0][0]
        agree += mode in set(peak_tokens(handle, b, int(n)))
        chance += mode in set(peak_tokens(handle, b, int(m)))
    dead = float(np.mean(a.fired[drawn] == 0))
    return agree / len(drawn), chance / len(drawn), dead


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="gpt-tiny,minilm-mlm")
    p.add_argument("--neurons", type=int, default=100, help="neurons drawn per layer")
    args = p.parse_args()
    from engine.handles.direct_effects import mlp_outputs

    rows: list[str] = []
    totals: dict[int, list[tuple[float, float]]] = {size: [] for size in SIZES}
    t0 = time.perf_counter()
    for name, handle in loaded_models(args.models.split(",")):
        for layer in range(len(mlp_outputs(handle))):
            cells, dead = [], 0.0
            for size in SIZES:
                agree, chance, never = measure(handle, layer, size, args.neurons)
                dead = never if size == 400 else dead
                totals[size].append((agree, chance))
                cells.append(f"{agree:.0%} | {chance:.0%}")
            rows.append(f"| {name} | {layer + 1} | {' | '.join(cells)} | {dead:.0%} |")
            print(rows[-1], flush=True)
    means = {size: (float(np.mean([a for a, _ in v])), float(np.mean([c for _, c in v]))) for size, v in totals.items()}
    (a400, c400), (a800, _) = means[400], means[800]
    if a400 >= 0.6 and a400 >= 3 * c400:
        verdict = f"400 stays: {a400:.0%} agreement, {a400 / max(c400, 1e-9):.1f} times chance ({c400:.0%})."
    elif a800 - a400 >= 0.10:
        verdict = f"800 becomes the window's sample: {a800:.0%} against {a400:.0%} at 400."
    else:
        verdict = (f"400 stays: {a400:.0%} agreement ({c400:.0%} by chance), and 800 sentences raise it by "
                   f"{(a800 - a400) * 100:+.0f} points only.")
    body = "\n".join([
        "## A neuron's sentences: are 400 enough", "",
        f"`python bench/quality/neuron_examples.py --models {args.models} --neurons {args.neurons}`: for each layer, "
        f"{args.neurons} neurons drawn at random; two disjoint samples of N held-out sentences of the default corpus "
        f"(the even and odd ones of 2N spread over it); the tokens where each neuron's {SHOWN} highest sentences of "
        "a sample peak (the window's view). Agreement: the share of neurons whose most frequent peak token in sample "
        "A is among their peak tokens in sample B; chance: the same against another drawn neuron's in B. Rule "
        "declared before the results (the docstring): 400 stays at ≥ 60% agreement and ≥ 3 times chance over "
        "every layer of both models; else 800 if it adds ≥ 10 points; else 400. "
        f"{time.perf_counter() - t0:.0f} s. Machine: {machine()}", "",
        "| model | layer | agreement, N = 400 | chance | agreement, N = 800 | chance | never above 0 (N = 400) |",
        "|---|---:|---:|---:|---:|---:|---:|", *rows, "",
        f"Over every layer: N = 400 {a400:.0%} ({c400:.0%} by chance), N = 800 {a800:.0%} ({means[800][1]:.0%}). "
        f"**{verdict}**"])
    print(body)
    write_section("neuron-examples", body)


if __name__ == "__main__":
    main()
