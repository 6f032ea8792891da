"""The run monitor's x-axis switched (steps / examples seen, on the Pretrain and Fine-tune tabs), on two checkouts
side by side: the window's thread from the choice to the end of the repaint after it, by how many runs the monitor
keeps (it draws the latest 8 and keeps 40: explorer/widgets/run_monitor.py).

The chaos bench's window (bench/robustness/CHAOS-HISTORY.md, Z68) froze 255-373 ms three times after a choice on the
Fine-tune tab, the GUI thread's samples in the monitor's replot. Each run here: a start (batch 16), its logged
steps, and an evaluation of three metrics every few steps, as a fine-tuning logs them.

    QT_QPA_PLATFORM=offscreen python bench/speed/axis_switch.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 3] [--switches 12]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
SHAPES = ((8, 30, 3), (40, 30, 3), (40, 100, 10))  # runs kept, logged steps a run, evaluations a run


def one(switches: int) -> dict[str, list[float]]:
    """In this process (its checkout first on sys.path): each switch's milliseconds, per shape of the runs."""
    import time

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from engine import api
    from explorer.tasks import responsive_interpreter
    from explorer.widgets.run_monitor import SPEED, RunMonitor

    responsive_interpreter()  # (the app's switch interval)
    out: dict[str, list[float]] = {}
    for runs, steps, evals in SHAPES:
        monitor = RunMonitor("validation", SPEED, examples_axis=True)
        monitor.resize(900, 700)
        monitor.show()
        for r in range(runs):
            name = f"run {r}"
            monitor.show_event(name, api.RunStarted(run_dir=name, kind="finetune", device="cpu", total=steps,
                                                    unit="examples", info={"batch_size": 16}))
            for s in range(1, steps + 1):
                monitor.show_event(name, api.StepMetrics(step=s, epoch=0, progress=s / steps, loss=2.0 / s, lr=1e-3,
                                                         throughput=100.0, unit="examples", elapsed_s=s, eta_s=0))
                if s % max(1, steps // evals) == 0:
                    monitor.show_event(name, api.EvalMetrics(step=s, metrics={
                        "loss": 1.0 / s, "accuracy": s / steps, "macro_f1": s / steps}))
        monitor.redraw_now()
        app.processEvents()
        times = []
        for _ in range(switches + 2):
            began = time.perf_counter()
            monitor.x_axis.setCurrentIndex(1 - monitor.x_axis.currentIndex())
            monitor.repaint()
            app.processEvents()
            times.append((time.perf_counter() - began) * 1000)
        out[f"{runs} runs of {steps} steps, {evals} evaluations each"] = times[2:]  # (two to warm up)
        monitor.close()
        monitor.deleteLater()
        app.processEvents()
    return out


def main() -> None:
    from bench._report import machine, write_section
    from bench.checkouts import checkouts_said, ratio_table, side_by_side, side_by_side_parser

    p = side_by_side_parser(rounds=3)
    p.add_argument("--switches", type=int, default=12, help="switches per shape, per round")
    args = p.parse_args()
    names, results = side_by_side(args, __file__, f"one({args.switches})")

    lines = ["## The run monitor's x-axis switched", "", f"Machine: {machine()}", "",
             f"`QT_QPA_PLATFORM=offscreen python bench/speed/axis_switch.py {checkouts_said(args)} --switches "
             f"{args.switches}`: a run monitor (900 × 700) holding the runs of each row, its x-axis switched between "
             f"steps and examples seen {args.switches} times per round and row, {args.rounds} rounds per checkout, "
             "alternating, each in a fresh process with the app's switch interval. Each figure: milliseconds from "
             "the choice to the end of the repaint after it, median / 90th percentile / worst.", "",
             *ratio_table("runs kept", names, results, 0)]
    text = "\n".join(lines)
    print(text)
    write_section("axis-switch", text)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
