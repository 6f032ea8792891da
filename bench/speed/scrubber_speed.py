"""The run scrubber: how long moving the slider takes until the polysemy lens (contextual neighbours of
"bank", occurrences on demand) and the masked-LM predictions show the newly selected checkpoint.
Targets (issue 16): ≤ 1 s for tiny models once loaded, ≤ 3 s cold (loaded from disk, occurrences
encoded again).

A tiny BERT run (4 layers × 256, the `tiny` preset) is trained here for a few steps on a slice of the
default corpus with --keep-every, so the checkpoints are real run folders.

    python bench/speed/scrubber_speed.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench._report import machine, write_section  # noqa: E402


def make_run(folder: Path, steps: int = 8) -> Path:
    """A tiny BERT run kept every 2 steps, trained on a 6,000-sentence slice of the default corpus."""
    from engine import api
    from engine.data.corpora import get_corpus

    corpus = folder / "slice.txt"
    sentences = get_corpus("default").sentences("train")
    corpus.write_text("\n".join(s for _, s in zip(range(6000), sentences, strict=False)) + "\n", encoding="utf-8")
    cfg = api.model_config("bert", preset="tiny", batch_size=16, seq_len=64, eval_every=0, keep_every=2)
    spec = api.RunSpec("bert", out=str(folder / "run"), corpus=str(corpus), model=cfg, max_steps=steps, seed=0)
    events = list(api.train(spec))
    assert isinstance(events[-1], api.RunFinished) and events[-1].status == "completed", events[-1]
    return folder / "run"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()  # as the app does (explorer/app.py)

    from explorer.main_window import MainWindow
    from explorer.scenes import Scene
    from explorer.session import Session

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["WORD2BERT_CACHE"] = str(Path(tmp) / "cache")
        run = make_run(Path(tmp))
        window = MainWindow(Session())
        window.resize(1400, 900)
        window.show()
        history = window.history
        history.open_run(str(run))
        alias = f"{run.name} (scrubber)"
        while alias not in window.session.models:
            app.processEvents()
            time.sleep(0.01)
        lens, masked = window.polysemy, window.predictions.masked
        lens.apply_scene(Scene(panel="polysemy", sentences=["We sat on the bank of the river.",
                                                            "She deposited cash at the bank."],
                               selection="bank", models=[alias], contextual_model=alias, view="neighbours"))
        masked.text.setText("She deposited the money at the [MASK].")
        masked.model.setCurrentText(alias)
        window.tabs.setCurrentWidget(window.polysemy)

        def until_shown(action) -> float:
            done = {"lens": False, "masked": False}
            loop = QEventLoop()

            def mark(key: str) -> None:
                done[key] = True
                if all(done.values()):
                    loop.quit()

            a = lens.shown.connect(lambda: mark("lens"))
            b = window.predictions.shown.connect(lambda: mark("masked"))
            timer = QTimer(singleShot=True, interval=120_000)
            timer.timeout.connect(loop.quit)
            t = time.perf_counter()
            action()
            timer.start()
            loop.exec()
            elapsed = time.perf_counter() - t
            lens.shown.disconnect(a)
            window.predictions.shown.disconnect(b)
            if not all(done.values()):
                raise RuntimeError(f"timed out: {done}")
            return elapsed

        until_shown(lambda: lens.select("bank"))  # the last checkpoint, shown once
        steps = [k.step for k in history.history]
        cold, warm = [], []
        for index in range(len(steps) - 2, -1, -1):  # each earlier checkpoint for the first time
            cold.append(until_shown(lambda i=index: history.slider.setValue(i)))
        for _ in range(args.rounds):
            for index in range(len(steps)):
                if index != history.slider.value():
                    warm.append(until_shown(lambda i=index: history.slider.setValue(i)))
        window.close()
    lines = ["## Run scrubber: switching checkpoints with the lens and predictions on screen", "",
             f"Machine: {machine()}", "",
             f"`python bench/speed/scrubber_speed.py`: a `tiny` BERT run (4 layers × 256) trained here for 8 steps with "
             f"`--keep-every 2` ({len(steps)} checkpoints); the polysemy lens shows the contextual neighbours of "
             "*bank* in two sentences (its ~300 corpus occurrences encoded on demand) and the masked-LM view "
             "fills one [MASK]; the clock runs from the slider's move until both show the new step.", "",
             "| switch | n | median | max | target |", "|---|---:|---:|---:|---:|",
             f"| cold (checkpoint read from disk, occurrences encoded) | {len(cold)} | {statistics.median(cold):.2f} s "
             f"| {max(cold):.2f} s | ≤ 3 s |",
             f"| warm (checkpoint in memory, occurrences cached) | {len(warm)} | {statistics.median(warm):.2f} s | "
             f"{max(warm):.2f} s | ≤ 1 s |"]
    body = "\n".join(lines)
    print(body)
    write_section("scrubber-speed", body)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
