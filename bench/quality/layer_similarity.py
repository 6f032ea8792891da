"""Layer similarity (linear CKA) of the shipped contextual models, and how many sentences the app's figure needs.

The Layer similarity tab reads 200 held-out sentences of the default corpus by default (about 2,800 words). The
rule, declared before any figure was seen: for each pair below, the CKA table over n sentences as the app reads them
(n in COUNTS; ``api.corpus_sample("default", n=n)``, spread over the held-out part) is compared with the table over
1,000 read the same way; the default stays 200 if every entry of every pair's table at 200 is within 0.03 of its
1,000-sentence value, and is otherwise the smallest n in COUNTS whose tables all are (1,000 if none). Beside it, not part of the rule: the debiased estimate's largest difference from the plain one at
200 sentences, and the seconds each pair takes (both models read; one thread).

    python bench/quality/layer_similarity.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine import api  # noqa: E402

PAIRS = (("minilm-mlm", "all-minilm-l6-v2"), ("minilm-gpt", "all-minilm-l6-v2"), ("bert-tiny", "minilm-mlm"),
         ("gpt-tiny", "bert-tiny"), ("elmo-tiny", "bert-tiny"))
COUNTS = (100, 200, 400)
REFERENCE = 1000
TOLERANCE = 0.03


def main() -> None:
    api.one_thread_here()
    every = api.corpus_sample("default", n=REFERENCE, part="heldout")
    handles: dict[str, object] = {}
    rows, worst = [], {n: 0.0 for n in COUNTS}
    for a, b in PAIRS:
        for name in (a, b):
            if name not in handles:
                handles[name] = api.load(name)
        ha, hb = handles[a], handles[b]
        reference = api.layer_similarity(ha, hb, every).cka
        gaps = {}
        for n in COUNTS:
            sample = api.corpus_sample("default", n=n, part="heldout")
            gaps[n] = float(np.nanmax(np.abs(api.layer_similarity(ha, hb, sample).cka - reference)))
            worst[n] = max(worst[n], gaps[n])
        sample = api.corpus_sample("default", n=200, part="heldout")
        api.forget_read_words()  # timed from a cold read of both models' words
        start = time.perf_counter()
        plain = api.layer_similarity(ha, hb, sample)
        seconds = time.perf_counter() - start
        debiased = api.layer_similarity(ha, hb, sample, debiased=True)
        bias = float(np.nanmax(np.abs(plain.cka - debiased.cka)))
        diagonal = ", ".join(f"{v:.2f}" for v in np.diag(plain.cka)) if plain.cka.shape[0] == plain.cka.shape[1] else "—"
        rows.append(f"| {a} × {b} | {plain.cka.shape[0]} × {plain.cka.shape[1]} | {diagonal} | "
                    + " | ".join(f"{gaps[n]:.3f}" for n in COUNTS) + f" | {bias:.3f} | {seconds:.1f} |")
        print(rows[-1], flush=True)
    steady = [n for n in COUNTS if worst[n] <= TOLERANCE]
    chosen = 200 if 200 in steady else (steady[0] if steady else REFERENCE)
    body = "\n".join([
        "## Layer similarity of the shipped models, and how many sentences it needs", "", f"Machine: {machine()}", "",
        "`python bench/quality/layer_similarity.py`. Linear CKA of every layer of A with every layer of B over the "
        "words of held-out sentences of the default corpus (`api.layer_similarity`, the Layer similarity tab). The "
        f"rule, declared before the figures (the script's docstring): the default of 200 sentences stays if every "
        f"entry of every pair's table at 200 is within {TOLERANCE} of its value over {REFERENCE:,} sentences; else "
        f"the smallest of {', '.join(map(str, COUNTS))} that is. Columns \"n = …\": the largest such difference of "
        "the pair's table; \"debiased\": the largest difference of the debiased estimate from the plain one at 200; "
        "seconds: both models reading 200 sentences and the table, one thread.", "",
        "| A × B | layers | diagonal (same depth), 200 sentences | "
        + " | ".join(f"n = {n}" for n in COUNTS) + " | debiased | seconds |",
        "|---|---|---|" + "---:|" * (len(COUNTS) + 2), *rows, "",
        f"Largest difference from {REFERENCE:,} sentences over every pair: "
        + ", ".join(f"{worst[n]:.3f} at {n}" for n in COUNTS) + f". **Chosen: {chosen} sentences**"
        + (" (the default stays)." if chosen == 200 else " (the default changes).")])
    print(body)
    write_section("layer-similarity", body, __file__)


if __name__ == "__main__":
    main()
