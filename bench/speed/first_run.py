"""The first word2vec run after installing against the next one, with and without the app's warm-up.

A fresh install has no compiled kernel: numba compiles word2vec's CPU kernel inside the first run (about
15 s on 2 cores). The app compiles it at its first start, in a process of its own (``python -m
engine.cli.warm``). This bench gives each case an empty numba cache (NUMBA_CACHE_DIR, what a fresh install
has; the user's own cache is left alone) and times whole ``word2bert-train word2vec`` commands:
  cold     the first command on an empty cache, then the next one
  app      the warm-up the app starts (waited for), then the first command, then the next
The corpus conversion is cached before anything is timed (a fresh install pays it once either way).
Medians of ``--rounds``; the difference first - next is what a user waits for.

    python bench/speed/first_run.py [--rounds 3] [--max-words 2000000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402


def timed(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--max-words", type=int, default=None)
    args = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="first-run-"))
    base = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    words = ["--max-words", str(args.max_words)] if args.max_words else []

    def train(out: Path) -> list[str]:
        return [sys.executable, "-m", "engine.cli.train", "word2vec", "--device", "cpu", "--epochs", "1", *words,
                "--out", str(out)]

    subprocess.run(train(root / "prime"), env={**base, "NUMBA_CACHE_DIR": str(root / "prime-cache")}, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # the corpus conversion, cached
    rows: dict[str, list[tuple[float, float]]] = {"cold": [], "app": []}
    warm_s = []
    for r in range(args.rounds):
        for case in rows:
            env = {**base, "NUMBA_CACHE_DIR": str(root / f"cache-{case}-{r}")}
            if case == "app":
                warm_s.append(timed([sys.executable, "-m", "engine.cli.warm"], env))
            first = timed(train(root / f"{case}-{r}-first"), env)
            second = timed(train(root / f"{case}-{r}-second"), env)
            rows[case].append((first, second))
            print(f"round {r + 1} {case}: first {first:.1f} s, next {second:.1f} s", flush=True)
    lines = ["## The first word2vec run after installing", "",
             f"`python bench/speed/first_run.py --rounds {args.rounds}{' --max-words ' + str(args.max_words) if args.max_words else ''}`: "
             "whole `word2bert-train word2vec --epochs 1` commands on the default corpus, each case from an empty "
             "numba cache (a fresh install), the corpus conversion cached beforehand; medians of "
             f"{args.rounds} rounds.", f"Machine: {machine()}.", "",
             "| case | first command s | next command s | first - next s |", "|---|---:|---:|---:|"]
    names = {"cold": "nothing before it (compiles inside the run)",
             "app": f"after the app's warm-up (its own process, {statistics.median(warm_s):.1f} s, at the app's start)"}
    for case, pairs in rows.items():
        first, second = statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs)
        lines.append(f"| {names[case]} | {first:.1f} | {second:.1f} | {first - second:+.1f} |")
    body = "\n".join(lines)
    print(body)
    write_section("first-run", body)


if __name__ == "__main__":
    main()
