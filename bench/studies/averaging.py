"""Weight averaging (word2bert-export --average-with): saves of one masked LM and means of them, side by side.

Each candidate is a save or the uniform mean of several (built with the engine's own export into a temporary
folder). The measure that chooses among them is held-out masked words: one word of every held-out sentence of
the default corpus masked, in two draws (seeds 1 and 2) no earlier choice looked at; beside it the usual first
1,000 sentences (seed 0, as bench/quality/model_quality.py), the cloze set and sense separation (best and last layer).

    python bench/studies/averaging.py --name A=RUN[+SAVE...] [--name B=...] ... [--section KEY --title TITLE]
        [--wic] [--min-senses 0.965 --min-wic 0.63]

(--section: another section of bench/RESULTS.md, so a later comparison — of a new recipe's run against the
shipped model, say — stands beside the first instead of replacing it. --wic: also WiC dev at the layer chosen on
WiC train. --min-senses / --min-wic: guards declared with a run — only candidates whose sense separation at the last
layer, and whose WiC dev, reach them can be chosen.)
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine import api  # noqa: E402
from engine.cli.export import export_slim  # noqa: E402
from engine.inspection.quality import (  # noqa: E402
    cloze_items,
    cloze_scores,
    masked_word_hits,
    masked_word_scores,
    sense_separation,
)

SEEDS = (1, 2)
FIRST = 1000  # bench/quality/model_quality.py's held-out masked words: the first 1,000 sentences, seed 0


def pooled(handle: object, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every draw of SEEDS (one masked word per sentence each), word by word: first guess right, in the top ten."""
    hits = [masked_word_hits(handle, sentences, seed=s) for s in SEEDS]
    return np.concatenate([h[0] for h in hits]), np.concatenate([h[1] for h in hits])


