"""What a run's CPU time bought: for each run folder given, its training levers (from its config: family,
size, NSP, whole-word masking, GloVe-initialised embeddings, a distillation teacher, an adapted foreign
encoder), the CPU time and tokens it took (from its metrics.jsonl, summed over resumes), its held-out
metrics, and its scores now on the bundled sets: sense separation (best layer) beside the GloVe
bag-of-context baseline, and cloze top-10.

    python bench/studies/levers.py RUN [RUN ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402


def training_seconds(run: Path) -> float:
    """CPU-clock seconds of training: each segment's (start to last step) elapsed time, summed over resumes."""
    total, segment = 0.0, 0.0
    for line in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "started":
            total += segment
            segment = 0.0
        elif event.get("event") == "step":
            segment = max(segment, float(event.get("elapsed_s", 0.0)))
    return total + segment


def levers(config: dict) -> str:
    model = config.get("model", {})
    if config["kind"] == "mlm-head":
        start = (f", starting from {Path(str(model['init_from'])).name} ({config.get('init_from_steps', 0):,} steps)"
                 if model.get("init_from") else "")
        seq = f", seq {model.get('seq_len')}" if model.get("seq_len") != 128 else ""
        seq += " of whole sentences" if model.get("windows") == "sentences" else ""
        layer = f" at layer {model['sense_layer']}" if model.get("sense_layer") else ""
        senses = (f", + word senses from {config.get('sense_pairs_trained', 0):,} word-in-context pairs of "
                  f"{Path(str(model['sense_pairs'])).name} ({model.get('sense_batch')} a step, weight "
                  f"{model.get('sense_weight')}{layer}), lr {model.get('lr')}" if model.get("sense_pairs") else "")
        return f"adapt {model.get('base')}: masked-LM head + top {model.get('train_layers')} layers{seq}{start}{senses}"
    if config["kind"] == "clm-head":
        return (f"{model.get('base')} made causal (a GPT from its weights): next-token head + top "
                f"{model.get('train_layers')} layers, seq {model.get('seq_len')}, lr {model.get('lr')}")
    parts = [f"{config['kind']} {model.get('preset', '')}".strip(), f"seq {model.get('seq_len')}",
             f"lr {model.get('lr')}"]
    if config["kind"] in ("bert", "gpt") and model.get("hidden") != 256:
        parts.append(f"{model.get('layers')} layers × {model.get('hidden')}")
    if config["kind"] == "bert":
        parts.append("NSP" if model.get("nsp") else "no NSP")
        if model.get("whole_word"):
            parts.append("whole-word")
    if model.get("dropout") == 0:
        parts.append("dropout 0")
    if model.get("init_embeddings"):
        parts.append(f"embeddings from {model['init_embeddings']}")
    map_note = ", no map: its own states" if model.get("distill_map") == "identity" else ""
    if config.get("soft_targets_from"):
        parts.append(f"distilled from the masked LM {model['teacher']}: its vocabulary, its predictions (soft "
                     f"targets, weight {model.get('soft_weight')}, temperature {model.get('temperature')}) and its "
                     f"states (weight {model.get('distill_weight')}{map_note})")
    elif model.get("teacher"):
        parts.append(f"distilled from {model['teacher']} (weight {model.get('distill_weight')}{map_note})")
    return ", ".join(parts)


def wic_dev(handle) -> str:
    """WiC dev accuracy at the layer (and threshold) that does best on WiC train."""
    from bench.quality.wic_sense_separation import dev_accuracy_by_layer, read_split

    dev_accs, train_accs, _ = dev_accuracy_by_layer(handle, read_split("train", 1500), read_split("dev"))
    layer = max(range(len(train_accs)), key=train_accs.__getitem__)
    return f"{dev_accs[layer]:.3f} (layer {layer})"


SCORES = ".levers-scores.json"  # a run's scores, kept beside its weights (keyed by the save they were made of)


