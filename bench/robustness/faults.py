"""Faults: training runs killed at random moments (SIGKILL, saves included) and a disk that fills up.

* kills: ``word2bert-train FAMILY`` on a slice of the default corpus, saving every step
  (``--checkpoint-every 1``), killed after a random delay; then the run folder must load, or say clearly
  that it holds no finished checkpoint, and ``--resume`` must continue from its last good step;
* full disk (where a tmpfs can be mounted, i.e. as root): a BERT run in a tmpfs that holds one save but
  not two; the run must end ``failed`` with "the disk is full" on ``--json-events``, the CLI must exit
  with a one-line message, and the last checkpoint must still load.

    python bench/robustness/faults.py [--trials 24] [--families word2vec,glove,elmo,gpt,bert]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

from bench._report import machine, write_section  # noqa: E402

STEPS = 60  # a run's length: kills land before, during and after its saves; a resume finishes it
TINY = {"bert": ["--preset", "tiny", "--batch-size", "8", "--seq-len", "32"],
        "gpt": ["--preset", "tiny", "--batch-size", "8", "--seq-len", "32"],
        "elmo": ["--preset", "tiny", "--batch-size", "8", "--seq-len", "20"],
        "word2vec": ["--dim", "32"], "glove": ["--dim", "16"]}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli", *args]


def make_corpus(folder: Path, sentences: int = 3000) -> Path:
    from engine.data.corpora import get_corpus

    path = folder / "slice.txt"
    lines = get_corpus("default").sentences("train")
    path.write_text("\n".join(s for _, s in zip(range(sentences), lines, strict=False)) + "\n", encoding="utf-8")
    return path


def check(run: Path) -> tuple[str, int | None]:
    """('loads', step) | ('clear: …', None) | ('BAD: …', None)."""
    from engine import api

    handle: object = None
    try:
        handle = api.load(run)
        return "loads", int(json.loads((run / "config.json").read_text())["trained_steps"])
    except api.CheckpointError as e:
        text = str(e)
        if "no config.json" in text or "no run folder" in text:
            return "clear: no finished checkpoint", None
        return f"BAD: {text}", None
    except Exception as e:  # noqa: BLE001 - anything else is a defect this bench counts
        return f"BAD: {type(e).__name__}: {e}", None
    finally:
        handle = None  # noqa: F841


def kill_trial(family: str, corpus: Path, run: Path, delay: float) -> dict:
    proc = subprocess.Popen(cli(family, "--corpus", str(corpus), "--out", str(run), "--checkpoint-every", "1",
                                "--log-every", "1", "--max-steps", str(STEPS), *TINY[family]),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=HERE)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    state, step = check(run)
    row = {"family": family, "delay": round(delay, 2), "state": state, "step": step, "resumed": None}
    if step is not None:
        done = subprocess.run(cli("--resume", str(run)), capture_output=True, text=True, cwd=HERE, timeout=600)
        after = check(run)
        row["resumed"] = "ok" if done.returncode == 0 and after[0] == "loads" and (after[1] or 0) >= step else \
            f"BAD: rc {done.returncode} {done.stderr.strip().splitlines()[-1:] if done.stderr else ''}"
    return row


def full_disk(corpus: Path, tmp: Path) -> str:
    """A BERT run in a tmpfs holding one save but not two."""
    probe = tmp / "probe"
    subprocess.run(cli("bert", "--corpus", str(corpus), "--out", str(probe), "--max-steps", "1", *TINY["bert"]),
                   capture_output=True, cwd=HERE, timeout=600, check=True)
    one_save = sum(p.stat().st_size for p in probe.iterdir() if p.is_file() and p.name != "metrics.jsonl")
    mount = tmp / "small-disk"
    mount.mkdir()
    size = int(one_save * 1.4) // 4096 * 4096  # room for one save and most of a second
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True).returncode:
        return "skipped (no tmpfs: needs root)"
    try:
        run = mount / "run"
        done = subprocess.run(cli("bert", "--corpus", str(corpus), "--out", str(run), "--checkpoint-every", "2",
                                  "--max-steps", "20", "--json-events", *TINY["bert"]),
                              capture_output=True, text=True, cwd=HERE, timeout=600)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        last = events[-1] if events else {}
        message_lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip() and not ln.startswith("[")]
        state, step = check(run)
        ok = (last.get("status") == "failed" and "disk is full" in last.get("message", "") and done.returncode != 0
              and state == "loads")
        return (f"{'ok' if ok else 'BAD'}: a {size / 2**20:.1f} MB disk (one save is {one_save / 2**20:.1f} MB); "
                f"last event {last.get('status')}: “{last.get('message', '')[:120]}”; exit code {done.returncode}; "
                f"the CLI's last line: “{(message_lines[-1] if message_lines else '')[:100]}”; the run folder "
                f"{state} at step {step}")
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=24)
    p.add_argument("--families", default="word2vec,glove,elmo,gpt,bert")
    args = p.parse_args()
    families = args.families.split(",")
    rng = random.Random(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        os.environ["WORD2BERT_CACHE"] = str(tmp / "cache")
        corpus = make_corpus(tmp)
        for trial in range(args.trials):
            family = families[trial % len(families)]
            run = tmp / f"run-{trial}"
            rows.append(kill_trial(family, corpus, run, rng.uniform(2.0, 12.0)))
            print(rows[-1], flush=True)
            shutil.rmtree(run, ignore_errors=True)
        disk = full_disk(corpus, tmp)
        print(disk, flush=True)
    bad = [r for r in rows if r["state"].startswith("BAD") or (r["resumed"] or "").startswith("BAD")]
    loads = sum(r["state"] == "loads" for r in rows)
    lines = ["## Faults: kill -9 during training and saves, a full disk", "", f"Machine: {machine()}", "",
             f"`python bench/robustness/faults.py`: {len(rows)} runs (families in turn: {', '.join(families)}; tiny settings, a "
             "3,000-sentence slice of the default corpus, a checkpoint at every step so kills land in saves) killed "
             "with SIGKILL 2–12 s after start; then `api.load` and `--resume` on the folder.", "",
             "| family | killed after | the folder | last good step | --resume |", "|---|---:|---|---:|---|"]
    lines += [f"| {r['family']} | {r['delay']:.1f} s | {r['state']} | {r['step'] if r['step'] is not None else '—'} | "
              f"{r['resumed'] or '—'} |" for r in rows]
    lines += ["", f"**{len(bad)} failures** in {len(rows)} kills ({loads} folders held a checkpoint and resumed from it; "
              "the others were killed before their first save and say so).", "", f"Full disk: {disk}"]
    write_section("faults", "\n".join(lines))
    print("\n".join(lines[-3:]))


if __name__ == "__main__":
    main()
