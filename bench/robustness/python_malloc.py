"""What Python's own small-object allocator is worth to the window, against glibc's malloc (``PYTHONMALLOC=malloc``).

The chaos bench's window grew by 7-17% of anonymous memory over its runs, and what grew was Python's small-object
arenas (pymalloc) around the same live objects: an arena goes back to the system only when every object in it is
freed, so a few long-lived objects made while jobs ran keep whole arenas. With ``PYTHONMALLOC=malloc`` the same
10 minutes shrank by 5% (bench/robustness/RESULTS.md, "Chaos in the window", runs P and R). pymalloc is there
because it is faster for small objects; this bench measures what the window pays without it, each allocator in
a fresh process (the allocator is chosen when Python starts), rounds alternating and the order reversed every
other round:

* **scenes**: every built-in scene opened in the window (offscreen, 1400 x 900, the small shipped models loaded
  and every scene opened once before, so models are loaded and caches built), each until its view has its
  results and nothing more is on its way (explorer.screenshot.pending), then the window grabbed: the wall time
  a user waits, and the GUI thread's CPU time;
* **paint**: every tab shown and the window grabbed (painted in full) at three zoom levels, three times: the GUI
  thread's CPU time (Qt's layout and painting, pyqtgraph's Python);
* **queries**: engine calls on one thread, no Qt: bert-tiny fill-mask (150 texts), gpt-tiny sentence scores
  (100), elmo-tiny contextual vectors (100), word2vec neighbours (300 words) and MiniLM-MLM encoding 32 corpus
  sentences (8 batches): the wall time;
* the anonymous RSS at the end, after ``api.release_memory()`` (for the record; what decides memory is the
  chaos bench's long run).

How the window's allocator is chosen (declared before the first run): ``PYTHONMALLOC=malloc`` is adopted for the
window's process if, in each of the three workloads (scenes: the wall time; paint: the GUI thread's CPU; queries:
the wall time), its median over the rounds is at most 10% above pymalloc's. Otherwise pymalloc stays.

    QT_QPA_PLATFORM=offscreen python bench/robustness/python_malloc.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

ALLOCATORS = {"pymalloc (Python's default)": "pymalloc", "malloc (PYTHONMALLOC=malloc)": "malloc"}
SMALL = ("bert-tiny", "gpt-tiny", "elmo-tiny", "word2vec-sgns")
ZOOMS = (0, 2, -1)
MARGIN = 1.10  # the rule's bound: malloc's median at most 10% above pymalloc's, in every workload


def settle(app: Any, window: Any, session: Any, timeout_s: float = 300.0) -> None:
    """Process events until the view on screen has its results and nothing is on its way."""
    from explorer.screenshot import pending

    end = time.monotonic() + timeout_s
    calm = 0
    while time.monotonic() < end:
        app.processEvents()
        busy = session.loading or pending(window.tabs.currentWidget())
        calm = 0 if busy else calm + 1
        if calm >= 3:  # three looks in a row: a reply's own follow-up (a redraw, a debounce) has had its turn
            return
        time.sleep(0.002)
    raise RuntimeError("the window did not settle")


def open_scenes(app: Any, window: Any, session: Any) -> tuple[float, float]:
    from explorer.scenes import builtin_scenes

    wall0, cpu0 = time.perf_counter(), time.thread_time()
    for name in builtin_scenes():
        window.open_scene(name)
        settle(app, window, session)
        window.grab()
    return time.perf_counter() - wall0, time.thread_time() - cpu0


def paint(app: Any, window: Any) -> float:
    cpu0 = time.thread_time()
    for _ in range(3):
        for zoom in ZOOMS:
            window.zoom(0)
            window.zoom(zoom)
            for index in range(window.tabs.count()):
                window.tabs.setCurrentIndex(index)
                app.processEvents()
                window.grab()
    window.zoom(0)
    return time.thread_time() - cpu0


def queries(session: Any) -> float:
    from engine import api

    models = session.models
    rng = random.Random(5)
    words = ["bank", "river", "money", "play", "match", "stage", "star", "spring", "water", "city", "game", "music"]

    def text(n: int) -> str:
        return " ".join(rng.choice(words + ["the", "a", "and", "of", "was"]) for _ in range(n)) + "."

    sentences = api.corpus_sample("default", 256)
    minilm = models.get("minilm-mlm") or api.load("minilm-mlm")
    t0 = time.perf_counter()
    for _ in range(150):
        models["bert-tiny"].fill_mask(text(rng.randint(4, 30)) + " the [MASK] .")
    for _ in range(100):
        models["gpt-tiny"].score(text(rng.randint(4, 40)))
    for _ in range(100):
        models["elmo-tiny"].contextual_vectors(text(rng.randint(4, 40)))
    for _ in range(300):
        models["word2vec-sgns"].static_neighbours(rng.choice(words), 10)
    for i in range(8):
        minilm.contextual_vectors_batch(sentences[32 * i: 32 * (i + 1)])
    return time.perf_counter() - t0


def one() -> dict[str, float]:
    """In this process: the window, its scenes, its paints and the queries."""
    from PySide6.QtWidgets import QApplication

    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()  # as the app does (explorer/app.py)

    from bench.robustness.memory import rss_parts_mb
    from engine import api
    from explorer.main_window import MainWindow
    from explorer.session import Session
    from explorer.tasks import wait_for_workers

    app = QApplication.instance() or QApplication([])
    session = Session()
    window = MainWindow(session)
    window.resize(1400, 900)
    window.show()
    for name in SMALL:
        session.load(name)
    settle(app, window, session)
    open_scenes(app, window, session)  # models loaded, caches built, one-time compilations done
    scenes_wall, scenes_cpu = open_scenes(app, window, session)
    settle(app, window, session)
    paint_cpu = paint(app, window)
    settle(app, window, session)
    wait_for_workers(60_000)
    query_wall = queries(session)
    window.stop_jobs()
    wait_for_workers(60_000)
    api.release_memory()
    return {"scenes_wall": scenes_wall, "scenes_cpu": scenes_cpu, "paint_cpu": paint_cpu, "queries": query_wall,
            "end_anon": rss_parts_mb()["anon"]}


def run(allocator: str) -> dict[str, float]:
    from bench.robustness.fresh_process import in_fresh_process

    env = {**os.environ, "PYTHONMALLOC": allocator, "QT_QPA_PLATFORM": "offscreen"}
    return in_fresh_process("bench.robustness.python_malloc", "one()", env, allocator)


def main() -> None:
    from bench._report import machine, write_section

    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    from bench.robustness.fresh_process import alternating_rounds

    results = alternating_rounds(list(ALLOCATORS), args.rounds, lambda name: run(ALLOCATORS[name]))

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in results[name])

    base, candidate = list(ALLOCATORS)
    decisive = ("scenes_wall", "paint_cpu", "queries")
    adopted = all(med(candidate, key) <= MARGIN * med(base, key) for key in decisive)
    lines = ["## Python's allocator in the window: pymalloc or malloc", "", f"Machine: {machine()}", "",
             f"`QT_QPA_PLATFORM=offscreen python bench/robustness/python_malloc.py --rounds {args.rounds}`: each "
             f"allocator in a fresh process, {args.rounds} rounds alternating (the order reversed every other round); "
             f"medians over the rounds. The window (1400 x 900, offscreen) with {', '.join(SMALL)} loaded opens "
             f"every built-in scene once to warm up, then: **scenes**, every built-in scene opened until its view "
             f"has its results and nothing more is on its way, then grabbed; **paint**, every tab grabbed at zoom "
             f"{', '.join(map(str, ZOOMS))}, three times; **queries**, on one thread without Qt: bert-tiny "
             f"fill-mask x150, gpt-tiny scores x100, elmo-tiny vectors x100, word2vec neighbours x300, MiniLM-MLM "
             f"32 sentences x8. The rule, declared before the first run: malloc is adopted for the window's process "
             f"if its median is at most {MARGIN - 1:.0%} above pymalloc's in every workload (scenes: wall time; "
             f"paint: the GUI thread's CPU; queries: wall time).", "",
             "| allocator | scenes, wall | scenes, the GUI thread's CPU | paint, the GUI thread's CPU | queries, wall "
             "| anonymous RSS at the end |", "|---|---:|---:|---:|---:|---:|"]
    for name in ALLOCATORS:
        lines.append(f"| {name} | {med(name, 'scenes_wall'):.2f} s | {med(name, 'scenes_cpu'):.2f} s | "
                     f"{med(name, 'paint_cpu'):.2f} s | {med(name, 'queries'):.2f} s | "
                     f"{med(name, 'end_anon'):,.0f} MB |")
    ratios = ", ".join(f"{key.replace('_', ' ')} {med(candidate, key) / med(base, key):.3f}" for key in decisive)
    lines += ["", f"malloc / pymalloc: {ratios}. By the rule: **{'malloc' if adopted else 'pymalloc'}**.", "",
              "Every round (seconds: scenes wall, scenes CPU, paint CPU, queries; MB): " + "; ".join(
                  f"{name.split(' ')[0]} " + ", ".join(
                      f"{r['scenes_wall']:.1f}/{r['scenes_cpu']:.1f}/{r['paint_cpu']:.1f}/{r['queries']:.1f}/"
                      f"{r['end_anon']:.0f}" for r in results[name]) for name in ALLOCATORS) + "."]
    text_ = "\n".join(lines)
    print(text_)
    write_section("python-malloc", text_)


if __name__ == "__main__":
    main()