def scores(run: Path, config: dict, with_wic: bool) -> tuple[dict, dict, str]:
    """(senses, cloze, WiC dev text) of the run's saved weights; computed once per save, then read back."""
    from engine import api
    from engine.inspection.history_scores import quality

    path = run / SCORES
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        kept = {}
    if kept.get("save_id") != config.get("save_id"):
        kept = {"save_id": config.get("save_id")}
    if "senses" not in kept or (with_wic and "wic" not in kept):
        handle = api.load(run)
        if "senses" not in kept:
            kept["senses"], kept["cloze"] = quality(handle, "senses"), quality(handle, "cloze")
        if with_wic:
            kept["wic"] = wic_dev(handle)
        path.write_text(json.dumps(kept), encoding="utf-8")
    return kept["senses"], kept["cloze"], kept.get("wic", "") if with_wic else ""


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("runs", nargs="+")
    p.add_argument("--budget", type=float, default=None,
                   help="the runs were each stopped by --max-minutes BUDGET: write the equal-budget table")
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                   help="what the budget counted (--budget-clock of the runs; bench/studies/levers_budget.sh: cpu)")
    p.add_argument("--wic", action="store_true", help="also WiC dev (the layer chosen on WiC train)")
    p.add_argument("--section", default=None, help="the RESULTS.md section to write (default: levers, or "
                   "levers-BUDGETmin): a new set of runs keeps the tables of earlier sets, whose folders may be gone")
    p.add_argument("--title", default=None, help="the section's heading")
    args = p.parse_args()
    from engine import api
    from engine.handles.history import tokens_seen
    from engine.inspection.quality import glove_context_baseline

    baseline = glove_context_baseline(api.load("glove-6b-50d"))
    rows = []
    for run_name in args.runs:
        run = Path(run_name)
        config = json.loads((run / "config.json").read_text(encoding="utf-8"))
        senses, cloze, wic = scores(run, config, args.wic)
        held = config.get("metrics", {})
        held_text = ", ".join(f"{k} {v:.3f}" for k, v in held.items() if k in ("mlm_accuracy", "mlm_top10", "perplexity"))
        tokens = tokens_seen(run)
        rows.append(f"| {run.name} | {levers(config)} | {config.get('trained_steps', 0):,} | "
                    f"{(tokens or 0) / 1e6:.1f}M | {training_seconds(run) / 60:.0f} | {held_text or '—'} | "
                    f"{senses.get('best', float('nan')):.3f} (layer {senses.get('best_layer', '?')}) | "
                    + (f"{cloze['cloze_top10']:.3f}" if "cloze_top10" in cloze else "—") + " |"
                    + (f" {wic} |" if args.wic else ""))
        print(rows[-1], flush=True)
    heading = ("## Training levers: what each run's CPU time bought" if args.budget is None else
               f"## Training levers: what {args.budget:g} CPU minutes buy")
    heading = f"## {args.title}" if args.title else heading
    clock = ("`--budget-clock cpu`: the CPU time the run's own process used, two runs side by side on two cores"
             if args.clock == "cpu" else "wall time from the command's start")
    budget = ("" if args.budget is None else
              f"Every run was started with `--max-minutes {args.budget:g}` on one thread ({clock}; corpus reading and "
              "tokenizer training included; a teacher's forward passes count against its run), its learning rate "
              "decaying to 0 when the budget is spent (`--budget-schedule`), and is scored as it stood at its end. ")
    wic_note = " WiC dev: the cosine threshold and the layer chosen on 1,500 WiC train pairs." if args.wic else ""
    body = "\n".join([
        heading, "", f"Machine: {machine()}", "",
        f"`python bench/studies/levers.py RUN …{' --budget ' + format(args.budget, 'g') if args.budget else ''}"
        f"{' --wic' if args.wic else ''}`: {budget}Each run's levers (from its config), steps, tokens seen, training "
        f"minutes (wall clock of its steps, summed over resumes), held-out metrics at its last evaluation, and its "
        f"scores now: sense separation (best layer; the GloVe bag-of-context baseline is **{baseline:.3f}**) and "
        f"cloze top-10 (72 items).{wic_note}", "",
        "| run | levers | steps | tokens | minutes | held-out | senses (best layer) | cloze top-10 |"
        + (" WiC dev |" if args.wic else ""),
        "|---|---|---:|---:|---:|---|---:|---:|" + ("---:|" if args.wic else ""), *rows])
    write_section(args.section or ("levers" if args.budget is None else f"levers-{args.budget:g}min"), body)
    print(body)


if __name__ == "__main__":
    main()
