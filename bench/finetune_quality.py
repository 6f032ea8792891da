"""Fine-tuning quality and speed: what pre-training buys on BBC News topics and Twitter NER.

For each model and strategy (pretrained-full, pretrained-frozen, from-scratch; the same split, seed and
settings) it fine-tunes with the engine's own loop and records the best validation metric, the steps
and the fine-tuning speed (median of the logged examples/s). Writes its section of bench/RESULTS.md.

    python bench/finetune_quality.py                 # BERT-tiny and ELMo-tiny on BBC, BERT-tiny on NER
    python bench/finetune_quality.py --device cuda   # on a GPU
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._report import machine, write_section  # noqa: E402

STRATEGIES = ("full", "frozen", "scratch")


def run(model: str, task: str, strategy: str, args: argparse.Namespace, root: Path) -> dict:
    from engine import api

    spec = api.FinetuneSpec(model=model, task=task, out=str(root / f"{model}-{task}-{strategy}"), strategy=strategy,
                            epochs=args.epochs, batch_size=args.batch_size, max_len=args.max_len, device=args.device,
                            log_every=10)
    t0 = time.perf_counter()
    speeds, metric, finished, started = [], "", None, None
    for ev in api.finetune(spec):
        if isinstance(ev, api.RunStarted):
            started, metric = ev, ev.info["metric"]
        elif isinstance(ev, api.StepMetrics) and ev.step > 10:  # after warm-up
            speeds.append(ev.throughput)
        elif isinstance(ev, api.RunFinished):
            finished = ev
    assert finished is not None and started is not None
    result = {"model": model, "task": task, "strategy": strategy, "metric": metric,
              "best": finished.metrics.get(f"best_{metric}", float("nan")), "steps": finished.step,
              "seconds": time.perf_counter() - t0, "examples_per_s": statistics.median(speeds) if speeds else 0.0,
              "device": started.device, "trainable": started.info["trainable_parameters"]}
    print(result, flush=True)
    return result


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="bert-tiny,elmo-tiny")
    p.add_argument("--ner-models", default="bert-tiny")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-len", type=int, default=128)
    p.add_argument("--device", default=None)
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for task, models in (("bbc-topics", args.models), ("twitter-ner", args.ner_models)):
            for model in filter(None, models.split(",")):
                for strategy in STRATEGIES:
                    rows.append(run(model, task, strategy, args, Path(tmp)))
    lines = ["## Fine-tuning: what pre-training buys (BBC News topics, Twitter NER)", "",
             f"Machine: {machine()}", "",
             f"`python bench/finetune_quality.py`: each row fine-tunes with the engine's loop on the task's fixed "
             f"split ({args.epochs} epochs, batch {args.batch_size}, max {args.max_len} tokens, default learning rates: "
             "1e-3 frozen, 2e-4 otherwise; seed 0). Best validation metric over the run's validations; speed = median "
             "examples/s of the logged steps.", "",
             "| task | model | strategy | best validation | steps | weights that learn | examples/s | wall s | device |",
             "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['task']} | {r['model']} | {r['strategy']} | {r['metric']} {r['best']:.3f} | {r['steps']} | "
                     f"{r['trainable']:,} | {r['examples_per_s']:.0f} | {r['seconds']:.0f} | {r['device']} |")
    lines.append("")
    for task in ("bbc-topics", "twitter-ner"):
        for model in {r["model"] for r in rows if r["task"] == task}:
            by = {r["strategy"]: r["best"] for r in rows if r["task"] == task and r["model"] == model}
            if {"full", "scratch"} <= set(by):
                gap = 100 * (by["full"] - by["scratch"])
                verdict = "meets" if gap >= 5 else "misses"
                lines.append(f"- {task}, {model}: pretrained-full − from-scratch = {gap:+.1f} points "
                             f"({verdict} the ≥ 5-point target); frozen {100 * by.get('frozen', float('nan')):.1f}.")
    body = "\n".join(lines)
    print(body)
    write_section("finetune-quality", body)


if __name__ == "__main__":
    main()
