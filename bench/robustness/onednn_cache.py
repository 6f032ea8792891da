"""How many compiled kernels the window keeps: the capacity of oneDNN's primitive cache and of ideep's.

torch runs a packed linear layer (engine/models/packed_linear.py) through oneDNN, which compiles a kernel (a
"primitive") for every shape it meets. Two caches keep them, each its last 1,024 by default, for good: oneDNN's own
(``ONEDNN_PRIMITIVE_CACHE_CAPACITY``) and ideep's, torch's layer over oneDNN, which holds the primitive objects it
made (``LRU_CACHE_CAPACITY``). A primitive is freed only when neither holds it. On an Intel Xeon (AVX-512, AMX) an
inner product's primitive keeps about 280 kB, and a shape met for the first time kept about 560 kB (its primitive in
each cache): 112 shapes of linear layers kept 62 MB, and with only oneDNN's cache capped at 16, still 33 MB
(the forty-fourth session's probe). A model query's shape follows the length of its text (rounded to a few row
counts: ``row_bucket``), so the window's queries meet tens of shapes per model, and what the caches hold grows with
the models and lengths used, up to their capacity: in the chaos bench's window, ~280 primitives after the warm-up
and ~70 more in the next six minutes (``ONEDNN_VERBOSE=profile_create``). This bench measures, for each capacity
(both caches set to it), in a fresh process (each library reads it once), one torch thread:

* two passes of the same ``--queries`` queries (contextual vectors of a random model among bert-tiny, gpt-tiny,
  minilm-mlm and minilm-gpt, on texts of 2-300 words): the time of each pass (the second meets shapes seen in the
  first: what a small cache costs is compiling them again);
* the anonymous RSS after each pass and ``api.release_memory()``, against that after one query per model.

How the window's capacity is chosen (declared before the first run, the sixteenth session's rule, now for both
caches): the smallest capacity whose second pass takes at most 5% longer than the default's (medians over the
rounds), adopted only if the memory it keeps after the second pass is at least 30 MB below the default's; otherwise
the libraries' defaults stay. (The sixteenth session capped oneDNN's cache alone: ideep's kept the primitives, and
64 kept only 30 MB less.)

    python bench/robustness/onednn_cache.py [--queries 500] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

CAPACITIES = {"the defaults (1,024 each)": None, "256": 256, "128": 128, "64": 64}
MODELS = ("bert-tiny", "gpt-tiny", "minilm-mlm", "minilm-gpt")
WORDS = ["the", "river", "bank", "was", "muddy", "after", "the", "rain", "and", "the", "children", "played", "by", "the", "water", "while", "their", "parents", "put", "money", "in", "the", "bank", "in", "town", "before", "the", "match", "began", "on", "the", "green", "field"]
SLOWER_AT_MOST = 1.05
KEPT_LESS_BY_MB = 30.0


def one(queries: int) -> dict[str, float]:
    import time

    import torch

    from bench.robustness.memory import rss_parts_mb
    from engine import api

    torch.set_num_threads(1)
    handles = [api.load(name) for name in MODELS]

    def anon() -> float:
        api.release_memory()
        time.sleep(0.3)
        return rss_parts_mb()["anon"]

    for handle in handles:
        handle.contextual_vectors("the bank")
    out = {"start": anon()}
    rng = random.Random(11)
    plan = [(rng.randrange(len(handles)), rng.randint(2, 300)) for _ in range(queries)]
    for pass_ in (1, 2):
        t0 = time.perf_counter()
        for which, n in plan:
            handles[which].contextual_vectors(" ".join(WORDS[i % len(WORDS)] for i in range(n)))
        out[f"pass{pass_}"] = time.perf_counter() - t0
        out[f"kept{pass_}"] = anon() - out["start"]
    return out


def run(capacity: int | None, queries: int) -> dict[str, float]:
    env = dict(os.environ)
    from explorer.worker_threads import KERNEL_CACHES

    for name in KERNEL_CACHES:
        env.pop(name, None)
        if capacity is not None:
            env[name] = str(capacity)
    from bench.robustness.fresh_process import in_fresh_process

    return in_fresh_process("bench.robustness.onednn_cache", f"one({queries})", env, str(capacity), timeout_s=3600)


def main() -> None:
    from bench._report import machine, write_section

    p = argparse.ArgumentParser()
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    from bench.robustness.fresh_process import alternating_rounds

    results = alternating_rounds(list(CAPACITIES), args.rounds, lambda name: run(CAPACITIES[name], args.queries))

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in results[name])

    default = next(iter(CAPACITIES))
    fast = [n for n in CAPACITIES if med(n, "pass2") <= SLOWER_AT_MOST * med(default, "pass2")]
    smallest = min(fast, key=lambda n: CAPACITIES[n] or 1024)
    chosen = smallest if med(smallest, "kept2") <= med(default, "kept2") - KEPT_LESS_BY_MB else default
    lines = ["## The compiled kernels' caches in the window (oneDNN's and ideep's)", "", f"Machine: {machine()}", "",
             f"`python bench/robustness/onednn_cache.py --queries {args.queries} --rounds {args.rounds}`: each "
             f"capacity (both `ONEDNN_PRIMITIVE_CACHE_CAPACITY` and `LRU_CACHE_CAPACITY`) in a fresh process, one torch thread, {args.rounds} rounds "
             f"alternating (the order reversed every other round); medians over the rounds. Two passes of the same "
             f"{args.queries} queries: contextual vectors of a random model among {', '.join(MODELS)}, on texts of "
             f"2-300 words. The rule, declared before the first run: the smallest capacity whose second pass takes at "
             f"most {SLOWER_AT_MOST - 1:.0%} longer than the default's, adopted only if what it keeps after the second "
             f"pass is at least {KEPT_LESS_BY_MB:.0f} MB below the default's.", "",
             "| capacity | first pass | second pass | anonymous memory kept after the first pass | after the second |",
             "|---|---:|---:|---:|---:|"]
    for name in CAPACITIES:
        lines.append(f"| {name}{' (chosen)' if name == chosen else ''} | {med(name, 'pass1'):.1f} s | "
                     f"{med(name, 'pass2'):.1f} s | {med(name, 'kept1'):,.0f} MB | {med(name, 'kept2'):,.0f} MB |")
    lines += ["", f"Chosen by the rule: **{chosen}**."]
    text = "\n".join(lines)
    print(text)
    write_section("onednn-cache", text)


if __name__ == "__main__":
    main()
