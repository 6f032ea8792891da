"""The heads page's two measures side by side: each head's direct effect on the logits (one pass) against its
knock-out (a pass per head). Declared before the results, nothing is chosen here (the lab shows both):

1. per layer, how far the two agree across the heads of that layer (Spearman's ρ over every question's heads, and
   the share of questions whose strongest head by the knock-outs is the strongest by direct effect too) — the
   last layer's heads reach the logits only through the last MLP and the final norm, so there they should agree
   most; a lower layer's heads act also through the layers above them, which direct effects do not see;
2. the 3 heads each measure scores highest, knocked out together (to their means over the text's tokens, as the
   lab does): what that costs the model's own prediction (the fall of log P, nats), against 3 heads drawn at random
   (the mean of 5 draws) — whether the one-pass measure finds heads the prediction needs.

The same questions as bench/quality/head_knockouts.py (held-out sentences of the default corpus, a content word
with three words before it, the words before it given; the model's own top word explained, without a foil: direct
effects on its logit above the mean logit, knock-outs on its log P). Pre-LN models only (gpt-tiny ships; BERT's
post-LN blocks have no direct effects).

    python bench/quality/direct_effects.py [--models gpt-tiny] [--n 100]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import loaded_models, machine, write_section  # noqa: E402
from bench.quality.attribution_faithfulness import questions  # noqa: E402

K = 3
RANDOM_DRAWS = 5


def one(handle, text: str, rng: random.Random) -> dict[str, Any]:
    """For one question: both tables, and the fall of log P(the model's word) with the top K heads by each knocked
    out together, and K at random."""
    from engine import api
    from engine.handles.head_ablation import knocked_out
    from engine.handles.lens import _inputs, prediction_position

    result = api.head_ablation(handle, text)
    assert result.direct is not None, result.direct_refusal
    layers, heads = result.effect.shape
    cells = [(layer, h) for layer in range(layers) for h in range(heads)]

    def top(table: np.ndarray) -> list[tuple[int, int]]:
        return [divmod(int(i), heads) for i in np.argsort(-table, axis=None)[:K]]

    groups = [top(result.effect), top(result.direct.effect)] + [rng.sample(cells, K) for _ in range(RANDOM_DRAWS)]
    ids, segments, _, _ = _inputs(handle, text, 128)
    position = prediction_position(handle, ids, "no [MASK]")
    clean, logp = knocked_out(handle, ids, segments, position, groups)
    target = int(clean.argmax())
    fall = [float(clean[target] - logp[i, target]) for i in range(len(groups))]
    return {"knockout": result.effect, "direct": result.direct.effect, "by knock-outs": fall[0],
            "by direct effects": fall[1], "random": float(np.mean(fall[2:]))}


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


def main() -> None:
    from engine import api

    p = argparse.ArgumentParser()
    p.add_argument("--models", default="gpt-tiny")
    p.add_argument("--n", type=int, default=100, help="held-out sentences asked (before the questions are drawn)")
    args = p.parse_args()
    sentences = api.corpus_sample("default", args.n, "heldout")
    layer_rows, pick_rows = [], []
    t0 = time.perf_counter()
    for name, handle in loaded_models(args.models.split(",")):
        rng = random.Random(0)
        per = [one(handle, q, rng) for q in questions(sentences, masked=False)]
        knockout = np.stack([r["knockout"] for r in per])  # (questions, layers, heads)
        direct = np.stack([r["direct"] for r in per])
        layers, heads = knockout.shape[1:]
        for layer in range(layers):
            a, b = knockout[:, layer].ravel(), direct[:, layer].ravel()
            same = float(np.mean(knockout[:, layer].argmax(1) == direct[:, layer].argmax(1)))
            layer_rows.append(f"| {name} | {layer + 1} | {len(per)} × {heads} | {spearman(a, b):+.2f} | {same:.0%} | "
                              f"{float(np.mean(np.abs(a))):.3f} | {float(np.mean(np.abs(b))):.3f} |")
            print(layer_rows[-1], flush=True)
        everywhere = spearman(knockout.reshape(len(per), -1).ravel(), direct.reshape(len(per), -1).ravel())
        means = {key: float(np.mean([r[key] for r in per])) for key in ("by knock-outs", "by direct effects", "random")}
        beats = float(np.mean([r["by direct effects"] > r["random"] for r in per]))
        pick_rows.append(f"| {name} | {len(per)} | {everywhere:+.2f} | {means['by knock-outs']:+.3f} | "
                         f"{means['by direct effects']:+.3f} | {means['random']:+.3f} | {beats:.0%} |")
        print(pick_rows[-1], flush=True)
    body = "\n".join([
        "## Direct effects against knock-outs: the heads page's two measures", "",
        f"`python bench/quality/direct_effects.py --models {args.models} --n {args.n}`: {args.n} held-out sentences, "
        "one question each (the words before a content word; the model's own next word explained, no foil). Each "
        "head's direct effect (on the word's logit above the mean logit: what it writes straight into the logits) "
        "against its knock-out (the fall of log P with its output replaced by its mean over the text's tokens). "
        "Declared before the results; nothing is chosen by them. Per layer: Spearman's ρ between the two over every "
        "question's heads of that layer, and how often the strongest head by the knock-outs is the strongest by "
        f"direct effect too; mean |effect| of each. {time.perf_counter() - t0:.0f} s. Machine: {machine()}", "",
        "| model | layer | questions × heads | ρ | same strongest head | mean \\|knock-out\\| | mean \\|direct\\| |",
        "|---|---:|---:|---:|---:|---:|---:|", *layer_rows, "",
        f"The {K} heads each measure scores highest, knocked out together: the fall of log P(the model's word) "
        f"(nats), against {K} drawn at random ({RANDOM_DRAWS} draws, their mean); ρ over every head of every question.",
        "", f"| model | questions | ρ, all heads | top {K} by knock-outs | top {K} by direct effects | random {K} | "
        "direct's top beats random |", "|---|---:|---:|---:|---:|---:|---:|", *pick_rows])
    print(body)
    write_section("direct-effects", body)


if __name__ == "__main__":
    main()
