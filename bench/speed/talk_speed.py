"""Talk mode: how long a speaker waits (issue 15, target: stepping ≤ 100 ms per step).

* preparing: ``word2bert --talk --export DIR`` as a process (the built-in deck, every step computed once,
  then written as 1920×1080 slides) with a fresh cache folder, then again with the warm cache;
* stepping: in this process, the deck prepared once, then every step shown and painted (the window
  grabbed, so the paint is real) in turn, several rounds: median and p95 per step.

    python bench/speed/talk_speed.py [--rounds 5] [--skip-process]
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


def export_seconds(cache: Path, out: Path) -> float:
    env = {**os.environ, "WORD2BERT_CACHE": str(cache), "QT_QPA_PLATFORM": "offscreen"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "explorer", "--talk", "--export", str(out)], env=env,
                          capture_output=True, text=True, cwd=HERE, timeout=900)
    if done.returncode:
        raise RuntimeError(f"the export failed: {done.stderr.strip().splitlines()[-3:]}")
    return time.perf_counter() - start


def stepping(rounds: int) -> tuple[float, list[tuple[str, list[float]]]]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()  # as the app does (explorer/app.py)

    from explorer.session import Session
    from explorer.talk.deck import load_deck
    from explorer.talk.window import EXPORT_SIZE, TalkWindow

    app = QApplication.instance() or QApplication([])
    start = time.perf_counter()
    talk = TalkWindow(Session(), load_deck())
    talk.resize(EXPORT_SIZE)
    talk.show()
    while not talk.all_ready and time.perf_counter() - start < 600:
        app.processEvents()
        time.sleep(0.01)
    prepared = time.perf_counter() - start
    times: list[list[float]] = [[] for _ in talk.steps]
    for _ in range(rounds):
        for i in range(len(talk.steps)):
            t = time.perf_counter()
            talk.go(i)
            app.sendPostedEvents()
            app.processEvents()
            talk.grab()  # the step painted at 1920×1080
            times[i].append(time.perf_counter() - t)
    return prepared, [(step.title or "", ts) for step, ts in zip(talk.steps, times, strict=True)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--skip-process", action="store_true")
    args = p.parse_args()
    lines = ["## Talk mode: preparing the built-in deck, stepping through it", "", f"Machine: {machine()}", "",
             "`python bench/speed/talk_speed.py`. Target: stepping ≤ 100 ms per step (1920×1080, painted).", ""]
    if not args.skip_process:
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp) / "cache"
            cold = export_seconds(cache, Path(tmp) / "cold")
            warm = export_seconds(cache, Path(tmp) / "warm")
            slides = len(list((Path(tmp) / "warm").glob("*.png")))
            pdf = "and a PDF " if list((Path(tmp) / "warm").glob("*.pdf")) else ""
        lines += [f"`word2bert --talk --export DIR` ({slides} steps prepared, {slides} slides {pdf}written, process start "
                  f"included): **{cold:.1f} s** with a fresh cache folder (first-run corpus conversion included), "
                  f"**{warm:.1f} s** warm.", ""]
        print(lines[-2], flush=True)
    prepared, per_step = stepping(args.rounds)
    lines += [f"In-process: the deck prepared in {prepared:.1f} s (models loaded, every step computed); then "
              f"{args.rounds} rounds through the steps:", "",
              "| step | median | p95 |", "|---|---:|---:|"]
    worst = 0.0
    for title, ts in per_step:
        ts = sorted(ts)
        p95 = ts[min(len(ts) - 1, int(round(0.95 * (len(ts) - 1))))]
        worst = max(worst, p95)
        lines.append(f"| {title} | {statistics.median(ts) * 1000:.0f} ms | {p95 * 1000:.0f} ms |")
        print(lines[-1], flush=True)
    lines += ["", f"Slowest step p95: {worst * 1000:.0f} ms ({'meets' if worst <= 0.1 else 'misses'} the 100 ms target)."]
    write_section("talk_speed", "\n".join(lines))


if __name__ == "__main__":
    main()
