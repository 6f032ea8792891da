"""Occurrences on demand (the polysemy lens's click): how long a speaker waits.

* the word -> sentences index of the default corpus: built with a fresh cache folder, then opened again;
* first click on a word: one model encodes that word's occurrences (up to 300, sampled across the corpus),
  for bert-tiny and all-MiniLM-L6-v2 (a 6-layer, 384-wide BERT); then the same click from the cache;
* the bank scene from a fresh machine: ``word2bert --scene bank --screenshot F`` as a process with
  WORD2BERT_CACHE pointing at an empty folder (first-run corpus conversion included), then again warm.

Targets (issue 15, 2-core machines): first click ≤ 5 s (MiniLM), ≤ 2 s (bert-tiny); cached ≤ 0.5 s; the
scene ≤ 60 s cold, ≤ 15 s warm.

    python bench/speed/occurrences_speed.py [--words bank,play,bat] [--skip-scene]
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

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

from bench._report import machine, write_section  # noqa: E402


def scene_seconds(cache: Path, shot: Path) -> float:
    env = {**os.environ, "WORD2BERT_CACHE": str(cache), "QT_QPA_PLATFORM": "offscreen"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "explorer", "--scene", "bank", "--screenshot", str(shot)], env=env,
                          capture_output=True, text=True, cwd=HERE, timeout=600)
    if done.returncode:
        raise RuntimeError(f"the scene failed: {done.stderr.strip().splitlines()[-3:]}")
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--words", default="bank,play,bat")
    p.add_argument("--skip-scene", action="store_true")
    args = p.parse_args()
    words = args.words.split(",")
    lines = ["## Occurrences on demand (polysemy lens)", "", f"Machine: {machine()}", "",
             "`python bench/speed/occurrences_speed.py`. Every core, as the app's background job that fetches them.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["WORD2BERT_CACHE"] = str(Path(tmp) / "cache")
        from engine import api
        from engine.inspection.occurrences import word_index, word_occurrences

        t = time.perf_counter()
        index = word_index("default")
        cold = time.perf_counter() - t
        t = time.perf_counter()
        word_index("default")
        warm = time.perf_counter() - t
        lines += [f"Word index of the default corpus: {len(index):,} sentences, {len(index.words):,} words; built in "
                  f"{cold:.1f} s (first corpus read included: {'yes' if cold > 1 else 'no'}), opened again in "
                  f"{warm * 1000:.0f} ms.", "",
                  "| model | word | sentences holding it | encoded | first click | cached click |",
                  "|---|---|---:|---:|---:|---:|"]
        firsts: dict[str, list[float]] = {}
        for name in ("bert-tiny", "all-minilm-l6-v2"):
            handle = api.load(name)
            handle.contextual_vectors("warm up the model once.")
            for word in words:
                t = time.perf_counter()
                occ = word_occurrences(handle, word, index=index)
                first = time.perf_counter() - t
                t = time.perf_counter()
                word_occurrences(handle, word, index=index)
                cached = time.perf_counter() - t
                firsts.setdefault(name, []).append(first)
                lines.append(f"| {name} | {word} | {occ.total:,} | {len(occ.sentences)} | {first:.2f} s | "
                             f"{cached * 1000:.1f} ms |")
                print(lines[-1], flush=True)
        lines += ["", "Median first click: " + ", ".join(f"{n} {statistics.median(v):.2f} s" for n, v in firsts.items())
                  + " (targets: bert-tiny ≤ 2 s, MiniLM ≤ 5 s; cached ≤ 0.5 s)."]
        if not args.skip_scene:
            cache = Path(tmp) / "scene-cache"
            cold_s = scene_seconds(cache, Path(tmp) / "cold.png")
            warm_s = scene_seconds(cache, Path(tmp) / "warm.png")
            lines += ["", f"`word2bert --scene bank --screenshot F` with an empty cache folder: **{cold_s:.1f} s** "
                      f"(target ≤ 60 s); again with that cache: **{warm_s:.1f} s** (target ≤ 15 s)."]
    body = "\n".join(lines)
    print(body)
    write_section("occurrences-on-demand", body)


if __name__ == "__main__":
    main()
