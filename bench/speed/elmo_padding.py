"""An ELMo query with its words padded to a few counts, or not (engine/models/elmo.py, the character CNN).

oneDNN builds and keeps five convolutions (one per filter width) for every count of words the character CNN meets;
a query's words are padded to ``row_bucket``'s counts (at most a third more rows) so that it meets a few. This bench
times ELMo-tiny's contextual vectors for texts of 1-80 words, each length once a pass, with the padding and without
(``row_bucket`` replaced by the identity), alternating, in one process with the window's settings
(explorer/worker_threads.py: 64 compiled kernels in each of oneDNN's and ideep's caches). The first pass is the first
time each shape is met; the later ones may find their kernels cached. Nothing is chosen by it: it records what the
padding costs or saves.

    python bench/speed/elmo_padding.py --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from explorer.worker_threads import sleeping_worker_threads  # noqa: E402

sleeping_worker_threads()  # (before torch: the window's settings)

import engine.models.elmo as elmo  # noqa: E402
from bench._report import machine, write_section  # noqa: E402
from engine import api  # noqa: E402
from engine.models.packed_linear import row_bucket  # noqa: E402

WORDS = ["the", "river", "bank", "was", "muddy", "after", "the", "rain", "and", "the", "children", "played", "by", "the", "water", "while", "their", "parents", "put", "money", "in", "the", "bank", "in", "town", "before", "the", "match", "began", "on", "the", "green", "field"]
LENGTHS = range(1, 81)


def one_pass(handle, texts: list[str]) -> float:
    t0 = time.perf_counter()
    for text in texts:
        handle.contextual_vectors(text)
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    handle = api.load("elmo-tiny")
    texts = [" ".join(WORDS[i % len(WORDS)] for i in range(n)) for n in LENGTHS]
    ways = {"padded to row_bucket's counts (the app)": row_bucket, "not padded": lambda n: n}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.rounds):
        for name, bucket in ways.items():
            elmo.row_bucket = bucket
            times[name].append(one_pass(handle, texts))
    elmo.row_bucket = row_bucket
    rows = [f"| {name} | {t[0]:,.0f} ms | {statistics.median(t[1:]):,.0f} ms |" for name, t in times.items()]
    print("\n".join(rows), flush=True)
    body = (f"Machine: {machine()}\n\n`python bench/speed/elmo_padding.py --rounds "
            f"{args.rounds}`: ELMo-tiny's contextual vectors for texts of {LENGTHS.start}-{LENGTHS.stop - 1} words, "
            "each length once a pass, the two ways alternating in one process with the window's settings (64 "
            "compiled kernels in each of oneDNN's and ideep's caches). The first pass meets each shape for the first "
            f"time; the later ones, the median of {args.rounds - 1}.\n\n"
            f"| the character CNN's words | first pass ({len(LENGTHS)} queries) | later passes, median |\n|---|---:|---:|\n"
            + "\n".join(rows) + "\n")
    write_section("elmo-padding", "## An ELMo query's words padded for the character CNN, or not\n\n" + body)


if __name__ == "__main__":
    main()
