"""Can the lab's attribution be trusted? Deletion, as ERASER's comprehensiveness (DeYoung et al. 2020) and the
AOPC of Samek et al. (2017) measure it: delete a sentence's k top-scored tokens (k = 1 … 5) by each method and see
how much probability the model's own prediction loses; a method that finds what the prediction rests on loses more
than deleting tokens in a random order. Nothing is chosen here: the lab shows all three methods.

Held-out sentences of the default corpus (spread over it), one word per sentence drawn with a fixed seed among its
words that are not function words and have three words before them: a masked LM reads the sentence with that word
as [MASK], a left-to-right LM the words before it; the explained prediction is the model's own top one there.

    python bench/quality/attribution_faithfulness.py [--models minilm-mlm,bert-tiny,minilm-gpt,gpt-tiny,elmo-tiny,nnlm-tiny]
        [--n 200]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import loaded_models, machine, write_section  # noqa: E402

DELETED = 5  # k = 1 … DELETED top tokens deleted
RANDOM_ORDERS = 5  # random deletion orders per sentence (their mean is the baseline)
BOOTSTRAP = 2000


def questions(sentences: list[str], masked: bool, seed: int = 0) -> list[str]:
    """One question per sentence: the drawn word as [MASK], or the words before it."""
    from engine.data.function_words import is_function_word
    from engine.data.text import word_spans

    rng = random.Random(seed)
    out = []
    for sentence in sentences:
        spans = word_spans(sentence)
        picks = [i for i, (a, b) in enumerate(spans) if i >= 3 and sentence[a:b].isalpha()
                 and not is_function_word(sentence[a:b].lower())]
        if len(spans) < 5 or not picks:
            continue
        a, b = spans[rng.choice(picks)]
        out.append(sentence[:a] + "[MASK]" + sentence[b:] if masked else sentence[:a].rstrip())
    return out


def deletion_curve(handle, text: str, orders: dict[str, list[int]]) -> dict[str, np.ndarray]:
    """Per order: P(the explained token) with its first k positions deleted, k = 0 … DELETED."""
    import torch

    from engine.handles.lens import _inputs

    adapter = handle.adapter
    ids, segments, _, _ = _inputs(handle, text, 128)
    curves = {}
    with torch.inference_mode():
        for name, order in orders.items():
            rows = [[i for t, i in enumerate(ids) if t not in set(order[:k])] for k in range(DELETED + 1)]
            probs = []
            for row in rows:  # (lengths differ: one pass each)
                position = row.index(adapter.mask_id) if adapter.objective == "masked" else len(row) - 1
                segs = segments[: len(row)]
                out = handle._forward(row, segs, logits=True, positions=[position])
                probs.append(out.logits[0, 0].float().softmax(-1))
            target = int(probs[0].argmax())
            curves[name] = np.array([float(p[target]) for p in probs])
    return curves


def word_deletion_curve(handle, text: str, tokens: tuple[str, ...], orders: dict[str, list[int]]
                        ) -> dict[str, np.ndarray]:
    """``deletion_curve`` for a word-level model (ELMo, an NNLM): its tokens are <s> and the words it reads, the
    explained word its likeliest next one (<unk> and <s> aside), asked of the words left as the Next token view asks."""
    words = list(tokens[1:])
    model = handle._next_words
    curves = {}
    for name, order in orders.items():
        logps = [model.log_probs([w for t, w in enumerate(words, 1) if t not in set(order[:k])])
                 for k in range(DELETED + 1)]
        first = np.array(logps[0], np.float64)
        first[list(model.banned)] = -np.inf
        target = int(np.argmax(first))
        curves[name] = np.array([float(np.exp(lp[target])) for lp in logps])
    return curves


def aopc(curve: np.ndarray) -> float:
    """The mean probability lost over k = 1 … DELETED."""
    return float(np.mean(curve[0] - curve[1:]))


def interval(values: np.ndarray, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = [float(values[rng.integers(0, len(values), len(values))].mean()) for _ in range(BOOTSTRAP)]
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main() -> None:
    from engine import api

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="minilm-mlm,bert-tiny,minilm-gpt,gpt-tiny,elmo-tiny,nnlm-tiny")
    p.add_argument("--n", type=int, default=200, help="held-out sentences drawn (fewer are asked: see the table)")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args()
    start = time.perf_counter()
    sentences = api.corpus_sample(n=args.n, part="heldout")
    methods = list(api.ATTRIBUTION_METHODS)
    rows = []
    for name, handle in loaded_models([m.strip() for m in args.models.split(",") if m.strip()]):
        word_level = not hasattr(handle, "adapter")  # ELMo, an NNLM: the words they read, the next one
        masked = not word_level and handle.adapter.objective == "masked"
        scores: dict[str, list[float]] = {m: [] for m in [*methods, "random"]}
        asked = refused = 0
        for q, text in enumerate(questions(sentences, masked)):
            try:
                result = handle.token_attribution(text)
            except api.Word2BertError:
                refused += 1
                continue
            free = [t for t in range(len(result.tokens)) if not result.fixed[t]]
            if len(free) <= DELETED:
                continue
            asked += 1
            orders = {m: [free[i] for i in np.argsort(-result.scores[m][free], kind="stable")] for m in methods}
            rng = random.Random(q)
            for r in range(RANDOM_ORDERS):
                orders[f"random {r}"] = rng.sample(free, len(free))
            curves = (word_deletion_curve(handle, text, result.tokens, orders) if word_level
                      else deletion_curve(handle, text, orders))
            for m in methods:
                scores[m].append(aopc(curves[m]))
            scores["random"].append(float(np.mean([aopc(curves[f"random {r}"]) for r in range(RANDOM_ORDERS)])))
        base = np.array(scores["random"])
        cells = []
        for m in methods:
            values = np.array(scores[m])
            lo, hi = interval(values - base)
            beats = float(np.mean(values > base))
            cells.append(f"{values.mean():.3f} ({values.mean() - base.mean():+.3f}, {lo:+.3f}…{hi:+.3f}; "
                         f"{beats:.0%})")
        rows.append(f"| {name} | {asked} | {base.mean():.3f} | " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    body = "\n".join([
        "## Attribution: does deleting what a method scores highest cost the prediction most?", "",
        f"`python bench/quality/attribution_faithfulness.py --models {args.models} --n {args.n}` "
        f"({time.perf_counter() - start:.0f} s). Machine: {machine()}", "",
        f"{args.n} held-out sentences of the default corpus, spread over it; in each, one word drawn with a fixed "
        "seed among those that are not function words and have three words before them: a masked LM reads it as "
        "[MASK], a left-to-right LM (ELMo's forward LM and the NNLM too, word by word) the words before it (sentences with no such word, or fewer than "
        f"{DELETED + 1} tokens to attribute, are left out: 'asked'). The explained prediction: the model's own top "
        f"one. Each method's top k tokens (k = 1 … {DELETED}; the most positive first, the gradient's norm the "
        "largest) are deleted and the probability it loses is averaged over k (AOPC, ERASER's comprehensiveness); "
        f"random: the mean of {RANDOM_ORDERS} random deletion orders. Each cell: the method's AOPC (its lead over "
        "random, the 95% bootstrap interval of that lead over sentences; the share of sentences where it beats "
        "random). Higher: the method found more of what the prediction rests on.", "",
        "| model | asked | random | " + " | ".join(methods) + " |",
        "|---|---:|---:|" + "---|" * len(methods), *rows])
    print(body)
    if not args.no_write:
        write_section("attribution-faithfulness", body)


if __name__ == "__main__":
    main()
