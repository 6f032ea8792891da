"""A neighbour search of GloVe 6B-50d (400,000 × 50) from its unit rows in huge pages or in 4 kB pages, side by side
in one process: the matrix as numpy marks it (its default), in a mapping of the engine's own marked for huge pages
(engine/data/mapped_arrays.py, what the window uses since it turns numpy's marking off: explorer/huge_pages.py), and
unmarked. The model's own query (``StaticVectors.neighbours``) with its ``unit`` swapped; the three alternated each
round; medians.

    python bench/speed/huge_pages.py [--rounds 5] [--queries 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

WORDS = ["bank", "play", "river", "money", "music", "king", "paris", "computer", "water", "game"]


def resident_huge_mb() -> float:
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("AnonHugePages:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args()
    import numpy as np

    from engine import api
    from engine.data.mapped_arrays import mapped_empty

    core = getattr(np, "_core", None) or np.core
    marking = core.multiarray._set_madvise_hugepage
    vectors = api.load("glove-6b-50d").vectors  # (its unit rows: a mapping of the engine's)
    unit = np.array(vectors.unit)
    huge_before = resident_huge_mb()

    def copy(how: str) -> np.ndarray:
        if how == "mapped":
            out = mapped_empty(unit.shape, unit.dtype)
        else:
            before = marking(how == "numpy")
            out = np.empty(unit.shape, unit.dtype)
            marking(before)
        out[...] = unit
        return out

    layouts = {"numpy's marking": "numpy", "a mapping of its own, marked (the window)": "mapped",
               "unmarked (4 kB pages)": "plain"}
    times: dict[str, list[float]] = {name: [] for name in layouts}
    huge: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, how in layouts.items():
            vectors.unit = copy(how)
            huge[name] = resident_huge_mb() - huge_before
            for word in WORDS:  # a first pass: the pages touched
                vectors.neighbours(word, 10)
            t0 = time.perf_counter()
            for i in range(args.queries):
                vectors.neighbours(WORDS[i % len(WORDS)], 10)
            times[name].append((time.perf_counter() - t0) * 1000 / args.queries)
            vectors.unit = unit
    base = statistics.median(times["numpy's marking"])
    rows = "\n".join(f"| {name} | {huge[name]:,.0f} | {statistics.median(t):.2f} | {statistics.median(t) / base:.2f} |"
                     for name, t in times.items())
    body = f"""## A neighbour search from huge pages

`python bench/speed/huge_pages.py --rounds {args.rounds} --queries {args.queries}` ({machine()}): GloVe 6B-50d's
unit rows (400,000 × 50, 80 MB), `StaticVectors.neighbours(word, 10)` over ten words, {args.queries} queries a round,
the three layouts alternated, {args.rounds} rounds; medians of the time a query.

| the unit rows | resident in huge pages (MB) | ms a query | against numpy's marking |
|---|---:|---:|---:|
{rows}
"""
    print(body)
    if not args.no_write:
        write_section("huge-pages", body)


if __name__ == "__main__":
    main()
