"""Fine-tuning quality and speed: what pre-training buys on BBC News topics and Twitter NER.

For each model and strategy (pretrained-full, pretrained-frozen, from-scratch; the same split, seed and
settings) it fine-tunes with the engine's own loop and records the best validation metric, the steps
and the fine-tuning speed (median of the logged examples/s). Writes its section of bench/RESULTS.md.

    python bench/quality/finetune_quality.py                 # BERT-tiny and ELMo-tiny on BBC, BERT-tiny on NER
    python bench/quality/finetune_quality.py --device cuda   # on a GPU
    python bench/quality/finetune_quality.py --tasks bbc-topics --models bert-tiny --eval-every 15 --curves assets/curves
        # also keep each task's validation curves (the talk's last step shows the shipped ones)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

STRATEGIES = ("full", "frozen", "scratch")


ROWS = Path(__file__).with_name("finetune_rows.json")  # the raw rows behind the table (rerun one task, keep the rest)
# tagging learns slowly from mostly-"O" labels: more epochs and a larger step than classification
TASK_SETTINGS = {"bbc-topics": {}, "twitter-ner": {"epochs": 5, "lr": 1e-3}}


def run(model: str, task: str, strategy: str, args: argparse.Namespace, root: Path) -> dict:
    from engine import api

    settings = {"epochs": args.epochs, "lr": None, **TASK_SETTINGS.get(task, {})}
    spec = api.FinetuneSpec(model=model, task=task, out=str(root / f"{model}-{task}-{strategy}"), strategy=strategy,
                            batch_size=args.batch_size, max_len=args.max_len, device=args.device, log_every=10,
                            eval_every=args.eval_every, **settings)
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
              "device": started.device, "trainable": started.info["trainable_parameters"],
              "epochs": spec.epochs, "lr": spec.learning_rate(), "out": spec.out}
    print(result, flush=True)
    return result


def write_curves(folder: Path, task: str, model: str, run_dirs: list[str | Path]) -> None:
    from engine import api

    command = "python bench/quality/finetune_quality.py " + " ".join(sys.argv[1:])
    curves = api.curves_from_runs(run_dirs, made_by=f"{command} ({machine()}, {time.strftime('%Y-%m-%d')})")
    curves.task, curves.model = task, model
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{task}-{model}.json").write_text(curves.to_json(), encoding="utf-8")


def often(rows: list[dict]) -> str:
    """What the rows validated more often than about 8 times a run say of themselves (and where their curves are)."""
    groups: dict[tuple[str, str], dict] = {}
    for r in rows:
        if r.get("eval_every"):
            groups.setdefault((r["task"], r["model"]), r)
    return "".join(f" The {task} {model} rows validated every {r['eval_every']} steps"
                   + ("; their curves are in assets/curves/ (the talk's last step)" if r.get("curves") else "") + "."
                   for (task, model), r in groups.items())


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="bert-tiny,elmo-tiny")
    p.add_argument("--ner-models", default="bert-tiny")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-len", type=int, default=128)
    p.add_argument("--device", default=None)
    p.add_argument("--tasks", default="bbc-topics,twitter-ner", help="tasks to (re)run (with --models / --ner-models); the other rows are kept")
    p.add_argument("--eval-every", type=int, default=0, help="steps between validations (0: about 8 per run)")
    p.add_argument("--curves", default="", help="a folder to write each task's validation curves to (TASK-MODEL.json)")
    args = p.parse_args()
    tasks = args.tasks.split(",")
    plan = [(task, model) for task, models in (("bbc-topics", args.models), ("twitter-ner", args.ner_models))
            if task in tasks for model in filter(None, models.split(","))]
    kept = [r for r in (json.loads(ROWS.read_text()) if ROWS.exists() else []) if (r["task"], r["model"]) not in plan]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for task, model in plan:
            done = [run(model, task, strategy, args, Path(tmp)) for strategy in STRATEGIES]
            rows += done
            outs = [r.pop("out") for r in done]
            for r in done:
                r["eval_every"] = args.eval_every  # (0: about 8 validations a run)
                r["curves"] = bool(args.curves)
            if args.curves:
                write_curves(Path(args.curves), task, model, outs)
    rows = sorted(kept + rows, key=lambda r: (r["task"], r["model"], STRATEGIES.index(r["strategy"])))
    ROWS.write_text(json.dumps(rows, indent=1))
    lines = ["## Fine-tuning: what pre-training buys (BBC News topics, Twitter NER)", "",
             f"Machine: {machine()}", "",
             "`python bench/quality/finetune_quality.py`: each row fine-tunes with the engine's loop on the task's fixed "
             f"split (batch {args.batch_size}, max {args.max_len} tokens, seed 0; BBC: the default learning rates, 1e-3 "
             "frozen and 2e-4 otherwise; NER: 1e-3 for all three, as tagging learns slowly from mostly-O labels). Best "
             "validation metric over the run's validations; speed = median examples/s of the logged steps."
             + often(rows), "",
             "| task | model | strategy | epochs | lr | best validation | steps | weights that learn | examples/s | "
             "wall s | device |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['task']} | {r['model']} | {r['strategy']} | {r.get('epochs', 3)} | {r.get('lr', 0):.0e} | "
                     f"{r['metric']} {r['best']:.3f} | {r['steps']} | {r['trainable']:,} | {r['examples_per_s']:.0f} | "
                     f"{r['seconds']:.0f} | {r['device']} |")
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
