"""ELMo's blank with the word's prior divided out, against the plain product of its two one-sided guesses, by the
rule declared in bench/studies/RESULTS.md ("ELMo's blank: divide out the word's prior?", before any result): top-1
and top-10 hit rates on development blanks (one random word, letters only, seed 1, masked in each of the held-out
sentences 1,001–3,000 of the default corpus), the paired difference's 95% bootstrap interval over the blanks. The
blank-filling bench's blanks (the cloze set; seed 0 in the first 1,000 held-out sentences) are scored after, for
the record.

    python bench/studies/elmo_blank_prior.py [--model elmo-tiny]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402
from bench.quality.blank_filling import ElmoBlank, interval  # noqa: E402
from engine import api  # noqa: E402
from engine.inspection.quality import cloze_scores, masked_word_hits  # noqa: E402

WAYS = {"product": False, "prior divided out": True}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="elmo-tiny")
    args = p.parse_args()
    handle = api.load(args.model)
    held = list(api.corpus_sample("default", n=100_000, part="heldout"))
    dev, test = held[1000:3000], held[:1000]
    found = {}
    for way, prior in WAYS.items():
        asker = ElmoBlank(handle, prior=prior)
        found[way] = (masked_word_hits(asker, dev, seed=1), masked_word_hits(asker, test, seed=0), cloze_scores(asker))
        print(way, [a.mean() for a in found[way][0]], [a.mean() for a in found[way][1]], found[way][2], flush=True)
    (p1, p10) = found["product"][0]
    (c1, c10) = found["prior divided out"][0]
    top10 = interval(c10, p10)
    top1 = interval(c1, p1)
    adopted = top10[1] > 0 and top1[0] >= -0.01
    rows = [f"| {way} | {dv[0].mean():.3f} / {dv[1].mean():.3f} | {ts[0].mean():.3f} / {ts[1].mean():.3f} | "
            f"{cz['cloze_top1']:.3f} / {cz['cloze_top10']:.3f} |" for way, (dv, ts, cz) in found.items()]
    verdict = ("**Adopted**: the app divides the prior out" if adopted else "**Not adopted**: the plain product stays")
    body = "\n".join([
        "## ELMo's blank: the results", "",
        f"`python bench/studies/elmo_blank_prior.py --model {args.model}` (rule above; development: {len(p10):,} "
        f"blanks). Machine: {machine()}", "",
        f"Paired difference on the development blanks, prior divided out − product: top-10 {top10[0]:+.3f} (95% "
        f"interval {top10[1]:+.3f} to {top10[2]:+.3f}), top-1 {top1[0]:+.3f} ({top1[1]:+.3f} to {top1[2]:+.3f}). "
        f"{verdict}.", "",
        "| way | dev: held-out 1,001–3,000, seed 1, top-1 / top-10 | test: held-out 1–1,000, seed 0 | test: cloze set |",
        "|---|---:|---:|---:|", *rows])
    print(body)
    write_section("elmo-blank-prior", body)


if __name__ == "__main__":
    main()
