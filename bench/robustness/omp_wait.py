"""Sleeping or spinning OpenMP threads beside a window's thread (explorer/worker_threads.py).

One process per policy and round, alternated (``--rounds`` each): a "GUI" thread that sleeps 10 ms, then runs
2 ms of Python, over and over, beside a worker thread running torch's matrix products in bursts with a 2 ms pause
between (a query's glue); how late the GUI thread wakes (ms past its 12 ms); then, alone, a 6-layer 384-wide
encoder's forward pass on 8 x 32 tokens (a query's speed). Writes the medians over rounds to RESULTS.md.

    python bench/robustness/omp_wait.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench._report import machine, write_section  # noqa: E402

PROBE = r"""
import json, statistics, threading, time
import torch
stop = False
def worker():
    a, b = torch.randn(64, 256), torch.randn(256, 256)
    while not stop:
        for _ in range(50):
            (a @ b).relu_()
        time.sleep(0.002)
t = threading.Thread(target=worker)
t.start()
late = []
end = time.monotonic() + SECONDS
while time.monotonic() < end:
    t0 = time.perf_counter()
    time.sleep(0.01)
    woke = time.perf_counter()
    while time.perf_counter() - woke < 0.002:
        pass
    late.append((time.perf_counter() - t0) * 1000 - 12)
stop = True
t.join()
late.sort()
layer = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(384, 12, 1536, batch_first=True), 6).eval()
x = torch.randn(8, 32, 384)
with torch.inference_mode():
    for _ in range(5):
        layer(x)
    ms = []
    for _ in range(40):
        t0 = time.perf_counter()
        layer(x)
        ms.append((time.perf_counter() - t0) * 1000)
print(json.dumps({"p50": late[len(late) // 2], "p95": late[int(0.95 * len(late))], "p99": late[int(0.99 * len(late))],
                  "worst": late[-1], "forward": statistics.median(ms), "threads": torch.get_num_threads()}))
"""


def run(policy: str | None, seconds: float) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-c", PROBE.replace("SECONDS", str(seconds))], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=8.0)
    args = p.parse_args()
    policies = {"spinning (OpenMP's default)": None, "sleeping (PASSIVE, the window's)": "PASSIVE"}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in policies}
    for _ in range(args.rounds):
        for name, policy in policies.items():
            results[name].append(run(policy, args.seconds))
    threads = results[next(iter(results))][0]["threads"]
    lines = [
        "## Sleeping worker threads", "",
        f"`python bench/robustness/omp_wait.py --rounds {args.rounds} --seconds {args.seconds:g}` ({machine()}; "
        f"torch on {threads} threads): a thread that sleeps 10 ms then runs 2 ms of Python, over and over, beside a "
        "thread running torch's matrix products in bursts with 2 ms pauses (a model query's glue); how late it "
        "wakes; then, alone, a 6-layer 384-wide encoder's forward pass on 8 x 32 tokens. One process per policy "
        "and round, alternated; medians over the rounds. The window's process has its threads sleep "
        "(explorer/worker_threads.py); a training process keeps OpenMP's default.", "",
        "| OpenMP threads between operations | late, median | 95th percentile | 99th | worst | forward pass |",
        "|---|---|---|---|---|---|",
    ]
    for name, rows in results.items():
        med = {k: statistics.median(r[k] for r in rows) for k in ("p50", "p95", "p99", "worst", "forward")}
        lines.append(f"| {name} | {med['p50']:.2f} ms | {med['p95']:.2f} ms | {med['p99']:.2f} ms | "
                     f"{med['worst']:.1f} ms | {med['forward']:.1f} ms |")
    print("\n".join(lines))
    write_section("omp-wait", "\n".join(lines))


if __name__ == "__main__":
    main()
