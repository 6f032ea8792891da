"""Left-to-right language models side by side, by the rule their continued runs are declared with (assets/checkpoints/
README.md): perplexity per word on the held-out sentences of the default corpus — in the model's own vocabulary and
open vocabulary (a word-level model pays for spelling each word it does not know, as GPT pays for its pieces) — and
sense separation by layer. The candidate chosen is the one with the lowest open-vocabulary perplexity among those
whose sense separation at their best layer reaches ``--min-senses`` (the guard declared with the run); the cloze set
is not scored: it is never used to choose. Each candidate's perplexity is also set against the first one's on the same
sentences, with a paired 95% interval, so that a lead within the noise of the held-out set reads as such.

    python bench/studies/language_models.py --name shipped=elmo-tiny --name run=runs/elmo-tiny-on3 \
        [--name slim=FOLDER ...] [--min-senses 0.55 | --side-by-side] [--section KEY --title TITLE]

A ``--side-by-side`` probe only prints its table unless it is given a ``--section``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine import api  # noqa: E402
from engine.inspection.quality import (  # noqa: E402
    Spelling,
    perplexity_ratio,
    sense_separation,
    sentence_logprobs,
)


class Scored(NamedTuple):
    label: str
    model: str
    own: float  # perplexity per word in its own vocabulary (every unknown word one <unk>)
    spelled: float  # open vocabulary
    unknown: int  # the held-out words it did not know
    senses: list[float]  # sense separation by layer
    each: np.ndarray | None = None  # each held-out sentence's open-vocabulary log-probability


def chosen(rows: list[Scored], min_senses: float) -> Scored | None:
    """The lowest open-vocabulary perplexity among the candidates whose best layer separates senses at least
    ``min_senses`` (None: none does; a model without layers, an n-gram, reaches a guard of 0 only)."""
    within = [row for row in rows if max(row.senses, default=0.0) >= min_senses]
    return min(within, key=lambda row: row.spelled) if within else None


def senses_of(handle: object) -> list[float]:
    """Sense separation by layer; none for a model that gives every word one vector (an n-gram)."""
    try:
        return [float(x) for x in sense_separation(handle)]
    except api.Unsupported:
        return []


def senses_cell(senses: list[float]) -> str:
    if not senses:
        return "— (no layers)"
    layer = int(np.argmax(senses))
    return f"{', '.join(f'{x:.3f}' for x in senses)} ({senses[layer]:.3f} at {layer})"


def against(row: Scored, first: Scored, words: np.ndarray) -> str:
    """``row``'s open-vocabulary perplexity over ``first``'s on the same sentences, with its paired 95% interval
    and whether the difference is beyond the noise of the sentences."""
    if row is first or row.each is None or first.each is None:
        return "—"
    ratio, low, high = perplexity_ratio(row.each, first.each, words)
    where = "beyond the noise" if high < 1 or low > 1 else "within the noise"
    return f"×{ratio:.3f} ({low:.3f}–{high:.3f}, {where})"


def section_to_write(section: str | None, side_by_side: bool) -> str | None:
    """The RESULTS.md section a run writes: the one it is given; else a choice writes the default one, and a side by
    side probe none (it had replaced the last choice's section with a probe's table)."""
    return section or (None if side_by_side else "language-model-choice")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--name", action="append", required=True, help="LABEL=MODEL (a shipped name or a run folder)")
    p.add_argument("--min-senses", type=float, default=0.0, help="the guard: sense separation at the best layer")
    p.add_argument("--section", default=None, help="the RESULTS.md section to write (default: language-model-choice; "
                   "a --side-by-side probe writes none unless given one, it prints its table)")
    p.add_argument("--title", default="Left-to-right language models by the declared rule")
    p.add_argument("--side-by-side", action="store_true", help="score and compare only; choose nothing")
    args = p.parse_args()
    held = list(api.corpus_sample("default", n=100_000, part="heldout"))
    spelling = Spelling({w for s in api.corpus_sample("default", n=10**9, part="train") for w in api.word_tokenize(s)})
    rows = []
    for spec in args.name:
        label, _, model = spec.partition("=")
        handle = api.load(model)
        each = sentence_logprobs(handle, held, spelling)
        words = each.words
        senses = senses_of(handle)
        rows.append(Scored(label, model, float(np.exp(-each.own.sum() / words.sum())),
                           float(np.exp(-each.spelled.sum() / words.sum())), each.unknown, senses, each.spelled))
        print(f"{label}: {rows[-1].own:.1f} per word ({rows[-1].spelled:.1f} open vocabulary); senses "
              f"{senses_cell(senses)}", flush=True)
        api.release_memory()
    best = None if args.side_by_side else chosen(rows, args.min_senses)
    rule = ("Side by side: nothing is chosen here (the checkpoint's rule is declared in assets/checkpoints/README.md)."
            if args.side_by_side else "Chosen: the lowest open-vocabulary perplexity whose sense separation at its "
            f"best layer is at least {args.min_senses:g}.")
    lines = [f"## {args.title}", "",
             f"`python bench/studies/language_models.py {shlex.join(sys.argv[1:])}`: perplexity per word on the "
             f"{len(held):,} held-out sentences of the default corpus ({int(words.sum()):,} words; sub-word pieces summed, no "
             "end-of-sentence event), in each model's own vocabulary and open vocabulary (each word a word-level "
             "model does not know paid for by the character bigram model of the train part's word types), and sense "
             f"separation by layer (the sense set, leave-one-out). {rule} Against {rows[0].label}: each "
             "open-vocabulary perplexity divided by its, on the same sentences, with a paired 95% interval over "
             "sentences (below 1: lower).",
             f"Machine: {machine()}", "",
             "| candidate | model | per word, own vocabulary | open vocabulary | against "
             f"{rows[0].label} | unknown words | sense separation by layer (best) |",
             "|---|---|---:|---:|---|---:|---|"]
    for row in rows:
        below = not args.side_by_side and max(row.senses, default=0.0) < args.min_senses
        mark = " **chosen**" if row is best else (" (below the guard)" if below else "")
        lines.append(f"| {row.label}{mark} | {row.model} | {row.own:.1f} | {row.spelled:.1f} | "
                     f"{against(row, rows[0], words)} | {row.unknown:,} | {senses_cell(row.senses)} |")
    body = "\n".join(lines)
    print(body)
    section = section_to_write(args.section, args.side_by_side)
    if section:
        write_section(section, body)


if __name__ == "__main__":
    main()
