"""Can the lab's heads table be trusted? Each cell is what knocking one head out costs the prediction; a researcher
then reads the few heads it scores highest as the ones the prediction needs. Checked here: knocking out the k
heads the table scores highest *together* (k = 1, 3, 6) costs the model's own prediction more than knocking out
k heads drawn at random (the mean of 5 draws) or the k it scores lowest; and how far one-at-a-time effects add up
(the top k's summed single effects against their joint cost). Nothing is chosen here: the lab shows the table.

The same questions as the attribution bench (bench/quality/attribution_faithfulness.py): held-out sentences of the
default corpus, one word per sentence drawn with a fixed seed among its content words with three words before
them, as [MASK] for a masked LM and as the words before it for a left-to-right LM; the explained prediction is the
model's own top one there. The cost is the fall of log P(that word).

    python bench/quality/head_knockouts.py [--models minilm-mlm,bert-tiny,minilm-gpt,gpt-tiny] [--n 100]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import loaded_models, machine, write_section  # noqa: E402
from bench.quality.attribution_faithfulness import questions  # noqa: E402

KS = (1, 3, 6)
RANDOM_DRAWS = 5


def costs(handle, text: str, rng: random.Random, mean_over: str = "text") -> dict[str, float]:
    """For one question: the fall of log P(the model's word) with the top, random and bottom k heads knocked out
    together, and the top k's summed single effects."""
    from engine import api
    from engine.handles.head_ablation import _means, knocked_out
    from engine.handles.lens import _inputs, prediction_position

    result = api.head_ablation(handle, text, mean_over=mean_over)
    layers, heads = result.effect.shape
    order = [divmod(int(i), heads) for i in np.argsort(-result.effect, axis=None)]
    ids, segments, _, _ = _inputs(handle, text, 128)
    position = prediction_position(handle, ids, "no [MASK]")
    cells = [(layer, h) for layer in range(layers) for h in range(heads)]
    groups, names = [], []
    for k in KS:
        groups += [order[:k], order[-k:]]
        names += [f"top {k}", f"bottom {k}"]
        for d in range(RANDOM_DRAWS):
            groups.append(rng.sample(cells, k))
            names.append(f"random {k} #{d}")
    clean, logp = knocked_out(handle, ids, segments, position, groups, _means(handle, mean_over))
    target_id = int(clean.argmax())  # (the prediction the table explains: the model's own)
    fall = {name: float(clean[target_id] - logp[i, target_id]) for i, name in enumerate(names)}
    out: dict[str, float] = {}
    for k in KS:
        out[f"top {k}"] = fall[f"top {k}"]
        out[f"bottom {k}"] = fall[f"bottom {k}"]
        out[f"random {k}"] = float(np.mean([fall[f"random {k} #{d}"] for d in range(RANDOM_DRAWS)]))
        out[f"summed {k}"] = float(sum(result.effect[layer, h] for layer, h in order[:k]))
    return out


def main() -> None:
    from engine import api

    p = argparse.ArgumentParser()
    p.add_argument("--models", default="minilm-mlm,bert-tiny,minilm-gpt,gpt-tiny")
    p.add_argument("--n", type=int, default=100, help="held-out sentences asked (before the questions are drawn)")
    p.add_argument("--mean-over", choices=("text", "corpus"), default="text",
                   help="what a knocked-out head is replaced by (the lab's choice): its mean over the text's tokens, "
                        "or over held-out sentences of the corpus")
    args = p.parse_args()
    sentences = api.corpus_sample("default", args.n, "heldout")
    rows = []
    t0 = time.perf_counter()
    for name, handle in loaded_models(args.models.split(",")):
        masked = handle.adapter.objective == "masked"
        rng = random.Random(0)
        per = [costs(handle, q, rng, args.mean_over) for q in questions(sentences, masked)]
        mean = {key: float(np.mean([c[key] for c in per])) for key in per[0]}
        beats = {k: float(np.mean([c[f"top {k}"] > c[f"random {k}"] for c in per])) for k in KS}
        layers, heads = handle.adapter.n_layers, handle.info["heads"]
        for k in KS:
            rows.append(f"| {name} | {layers} × {heads} | {len(per)} | {k} | {mean[f'top {k}']:+.3f} | "
                        f"{mean[f'random {k}']:+.3f} | {mean[f'bottom {k}']:+.3f} | {beats[k]:.0%} | "
                        f"{mean[f'summed {k}']:+.3f} |")
            print(rows[-1], flush=True)
    corpus = args.mean_over == "corpus"
    body = "\n".join([
        "## The heads table" + (" knocked out to the corpus's means" if corpus else "") + ": do the heads it scores "
        "highest matter most together?", "",
        f"`python bench/quality/head_knockouts.py --models {args.models} --n {args.n}"
        + (" --mean-over corpus" if corpus else "") + f"`: {args.n} held-out sentences, "
        "one question each (a content word as [MASK] for a masked LM, the words before it for a left-to-right LM), "
        "the model's own prediction explained; the k heads the lab's table scores highest knocked out together "
        + ("(their outputs replaced by their means over 128 held-out sentences of the corpus)" if corpus
           else "(their outputs replaced by their means over the text's tokens)")
        + f", against k drawn at random ({RANDOM_DRAWS} "
        "draws, their mean) and the k it scores lowest. Cost: the fall of log P(the predicted word) (nats; "
        "negative: it rose). \"summed\": the top k's one-at-a-time effects added up — near the joint cost where "
        f"heads act on their own, apart where they stand in for each other. {time.perf_counter() - t0:.0f} s.",
        f"Machine: {machine()}", "",
        "| model | layers × heads | questions | k | top k | random k | bottom k | top k beats random | summed top k |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|", *rows])
    print(body)
    write_section("head-knockouts-corpus" if corpus else "head-knockouts", body)


if __name__ == "__main__":
    main()
