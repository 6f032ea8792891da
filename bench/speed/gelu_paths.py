"""A query's GELU on the CPU: oneDNN's eltwise primitive (``F.gelu``) or ATen's own kernel (``packed_linear.gelu``).

``F.gelu`` on a contiguous float32 CPU tensor runs oneDNN, which builds and caches a primitive for every shape it
meets; ``engine.models.packed_linear.gelu`` hands ATen the transposed view instead (engine/models/packed_linear.py).
Both in one process, alternating, on the activations of a BERT-base's and a MiniLM's feed-forward layer (batch 2,
1-149 tokens: every sentence length a query may meet): the first pass over the lengths (where oneDNN builds its
primitives), and the median of the later passes (oneDNN's from its cache). Nothing is chosen by it: it records
what the change of path costs or saves.

    python bench/speed/gelu_paths.py --rounds 7
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine.models.packed_linear import gelu  # noqa: E402

WIDTHS = (3072, 1536)  # BERT-base's and MiniLM's feed-forward widths
LENGTHS = range(1, 150)


def one_pass(fn, inputs: list[torch.Tensor]) -> float:
    t0 = time.perf_counter()
    with torch.inference_mode():
        for x in inputs:
            fn(x)
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args()
    rows = []
    for width in WIDTHS:
        inputs = [torch.randn(2, n, width) for n in LENGTHS]
        with torch.inference_mode():
            worst = max((F.gelu(x) - gelu(x)).abs().max().item() for x in inputs[:20])
        inputs = [torch.randn(2, n, width) for n in LENGTHS]  # (lengths oneDNN has not met at this width: below)
        times: dict[str, list[float]] = {"ATen (packed_linear.gelu)": [], "oneDNN (F.gelu)": []}
        for _ in range(args.rounds):
            times["ATen (packed_linear.gelu)"].append(one_pass(gelu, inputs))
            times["oneDNN (F.gelu)"].append(one_pass(F.gelu, inputs))
        for name, t in times.items():
            rows.append(f"| {width} | {name} | {t[0]:,.1f} ms | {statistics.median(t[1:]):,.1f} ms | {worst:.1e} |")
            print(rows[-1], flush=True)
    body = (f"Machine: {machine()}\n\n`python bench/speed/gelu_paths.py --rounds {args.rounds}`: the GELU of a "
            f"feed-forward layer's activations (batch 2, {LENGTHS.start}-{LENGTHS.stop - 1} tokens, each length "
            "once a pass), ATen's kernel then oneDNN's, alternating, in one process. The first pass is the first "
            "time each shape is met (oneDNN builds a primitive for each); the later ones take oneDNN's from its "
            "cache.\n\n| width | path | first pass | later passes, median | largest difference between the two |\n"
            "|---:|---|---:|---:|---:|\n" + "\n".join(rows) + "\n")
    write_section("gelu-paths", "## A query's GELU on the CPU: oneDNN or ATen\n\n" + body)


if __name__ == "__main__":
    main()
