"""Held-out perplexity of the shipped left-to-right models and ELMo: a pass per sentence (the base handle's way,
as every contextual model scored before) against rows of about one length padded into one pass (the handles'
own ``perplexity`` now), side by side in one process, the same sentences, rounds alternating which goes first.
Then the whole command a person runs, ``word2bert-eval elmo-tiny --tasks perplexity`` (every held-out sentence
of the default corpus), as a process.

    python bench/speed/perplexity_speed.py [--sentences 500] [--rounds 3] [--beside '; beside a training']
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

MODELS = ("gpt-tiny", "elmo-tiny", "minilm-gpt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--beside", default="", help="what else the machine ran meanwhile, said with the figures")
    args = parser.parse_args()
    from engine import api
    from engine.handles.base import BaseHandle

    sentences = api.corpus_sample("default", args.sentences)
    rows = []
    per_sentence: dict[str, float] = {}
    for name in MODELS:
        handle = api.load(name)
        assert isinstance(handle, BaseHandle)
        handle.perplexity(sentences[:20])  # (first calls: threads, caches)
        times: dict[str, list[float]] = {"one": [], "batched": []}
        values = {}
        for r in range(args.rounds):
            for way in (("one", "batched") if r % 2 == 0 else ("batched", "one")):
                began = time.perf_counter()
                values[way] = (BaseHandle.perplexity(handle, sentences) if way == "one" else
                               handle.perplexity(sentences))
                times[way].append(time.perf_counter() - began)
        one, batched = statistics.median(times["one"]), statistics.median(times["batched"])
        per_sentence[name] = one / len(sentences)
        rows.append(f"| {name} | {one:.1f} s | {batched:.1f} s | **{one / batched:.1f}x** | {values['one']:.4f} | "
                    f"{values['batched']:.4f} |")
        del handle
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "engine.cli.eval", "elmo-tiny", "--tasks", "perplexity"],
                          capture_output=True, text=True, check=True)
    whole = time.perf_counter() - began
    said = " ".join(done.stdout.split())
    found = re.search(r"sentences (\d+)", said)
    held_out = int(found.group(1)) if found else 0
    body = f"""## Held-out perplexity: a pass per sentence or rows padded together

`python bench/speed/perplexity_speed.py --sentences {args.sentences} --rounds {args.rounds}` ({machine()}{args.beside}): the
first {args.sentences} held-out sentences of the default corpus; medians of {args.rounds} rounds, the two ways
alternating which goes first; the same number either way is the check that the rows padded together score
what each sentence scores alone.

| model | a pass per sentence | rows padded together | ratio | perplexity (one) | perplexity (padded) |
|---|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

The whole command, `word2bert-eval elmo-tiny --tasks perplexity` (every held-out sentence), as a process:
**{whole:.0f} s** ({said[:160]}); a pass per sentence, at the rate above, would take about
**{per_sentence["elmo-tiny"] * held_out:.0f} s** for those {held_out:,} sentences (the command did not end within 300 s
before).
"""
    write_section("perplexity-batched", body)
    print(body)


if __name__ == "__main__":
    main()