def paired_difference(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[float, float]:
    """How much more a scores than b on the same masked words (top-1 + top-10 a word, as the choice sums them):
    the mean difference a word and the half-width of its 95% interval (normal, paired: the two models met the
    same words, so what one word costs both cancels)."""
    diff = (a[0].astype(float) + a[1]) - (b[0].astype(float) + b[1])
    return float(diff.mean()), float(1.96 * diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("inf")


def verdict(best: tuple[Any, ...], rows: list[tuple[Any, ...]]) -> str:
    """What the chosen candidate's lead over each other one is: beyond the noise of the masked words, or within it."""
    said = []
    for row in rows:
        if row is best:
            continue
        mean, half = paired_difference(best[9], row[9])
        words = len(best[9][0])
        more1, more10 = int(best[9][0].sum() - row[9][0].sum()), int(best[9][1].sum() - row[9][1].sum())
        where = "beyond the noise" if abs(mean) > half else "within the noise"
        said.append(f"over {row[0]}: {more1:+,} words of {words:,} at the top, {more10:+,} in the top ten "
                    f"({mean:+.4f} ± {half:.4f} a word, paired 95% interval: {where})")
    return ("The chosen candidate's lead " + "; ".join(said) + ".") if said else ""


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--name", action="append", required=True,
                   help="LABEL=SAVE or LABEL=SAVE+SAVE+... (the mean of those saves)")
    p.add_argument("--section", default="levers-averaging", help="the RESULTS.md section to write")
    p.add_argument("--title", default="Training levers: weight averaging")
    p.add_argument("--wic", action="store_true", help="also WiC dev (the layer chosen on WiC train; slow)")
    p.add_argument("--min-senses", type=float, default=0.0, help="a candidate's sense separation at the last layer")
    p.add_argument("--min-wic", type=float, default=0.0, help="a candidate's WiC dev (needs --wic)")
    args = p.parse_args()
    held = list(api.corpus_sample("default", n=100_000, part="heldout"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, spec in enumerate(args.name):
            label, _, saves = spec.partition("=")
            parts = saves.split("+")
            folder = parts[0]
            if len(parts) > 1:
                folder = str(export_slim(parts[0], Path(tmp) / f"mean-{i}", average_with=parts[1:]))
            handle = api.load(folder)
            hits = pooled(handle, held)
            top1, top10, n = float(hits[0].mean()), float(hits[1].mean()), len(hits[0])
            first = masked_word_scores(handle, held[:FIRST])
            cloze = cloze_scores(handle)
            senses = sense_separation(handle)
            wic = (float("nan"), -1)
            if args.wic:
                from bench.quality.model_quality import wic_by_layer

                accs, layer = wic_by_layer(handle, 1500)
                wic = (accs[layer], layer)
            rows.append((label, saves, top1, top10, n, first, cloze, senses, wic, hits))
            print(f"{label}: {top1:.4f} / {top10:.4f} over {n} words; cloze {cloze['cloze_top10']:.3f}; "
                  f"senses {float(senses[-1]):.3f} (last layer); WiC dev {wic[0]:.3f}", flush=True)
            api.release_memory()

    def allowed(row: tuple[Any, ...]) -> bool:
        return float(row[7][-1]) >= args.min_senses and (not args.wic or row[8][0] >= args.min_wic)

    within = [r for r in rows if allowed(r)]
    best = max(within, key=lambda r: r[2] + r[3]) if within else None  # none within the guards: none chosen
    lines = [f"## {args.title}", "",
             f"`python bench/studies/averaging.py {shlex.join(sys.argv[1:])}`: saves of masked LMs "
             "and uniform means of them (`word2bert-export RUN --to slim OUT --average-with SAVE…`). The measure "
             f"that chooses is held-out masked words: one word of each of the {len(held):,} held-out sentences of the "
             f"default corpus, in {len(SEEDS)} draws no earlier choice looked at ({rows[0][4]:,} words); beside it the "
             f"first {FIRST:,} sentences' draw of bench/quality/model_quality.py, the cloze set (a test set: never used to "
             "choose) and sense separation on the sense set.",
             f"Machine: {machine()}", "",
             "| candidate | saves | held-out masked words, all draws: top-1 / top-10 | first 1,000 (model_quality) "
             "| cloze top-1 / top-10 | cloze: a wrong first guess the sentence shows | sense separation: best (layer) / last |"
             + (" WiC dev (layer) |" if args.wic else ""),
             "|---|---|---:|---:|---:|---:|---|" + ("---:|" if args.wic else "")]
    for row in rows:
        label, saves, top1, top10, _, first, cloze, senses, wic, _ = row
        mark = " **chosen**" if row is best else ("" if allowed(row) else " (below a guard)")
        lines.append(f"| {label}{mark} | {saves.replace('+', ' + ')} | {top1:.4f} / {top10:.4f} | "
                     f"{first['masked_top1']:.3f} / {first['masked_top10']:.3f} | "
                     f"{cloze['cloze_top1']:.3f} / {cloze['cloze_top10']:.3f} | {cloze['cloze_copied']:.3f} | "
                     f"{float(np.max(senses)):.3f} ({int(np.argmax(senses))}) / {float(senses[-1]):.3f} |"
                     + (f" {wic[0]:.3f} ({wic[1]}) |" if args.wic else ""))
    guards = (f", among those with sense separation at the last layer ≥ {args.min_senses:g}"
              + (f" and WiC dev ≥ {args.min_wic:g}" if args.wic else "") if args.min_senses or args.min_wic else "")
    none_chosen = ("" if best is not None else " **No candidate is within the guards: none is chosen** (the model shipped "
               "before stays).")
    lead = verdict(best, rows) if best is not None else ""
    lines += ["", f"Chosen: the highest top-1 + top-10 over all draws{guards}.{none_chosen} {lead} The cloze set's "
              f"differences are of its {len(cloze_items())} items: a few items either way are its noise."]
    write_section(args.section, "\n".join(lines))


if __name__ == "__main__":
    main()
