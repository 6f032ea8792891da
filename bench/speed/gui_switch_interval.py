"""The window beside busy workers: how often the GUI thread gets to run while other threads compute, at
CPython's switch intervals (the app's choice: explorer.tasks.SWITCH_INTERVAL_S).

The GUI thread gives the GIL up around calls into Qt and asks for it again on the way back; a thread running
Python keeps it until the switch interval ends. A 10 ms timer redraws four of sixteen plots (pyqtgraph, as the
app's views do) for SECONDS, beside: nothing; two threads running pure Python (the worst case: a corpus read,
a loop of ours); two threads answering bert-tiny queries (fill-mask and contextual vectors: torch releases
the GIL in its kernels). The ticks counted, the median and worst gap between them, and the queries answered.
Each configuration in its own process, all in one run.

    QT_QPA_PLATFORM=offscreen python bench/speed/gui_switch_interval.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SECONDS = 8.0
INTERVALS_MS = (5.0, 1.0, 0.5, 0.2, 0.1)
# how the app's interval is chosen (declared before the 0.2 and 0.1 ms rows were run): the interval whose timer ran
# most often beside pure-Python workers, among those whose query workers answered at least 90% of 0.5 ms's queries
LOADS = ("none", "python", "queries")


def one(interval_ms: float, load: str) -> dict[str, float]:
    """Run in a fresh process: the redraw timer beside two workers of ``load``."""
    import threading
    import time

    import numpy as np
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()  # as the app does (explorer/app.py)

    app = QApplication(sys.argv[:1])
    import pyqtgraph as pg

    handle = None
    if load == "queries":
        import torch

        from engine import api

        torch.set_num_threads(1)
        handle = api.load("bert-tiny")
    sys.setswitchinterval(interval_ms / 1000)
    view = pg.GraphicsLayoutWidget()
    view.resize(1200, 800)
    view.show()
    plots = [view.addPlot(row=i // 4, col=i % 4) for i in range(16)]
    rng = np.random.default_rng(0)
    for plot in plots:
        plot.plot(rng.random(200))
    stop = threading.Event()
    answered = [0]

    def busy() -> None:
        while not stop.is_set():
            if handle is None:
                total = 0
                for i in range(1000):
                    total += i * i
            else:
                handle.fill_mask("The river bank was muddy after the [MASK] and the children played by the water.")
                handle.contextual_vectors("She deposited the money at the bank before the match began.")
                answered[0] += 1

    workers = [threading.Thread(target=busy, daemon=True) for _ in range(0 if load == "none" else 2)]
    for w in workers:
        w.start()
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000)
        last[0] = now
        for plot in plots[:4]:
            plot.plot(rng.random(200), clear=True)

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(10)
    began = time.perf_counter()
    while time.perf_counter() - began < SECONDS:
        app.processEvents()
        time.sleep(0.002)
    stop.set()
    g = np.array(gaps[5:] or [SECONDS * 1000])
    return {"ticks": float(len(gaps)), "median": float(np.median(g)), "worst": float(g.max()),
            "queries": float(answered[0])}


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(one(float(sys.argv[2]), sys.argv[3])))
        return
    from bench._report import machine, write_section
    from explorer.tasks import SWITCH_INTERVAL_S

    rows = []
    for load in LOADS:
        for interval in INTERVALS_MS:
            out = subprocess.run([sys.executable, __file__, "--one", str(interval), load], capture_output=True,
                                 text=True, check=True).stdout.strip().splitlines()[-1]
            r = json.loads(out)
            rows.append(f"| {load} | {interval:g} ms | {r['ticks']:.0f} | {r['median']:.0f} ms | {r['worst']:,.0f} ms | "
                        f"{r['queries']:.0f} |" if load == "queries" else
                        f"| {load} | {interval:g} ms | {r['ticks']:.0f} | {r['median']:.0f} ms | {r['worst']:,.0f} ms | — |")
            print(rows[-1], flush=True)
    body = f"""## The window beside busy workers: the interpreter's switch interval

`QT_QPA_PLATFORM=offscreen python bench/speed/gui_switch_interval.py` ({machine()}). A 10 ms timer redraws four
of sixteen pyqtgraph plots for {SECONDS:g} s on the GUI thread beside two worker threads: none, pure Python, or
bert-tiny queries (fill-mask + contextual vectors, one torch thread each). Ticks: how many times the timer
ran ({SECONDS * 100:.0f} at most); gaps between ticks; queries the two workers answered meanwhile. Each row in its
own process; the app sets {SWITCH_INTERVAL_S * 1000:g} ms (`explorer.tasks.SWITCH_INTERVAL_S`; CPython's default is 5 ms),
chosen by a rule declared before the 0.2 and 0.1 ms rows were run: the most ticks beside pure-Python workers,
among the intervals whose query workers answered at least 90% of the queries they answered at 0.5 ms.

| workers | switch interval | ticks | median gap | worst gap | queries answered |
|---|---|---:|---:|---:|---:|
{chr(10).join(rows)}
"""
    write_section("gui-switch-interval", body)
    print(body)


if __name__ == "__main__":
    main()
