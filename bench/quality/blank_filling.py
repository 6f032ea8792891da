"""Filling a blank along the lineage: ELMo (its forward LM's guess from the words before the blank, its backward
LM's from the words after it, and the two multiplied: engine/handles/elmo_blank.py) beside the masked LMs, on the
same blanks — the bundled cloze set (engine/data/sets, one [MASK] each) and one random word masked in each of the
first 1,000 held-out sentences of the default corpus (seeded, letters only; the Model quality section's figures
for the masked LMs, from the same function). What the backward LM adds to the forward one is read word by word:
the difference of the two top-10 hit rates on the same masked words, with a 95% bootstrap interval over them.
Nothing is chosen here.

    python bench/quality/blank_filling.py [--models elmo-tiny,bert-tiny,minilm-mlm] [--sentences 1000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import loaded_models, machine, write_section  # noqa: E402
from engine import api  # noqa: E402
from engine.handles.elmo_blank import elmo_fill_mask  # noqa: E402
from engine.inspection.quality import cloze_items, cloze_scores, masked_word_hits  # noqa: E402

SIDES = {"before": "forward LM alone (the words before)", "after": "backward LM alone (the words after)",
         "both": "both multiplied, the prior divided out (the app's)"}
BOOTSTRAP = 2000


class ElmoBlank:
    """An ELMo handle that fills a blank one given way (``elmo_fill_mask``'s options: one side alone, or the plain
    product): what the cloze functions ask of a model."""

    def __init__(self, handle: Any, **way: Any) -> None:
        self.handle, self.way = handle, way
        self.capabilities = handle.capabilities

    def fill_mask(self, text: str, k: int = 10) -> Any:
        return elmo_fill_mask(self.handle, text, k, **self.way)


def interval(a: np.ndarray, b: np.ndarray, seed: int = 0) -> tuple[float, float, float]:
    """Mean of a − b (hits, word by word) and its 95% bootstrap interval over the words."""
    diff = a.astype(np.float64) - b.astype(np.float64)
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), (BOOTSTRAP, len(diff)))].mean(1)
    return float(diff.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="elmo-tiny,bert-tiny,minilm-mlm")
    p.add_argument("--sentences", type=int, default=1000)
    args = p.parse_args()
    held = [s for s in api.corpus_sample("default", n=100_000, part="heldout")][: args.sentences]
    rows, lead = [], ""
    for name, handle in loaded_models(args.models.split(",")):
        askers = ([(f"{name}: {SIDES[s]}", ElmoBlank(handle, sides=s)) for s in SIDES] if handle.kind == "elmo"
                  else [(f"{name} (masked LM)", handle)])
        hits = {}
        for label, asker in askers:
            start = time.perf_counter()
            cloze = cloze_scores(asker)
            top1, top10 = masked_word_hits(asker, held)
            hits[label] = top10
            seconds = time.perf_counter() - start
            rows.append(f"| {label} | {cloze['cloze_top1']:.3f} / {cloze['cloze_top10']:.3f} | {top1.mean():.3f} / "
                        f"{top10.mean():.3f} | {len(top1):,} | {seconds:.0f} s |")
            print(rows[-1], flush=True)
        if handle.kind == "elmo":
            both, before, after = (hits[f"{name}: {SIDES[s]}"] for s in ("both", "before", "after"))
            d, lo, hi = interval(both, before)
            d2, lo2, hi2 = interval(both, after)
            lead += (f" {name}: both sides against the forward LM alone, top-10 {d:+.3f} (95% interval "
                     f"{lo:+.3f} to {hi:+.3f}); against the backward LM alone {d2:+.3f} ({lo2:+.3f} to {hi2:+.3f}).")
    body = "\n".join([
        "## Filling a blank along the lineage", "", f"Machine: {machine()}", "",
        f"`python bench/quality/blank_filling.py --models {args.models} --sentences {args.sentences}`. The same blanks "
        f"for every model: the bundled cloze set ({len(cloze_items())} sentences, an accepted answer first / in the top "
        f"10) and one random word (letters only, seed 0) masked in each of the first {args.sentences:,} held-out "
        "sentences of four words or more (first / in the top 10; a word the vocabulary spells only in pieces is a "
        "miss). ELMo has no masked LM: the app fills its blank with the forward LM's guess from the words before it "
        "times the backward LM's from the words after it, divided by the word's frequency in training (Bayes' rule "
        "were the sides independent given the word; chosen on other blanks: bench/studies/RESULTS.md, \"ELMo's blank\"; "
        "engine/handles/elmo_blank.py); each LM alone is shown too. The "
        "masked LMs' held-out figures are the Model quality section's (the same function and seed)." + lead, "",
        "| model | cloze top-1 / top-10 | held-out masked word top-1 / top-10 | words | time |",
        "|---|---:|---:|---:|---:|", *rows])
    print(body)
    write_section("blank-filling", body)


if __name__ == "__main__":
    main()
