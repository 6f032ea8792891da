"""The Predictions tab's "draw a training example" (``engine.api.bert_training_example``), on two checkouts side by
side: each draw's time, all of it Python on a worker thread that shares the interpreter with the window's thread.

The chaos bench's window (bench/robustness/CHAOS-HISTORY.md, Z68) drew an example about once a minute and a half, and two of
its five stalls of 250 ms or more came while one was being drawn. The first draw of a process reads the corpus's
held-out part (both checkouts); the figures are the draws after it, for BERT-tiny (whole words, 8,000 pieces) and
MiniLM's masked LM (30,522).

    python bench/speed/training_example.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3] [--draws 10]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
MODELS = ("bert-tiny", "minilm-mlm")


def one(draws: int) -> dict[str, list[float]]:
    """In this process (its checkout first on sys.path): each draw's milliseconds, per model."""
    import time

    from engine import api

    out: dict[str, list[float]] = {}
    for name in MODELS:
        handle = api.load(name)
        api.bert_training_example(handle, "default", 0)  # (the first: the held-out part read)
        times = []
        for seed in range(1, draws + 1):
            began = time.perf_counter()
            api.bert_training_example(handle, "default", seed)
            times.append((time.perf_counter() - began) * 1000)
        out[name] = times
    return out


def main() -> None:
    from bench._report import machine, write_section
    from bench.checkouts import checkouts_said, ratio_table, side_by_side, side_by_side_parser

    p = side_by_side_parser(rounds=3)
    p.add_argument("--draws", type=int, default=10, help="draws per model, per round")
    args = p.parse_args()
    names, results = side_by_side(args, __file__, f"one({args.draws})")

    lines = ["## Drawing a training example", "", f"Machine: {machine()}", "",
             f"`python bench/speed/training_example.py {checkouts_said(args)} --draws {args.draws}`: "
             f"`bert_training_example` on the default corpus, {args.draws} draws (seeds 1..{args.draws}) per model "
             f"after a first one, {args.rounds} rounds per checkout, alternating, each in a fresh process. Each "
             "figure: milliseconds a draw, median / 90th percentile / worst.", "",
             *ratio_table("model", names, results, 0)]
    text = "\n".join(lines)
    print(text)
    write_section("training-example", text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
