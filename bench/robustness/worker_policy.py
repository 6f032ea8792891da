"""How the window's worker threads should yield the cores to its GUI thread (issue 37: the event loop's stalls).

In the chaos bench the GUI thread spent its stalls as much waiting for a core and asleep (waiting for the GIL) as
working: every Python callback of a repaint takes the GIL back from a worker, and on a machine with few cores each
take is a wake-up that waits for a core the workers' threads hold. Here a stand-in for the window's thread wakes
every 10 ms (a timer) and does a repaint's worth of work: 150 rounds of a C call that lets the GIL go (Qt's C++)
and 20 µs of Python (a callback). Beside it, the window's worker load: the query thread (minilm-mlm's fill-mask on
one torch thread, over and over), a long job (bert-tiny's contextual vectors of 32 sentences a batch, torch on
every core but one) and a training process of the app's (a busy loop on every core, ``nice -n 10``). Each policy
in a fresh process, rounds alternated; medians over the rounds:

- ``nice 5``: each worker thread's nice value 5 above the window's (explorer.tasks.WORKER_NICE, until now);
- ``nice 19``: the lowest nice value;
- ``SCHED_IDLE``: Linux's idle policy for the worker threads: they run when nothing else wants the core and any
  other thread's wake-up takes it from them at once.

Reported: the stand-in's repaint time (work that takes ``alone`` ms with nothing beside it), how late it woke, and
the workers' queries per second.

    python bench/robustness/worker_policy.py [--rounds 3] [--seconds 20] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

PROBE = r'''
import gc, hashlib, json, os, subprocess, sys, threading, time
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, REPO)
gc.disable()
sys.setswitchinterval(0.0001)
import torch
from engine import api

POLICY, SECONDS = "POLICY_NAME", SECONDS_VALUE
mlm, tiny = api.load("minilm-mlm"), api.load("bert-tiny")
sentences = [f"She sat on the bank of the river number {i} and watched the water go by." for i in range(32)]

def lower() -> None:
    tid = threading.get_native_id()
    if POLICY == "SCHED_IDLE":
        os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
    else:
        os.setpriority(os.PRIO_PROCESS, tid, int(POLICY.split()[1]))

stop = threading.Event()
counts = {"queries": 0, "batches": 0}

def query_thread() -> None:
    lower()
    torch.set_num_threads(1)
    while not stop.is_set():
        mlm.fill_mask(f"The man went to the [MASK] to buy {counts['queries']} gallons of milk.", k=10)
        counts["queries"] += 1

def long_job() -> None:
    lower()
    torch.set_num_threads(max(1, (os.cpu_count() or 1) - 1))
    while not stop.is_set():
        tiny.contextual_vectors_batch(sentences)
        counts["batches"] += 1

BUF = b"x" * 65536
def repaint() -> None:
    for _ in range(150):
        hashlib.sha256(BUF).digest()  # C work that lets the GIL go
        t = time.perf_counter() + 20e-6
        while time.perf_counter() < t:  # a Python callback
            pass

for _ in range(50):
    repaint()
t = time.perf_counter()
for _ in range(50):
    repaint()
alone = (time.perf_counter() - t) / 50 * 1000

hog = [subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", "while True: pass"])
       for _ in range(os.cpu_count() or 1)] if HOG else []
threads = [threading.Thread(target=query_thread), threading.Thread(target=long_job)]
for th in threads:
    th.start()
time.sleep(1.0)
q0, b0 = counts["queries"], counts["batches"]
late, paint = [], []
end = time.perf_counter() + SECONDS
while time.perf_counter() < end:
    t = time.perf_counter()
    time.sleep(0.010)
    woke = time.perf_counter()
    late.append((woke - t - 0.010) * 1000)
    repaint()
    paint.append((time.perf_counter() - woke) * 1000)
q, b = counts["queries"] - q0, counts["batches"] - b0
stop.set()
for th in threads:
    th.join()
for h in hog:
    h.kill()

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]

print(json.dumps({"alone": alone, "paint50": pct(paint, 50), "paint95": pct(paint, 95), "paint99": pct(paint, 99),
                  "paintmax": max(paint), "late95": pct(late, 95), "latemax": max(late), "over250": sum(
                      p + l >= 250 for p, l in zip(paint, late)), "queries": q / SECONDS, "batches": b / SECONDS}))
'''

POLICIES = ["nice 5", "nice 19", "SCHED_IDLE"]


def run(policy: str, seconds: float, hog: bool) -> dict[str, float]:
    code = (PROBE.replace("REPO", repr(str(Path(__file__).resolve().parents[2])))
            .replace("POLICY_NAME", policy).replace("SECONDS_VALUE", str(seconds)).replace("HOG", str(hog)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args()
    rows = []
    for hog in (False, True):
        results: dict[str, list[dict[str, float]]] = {name: [] for name in POLICIES}
        for _ in range(args.rounds):
            for name in POLICIES:
                results[name].append(run(name, args.seconds, hog))
                print(name, "hog" if hog else "", json.dumps(results[name][-1]), flush=True)
        for name, rs in results.items():
            m = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
            rows.append(f"| {name} | {'yes' if hog else 'no'} | {m['alone']:.1f} | {m['paint50']:.1f} | "
                        f"{m['paint95']:.1f} | {m['paint99']:.1f} | {m['paintmax']:.0f} | {m['late95']:.2f} | "
                        f"{m['latemax']:.1f} | {m['queries']:.1f} | {m['batches']:.2f} |")
    lines = [
        "## Worker threads' scheduling policy", "",
        f"`python bench/robustness/worker_policy.py --rounds {args.rounds} --seconds {args.seconds:g}` ({machine()}):"
        " a stand-in for the window's thread wakes every 10 ms and does a repaint's worth of work (150 rounds of a "
        "C call that lets the GIL go and 20 µs of Python) beside the query thread (minilm-mlm fill-mask on one "
        "torch thread), a long job (bert-tiny contextual vectors, torch on every core but one) and, in the second "
        "half, a training process's busy loop on every core at `nice -n 10`. Each policy in a fresh process, rounds "
        "alternated; medians over the rounds; times in ms.", "",
        "| worker threads | training beside | repaint alone | repaint, median | 95th | 99th | worst | woke late, "
        "95th | worst | queries/s | long-job batches/s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
    ]
    print("\n".join(lines))
    if not args.no_write:
        write_section("worker-policy", "\n".join(lines))


if __name__ == "__main__":
    main()
