"""The app's speed, measured through the real widgets (offscreen):

* cold start: process start -> first window shown, and -> the shipped default models loaded;
* responsiveness: the longest event-loop stall (a 10 ms timer probe) while a training run (a separate
  process) and a corpus-index build (a worker thread) are going;
* neighbour query latency on the default corpus index (p50/p95) and the index's build time and size.

    python bench/speed/explorer_speed.py [--model bert-tiny] [--index-sentences 20000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from bench._report import machine, write_section  # noqa: E402

COLD = """
import time; t0 = time.perf_counter()
import os, sys; os.environ['QT_QPA_PLATFORM'] = 'offscreen'
from PySide6.QtWidgets import QApplication
from PySide6.QtCore import QTimer
from explorer.pyside_imports import lighter_import_hook; lighter_import_hook()  # as the app does
app = QApplication([])
from explorer.session import Session
from explorer.main_window import MainWindow
s = Session(); w = MainWindow(s); w.show()
def shown():
    print('window', time.perf_counter() - t0, flush=True)
    s.load_defaults()
    def check():
        if s.loading == 0 and s.models:
            print('models', time.perf_counter() - t0, len(s.models), flush=True); app.quit()
    t = QTimer(); t.timeout.connect(check); t.start(20); w._keep = t
QTimer.singleShot(0, shown)
app.exec()
"""


def cold_start(runs: int) -> tuple[float, float, int]:
    windows, models, n = [], [], 0
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True, timeout=300)
        lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
        windows.append(float(lines["window"]))
        value, count = lines["models"].split()
        models.append(float(value))
        n = int(count)
    return statistics.median(windows), statistics.median(models), n


def big_curve_redraw(n: int = 300_000, repeats: int = 20) -> float:
    """Median time for the live loss plot to take one more point and repaint, with ``n`` points in it."""
    import numpy as np

    from explorer.widgets.loss_plot import LossPlot

    plot = LossPlot()
    plot.resize(800, 400)
    plot.show()
    loss = 8 * np.exp(-np.arange(n) / 60_000) + np.random.default_rng(0).normal(0, 0.05, n)
    for step, value in enumerate(loss):
        plot.append("run", step, value)
    plot._redraw()
    plot.grab()
    times = []
    for i in range(repeats):
        t = time.perf_counter()
        plot.append("run", n + i, loss[-1])
        plot._redraw()
        plot.grab()  # paints the view now (offscreen)
        times.append(time.perf_counter() - t)
    plot.close()
    return statistics.median(times) * 1e3


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="bert-tiny")
    p.add_argument("--index-sentences", type=int, default=20_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--keep-cache", action="store_true", help="reuse a cached corpus index instead of building it")
    args = p.parse_args()
    window_s, models_s, n_models = cold_start(args.runs)

    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()  # as the app does (explorer/app.py)

    from explorer.main_window import MainWindow
    from explorer.session import Session

    app = QApplication.instance() or QApplication([])
    session = Session()
    win = MainWindow(session)
    win.show()
    session.load(args.model)  # as the app does (in a worker; the session then freezes long-lived objects)
    while session.loading:
        app.processEvents()
        time.sleep(0.005)
    handle = next(iter(session.models.values()))
    panel = win.polysemy
    panel.indexer.settings = {"per_word": 20, "max_words": 3000, "max_sentences": args.index_sentences}
    if not args.keep_cache:  # measure a real build, not a cache hit
        import shutil

        from engine.inspection.corpus_index import index_folder

        shutil.rmtree(index_folder(handle, "default", **panel.indexer.settings), ignore_errors=True)
    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    def probe() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0])
        last[0] = now

    import gc

    pauses: list[tuple[float, int, int]] = []  # (ms, generation, when) of each garbage collection
    started: dict[str, float] = {}

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            started["t"] = time.perf_counter()
        else:
            pauses.append(((time.perf_counter() - started["t"]) * 1e3, info["generation"], clock.elapsed()))

    gc.callbacks.append(on_gc)

    timer = QTimer(interval=10)
    timer.timeout.connect(probe)
    timer.start()
    win.train.kind.setCurrentText("gpt")
    win.train.steps.setValue(60)
    win.train.start_run()
    t0 = time.perf_counter()
    panel.indexer.build_index()
    while handle.name not in panel.indexer.indexes or (win.train.job is not None and win.train.job.running):
        app.processEvents()
        time.sleep(0.001)
        if time.perf_counter() - t0 > 3600:
            break
    build_s = time.perf_counter() - t0
    timer.stop()
    gc.callbacks.remove(on_gc)
    worst = max(range(len(gaps)), key=gaps.__getitem__)
    ends = np.cumsum(gaps) / 1e3
    steady = max(g for g, end in zip(gaps, ends, strict=True) if end > 2.0)  # after both jobs started
    print(f"longest stall {gaps[worst]:.0f} ms ending at {ends[worst]:.1f} s; "
          f"longest GC pauses: {sorted(pauses, reverse=True)[:3]}", flush=True)
    index = panel.indexer.indexes[handle.name]
    typed = handle.contextual_vectors("She deposited the money at the bank on Monday.")
    q = typed.vectors[-1, [w.lower() for w in typed.words].index("bank")]
    times = []
    for _ in range(200):
        t = time.perf_counter()
        index.neighbours("bank", q, index.layers - 1, k=10)
        times.append(time.perf_counter() - t)
    times.sort()
    curve_ms = big_curve_redraw()
    body = "\n".join([
        "## Explorer speed (offscreen, real widgets)", "", f"Machine: {machine()}", "",
        "| measure | value |", "|---|---:|",
        f"| cold start → window shown (median of {args.runs}) | {window_s:.2f} s |",
        f"| cold start → {n_models} default models loaded | {models_s:.2f} s |",
        f"| longest event-loop stall during a GPT-tiny training process + a {handle.name} index build | "
        f"{max(gaps):.0f} ms (probe every 10 ms, {len(gaps):,} samples; it ended {ends[worst]:.1f} s after both "
        f"jobs were started) |",
        f"| the same, after the first 2 s (both jobs running) | {steady:.0f} ms |",
        f"| corpus index of {handle.name} on `default` ({index.info['occurrences']:,} occurrences of "
        f"{index.info['words']:,} words, {index.info['memory_mb']} MB) built/loaded in | {build_s:.0f} s "
        f"(index build alone: {index.info['build_seconds']} s) |",
        f"| neighbour query (\"bank\", top 10, last layer) p50 / p95 | {times[100] * 1e3:.2f} / {times[190] * 1e3:.2f} ms |",
        f"| loss plot with 300,000 points: one redraw (new point appended + repaint), median of 20 | {curve_ms:.1f} ms |"])
    print(body)
    write_section("explorer-speed", body)
    win.close()
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown (see the closing note: a PySide6 teardown crash after both jobs)


if __name__ == "__main__":
    main()
