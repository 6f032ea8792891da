"""Whole-run training speed of the CLI (``python -m engine.cli``) on two checkouts, side by side: e.g. the
code before and after a change to the training loop. Rounds alternate between the checkouts; the median
tokens/s of each (tokens trained / seconds from the first step to the last, from metrics.jsonl) is reported.

    python bench/speed/training_loop_speed.py OLD_CHECKOUT [NEW_CHECKOUT (default: this one)] [--kind bert]
        [--steps 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

from bench._report import machine, write_section  # noqa: E402


def one_run(checkout: Path, kind: str, steps: int, out: Path) -> float:
    cmd = [sys.executable, "-m", "engine.cli", kind, "--preset", "tiny", "--corpus", "default",
           "--max-words", "300000", "--max-steps", str(steps), "--log-every", "5", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    subprocess.run(cmd, cwd=checkout, env=env, check=True, capture_output=True)
    events = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    started = next(e for e in events if e["event"] == "started")
    steps_events = [e for e in events if e["event"] == "step"]
    first, last = steps_events[0], steps_events[-1]
    tokens = (last["progress"] - first["progress"]) * started["total"]
    return tokens / (last["elapsed_s"] - first["elapsed_s"])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("old")
    p.add_argument("new", nargs="?", default=str(HERE))
    p.add_argument("--kind", default="bert")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    speeds: dict[str, list[float]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name in ("old", "new"):
                out = Path(tmp) / f"{name}-{r}"
                speeds[name].append(one_run(Path(getattr(args, name)), args.kind, args.steps, out))
                print(f"round {r + 1} {name}: {speeds[name][-1]:,.0f} tokens/s", flush=True)
    old, new = statistics.median(speeds["old"]), statistics.median(speeds["new"])
    line = (f"{args.kind} tiny, {args.steps} steps, median of {args.rounds}: old {old:,.0f} tokens/s, "
            f"new {new:,.0f} tokens/s ({new / old:.2f}x)")
    print(line)
    rounds = ", ".join(f"{o:,.0f} / {n:,.0f}" for o, n in zip(speeds["old"], speeds["new"], strict=True))
    write_section(f"training-loop-speed-{args.kind}",
                  f"## Whole-run training speed, two checkouts ({args.kind})\n\nMachine: {machine()}\n\n"
                  f"`python bench/speed/training_loop_speed.py {args.old}`: {line}. Rounds (old / new): {rounds}.")


if __name__ == "__main__":
    main()
