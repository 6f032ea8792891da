"""A zoom's own cost on the tabs the chaos bench's slow zooms were on, on two checkouts side by side.

The chaos bench's zooms took 70-130 ms of the window's thread on the Predictions tab with the lab open (the lens
grids of "lens", the causal-tracing map of "capital"), where the same tab without it took 15-30 ms. Per checkout and
round, in a fresh process: the chaos bench's window (its size, GloVe, MiniLM and the default models loaded), each
scene of ``SCENES`` opened and left ``SETTLE_S`` to draw, then ``--zooms`` zooms (in and out in turn), each with the
window's thread left to paint for ``PAUSE_S`` after it. A figure is the zoom's call: the font given to every window
and their layouts settled (``explorer.theme.apply_zoom``); the paint is the next turn's. Also each event's own time
in the zoom (a QApplication's ``notify`` timed, less the events it sent), summed by receiver class and event: where
it went.

    QT_QPA_PLATFORM=offscreen python bench/speed/zoom_lab.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 2] [--zooms 20]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
SCENES = ("masked", "capital", "lens")  # the Predictions tab: without the lab, its causal tracing, its lens grids
SETTLE_S = 25.0  # a scene's models answer and its views draw
PAUSE_S = 0.3
TOP = 4  # the receivers whose own time is listed, per scene


def one(zooms: int) -> dict[str, list[float]]:
    """In this process (its checkout first on sys.path): per scene, each zoom's call in ms, and the events' own time
    a zoom by receiver (``own: SCENE: CLASS: EVENT``, one value: the mean)."""
    import time

    from explorer.worker_threads import sleeping_worker_threads

    sleeping_worker_threads()  # as the app does, before torch is imported
    from PySide6.QtWidgets import QApplication

    class OwnTime(QApplication):
        """Each event's time less the time of the events it sent, by receiver class and event, while ``on``."""

        def __init__(self) -> None:
            super().__init__([])
            self.on = False
            self.nested: list[float] = []
            self.own: dict[str, float] = {}

        def notify(self, receiver, event):  # type: ignore[no-untyped-def]  # noqa: N802 - Qt's name
            if not self.on:
                return super().notify(receiver, event)
            began = time.perf_counter()
            self.nested.append(0.0)
            try:
                return super().notify(receiver, event)
            finally:
                took = time.perf_counter() - began
                inner = self.nested.pop()
                if self.nested:
                    self.nested[-1] += took
                key = f"{type(receiver).__name__}: {getattr(event.type(), 'name', event.type())}"
                self.own[key] = self.own.get(key, 0.0) + took - inner

    app = OwnTime()
    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()
    from bench.robustness.chaos import chaos_window
    from bench.robustness.monkey import wait

    _session, window = chaos_window(app)
    wait(app, 3)
    out: dict[str, list[float]] = {}
    for scene in SCENES:
        window.open_scene(scene)
        wait(app, SETTLE_S)
        app.own.clear()
        for step in [1, -1] * (zooms // 2):
            began = time.perf_counter()
            app.on = True
            window.zoom(step)
            app.on = False
            out.setdefault(f"{scene}: the zoom's call", []).append((time.perf_counter() - began) * 1000)
            wait(app, PAUSE_S)
        for key, seconds in sorted(app.own.items(), key=lambda kv: -kv[1])[:TOP]:
            out[f"own: {scene}: {key}"] = [seconds * 1000 / (zooms // 2 * 2)]
    window.zoom(0)
    return out


def main() -> None:
    from bench._report import machine, write_section
    from bench.checkouts import checkouts_said, side_by_side, side_by_side_parser, spread

    p = side_by_side_parser()
    p.add_argument("--zooms", type=int, default=20, help="zooms per scene and round")
    args = p.parse_args()
    names, results = side_by_side(args, __file__, f"one({args.zooms})")
    lines = ["## A zoom with the lab open", "", f"Machine: {machine()}", "",
             f"`python bench/speed/zoom_lab.py {checkouts_said(args)} "
             f"--zooms {args.zooms}`: the chaos bench's window, each scene of {', '.join(SCENES)} opened on the "
             f"Predictions tab, then {args.zooms} zooms (in and out in turn) per scene, round and checkout, the rounds "
             "alternating in fresh processes, nothing beside. A zoom's call: median / 90th percentile / worst. Then, "
             "per scene, the events that took most of a zoom's time on the window's thread, each less the events it "
             "sent (mean per zoom, each round's mean listed; — where a checkout's event was not among its top "
             f"{TOP}).", "",
             f"| | {names[0]} | {names[1]} |", "|---|---:|---:|"]

    def cell(key: str, values: list[float]) -> str:
        if not values:
            return "—"
        if key.startswith("own: "):
            return " / ".join(f"{v:.1f}" for v in values) + " ms"
        return f"{spread(values)} ms"

    keys = list(dict.fromkeys(k for r in results for k in r))
    for key in sorted(keys, key=lambda k: (k.startswith("own: "), keys.index(k))):
        lines.append(f"| {key.removeprefix('own: ')} | {cell(key, results[0].get(key, []))} | "
                     f"{cell(key, results[1].get(key, []))} |")
    text = "\n".join(lines)
    print(text)
    write_section("zoom-lab", text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
