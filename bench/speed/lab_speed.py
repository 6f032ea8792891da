"""The lab's queries as a click costs them (issue 35): the lens grid (logit and tuned), causal tracing,
attribution (integrated gradients with the other two methods, one batch of backward passes) and the heads knocked
out one by one (one batch of layers × heads rows), and one head knocked out token by token, on the shipped models, each model loaded once beforehand, median of several asks of the built-in scenes' sentences (the lens
scene's, the capital scene's, the window scene's).

    python bench/speed/lab_speed.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

CASES = [  # (model, text, subject)
    ("bert-tiny", "She deposited the money at the [MASK] on Monday.", "money"),
    ("minilm-mlm", "The capital of France is [MASK].", "France"),
    ("tuned-lens-minilm-mlm", "She deposited the money at the [MASK] on Monday.", "money"),
    ("minilm-gpt", "The capital of France is", "France"),
    ("elmo-tiny", "The books on the top shelf of the library", "books"),  # (the window and carried scenes')
    ("elmo-tiny", "The keys to the cabinet [MASK] on the table.", "keys"),  # its blank (the blank scene's)
]


def median_s(fn, rounds: int) -> float:
    fn()  # the first ask: kernels, caches
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def corpus_means_afresh(handle) -> None:
    """The heads' means over the corpus as the first knock-out to them reads them (the model's kept ones let go)."""
    from engine.handles import head_means
    from engine.handles.head_ablation import MAX_ABLATION_TOKENS, out_projections

    head_means._MEANS.pop(handle, None)
    head_means.corpus_head_means(handle, out_projections(handle), "default", MAX_ABLATION_TOKENS)


def main() -> None:
    from engine import api

    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    rows = []
    for name, text, subject in CASES:
        handle = api.load(name)
        grid = median_s(lambda h=handle, t=text: h.lens_grid(t, 5, "logit"), args.rounds)
        tuned = (median_s(lambda h=handle, t=text: h.lens_grid(t, 5, "tuned"), args.rounds)
                 if getattr(handle, "tuned_lens", None) is not None else None)
        blank = handle.kind == "elmo" and "[MASK]" in text  # (ELMo's blank: both LMs)
        trace = median_s(lambda h=handle, t=text, s=subject: h.causal_trace(t, s, 3), args.rounds)
        traced = handle.causal_trace(text, subject, 3)
        tokens, layers = len(traced.tokens), traced.restored.shape[0]
        attribution = median_s(lambda h=handle, t=text: h.token_attribution(t), args.rounds)
        steps = handle.token_attribution(text).steps
        heads = by_token = means = None
        if handle.info.get("heads"):
            heads = median_s(lambda h=handle, t=text: h.head_ablation(t), args.rounds)
            layer, head, _ = handle.head_ablation(text).strongest(1)[0]
            by_token = median_s(lambda h=handle, t=text, a=layer, b=head: h.head_positions(t, a, b), args.rounds)
            means = median_s(lambda h=handle: corpus_means_afresh(h), args.rounds)
        rows.append(f"| {name}{', its blank' if blank else ''} | {tokens} | {layers} | {grid * 1000:,.0f} | "
                    f"{'–' if tuned is None else f'{tuned * 1000:,.0f}'} | {trace * 1000:,.0f} | "
                    f"{attribution * 1000:,.0f} ({steps} steps) | {'–' if heads is None else f'{heads * 1000:,.0f}'} | "
                    f"{'–' if by_token is None else f'{by_token * 1000:,.0f}'} | "
                    f"{'–' if means is None else f'{means * 1000:,.0f}'} |")
        print(rows[-1], flush=True)
    body = "\n".join([
        "## The lab: lens grid, causal tracing, attribution and heads, per click", "",
        f"`python bench/speed/lab_speed.py --rounds {args.rounds}`: each model loaded once, then the median of "
        f"{args.rounds} asks after a first one; causal tracing with 3 noise draws (every layer × token state "
        "restored once per draw, in batches); attribution: the model's prediction, integrated gradients' steps "
        "(32, then 128 and 512 while they miss the change by over 5% and 0.05 nats) with gradient × input and the "
        "gradient's norm, in one batch of backward passes; heads: every attention head knocked out in turn, one "
        "row each; head by token: the strongest head knocked out at one token at a time (the strip under the heads "
        "table), one row a token; corpus means: the heads' means over 128 held-out sentences of the corpus, read "
        "once a model before its first knock-out to them (the held-out sentences already found); ELMo: its forward "
        "LM word by word (its trace steps the clean run through its LSTMs one word at a "
        "time; it has no heads); ELMo, its blank: the masked view's lab, both LMs at every word (grid), each word's "
        "states put back in the LM that reads it on its way to the blank (trace) and the blank they fill (attribution).", f"Machine: {machine()}", "",
        "| model | tokens | layers + 1 | lens grid ms | tuned lens grid ms | causal trace ms | attribution ms | "
        "heads ms | head by token ms | corpus means, once a model, ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", *rows])
    print(body)
    write_section("lab-speed", body)


if __name__ == "__main__":
    main()
