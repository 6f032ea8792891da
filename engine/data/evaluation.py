"""Evaluation: word analogies, word similarity (WS353, SimLex-999) and held-out perplexity.

The analogy and similarity sets are the ones in gensim's test data, scored with gensim's own
evaluation functions, so figures compare with gensim's and the literature's. Each score comes with
its coverage (the share of questions or pairs whose words the model knows).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import numpy as np

from engine.data.corpora import package_dir
from engine.data.keyed_vectors import StaticVectors

TASKS = ("analogy", "wordsim", "simlex", "perplexity")


def test_data(name: str) -> Path:
    return package_dir("gensim") / "test" / "test_data" / name


def _count_questions(path: Path) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for line in f if line.strip() and not line.startswith(":"))


def analogy(vectors: StaticVectors, restrict_vocab: int = 300000) -> dict[str, float]:
    """Accuracy on questions-words.txt (Mikolov 2013), 3CosAdd, questions with unknown words skipped."""
    path = test_data("questions-words.txt")
    kv = vectors.to_gensim()
    logging.getLogger("gensim").setLevel(logging.WARNING)
    score, sections = kv.evaluate_word_analogies(str(path), restrict_vocab=restrict_vocab)
    total = next(s for s in sections if s["section"] == "Total accuracy")
    answered = len(total["correct"]) + len(total["incorrect"])
    return {"accuracy": float(score) if answered else 0.0, "coverage": answered / _count_questions(path)}


def word_similarity(vectors: StaticVectors, dataset: str = "wordsim353") -> dict[str, float | None]:
    """Spearman (and Pearson) correlation with human similarity ratings, with coverage."""
    path = test_data({"wordsim": "wordsim353.tsv", "wordsim353": "wordsim353.tsv", "simlex": "simlex999.txt", "simlex999": "simlex999.txt"}[dataset])
    kv = vectors.to_gensim()
    logging.getLogger("gensim").setLevel(logging.WARNING)
    try:
        pearson, spearman, oov = kv.evaluate_word_pairs(str(path))
    except ValueError:  # fewer than two pairs with known words: the correlation is undefined
        return {"spearman": None, "pearson": None, "coverage": 0.0}
    sp = float(spearman[0]) if spearman is not None and not math.isnan(spearman[0]) else 0.0
    pe = float(pearson[0]) if pearson is not None and not math.isnan(pearson[0]) else 0.0
    return {"spearman": sp, "pearson": pe, "coverage": 1.0 - float(oov) / 100.0}


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (as scipy.stats.rankdata)."""
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.arange(1, len(x) + 1)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return (sums / counts)[inverse]


def quick_word_similarity(vectors: StaticVectors, dataset: str = "wordsim353") -> dict[str, float | None]:
    """``word_similarity``'s Spearman and coverage in numpy alone — gensim's rules line for line (upper-cased
    words, the first of several case variants, out-of-vocabulary pairs skipped) without importing gensim
    and scipy (a second of a short run's start-up). The end-of-run metric of word2vec and GloVe uses it."""
    path = test_data({"wordsim353": "wordsim353.tsv", "simlex999": "simlex999.txt"}[dataset])
    ok = {w.upper(): i for i, w in reversed(list(enumerate(vectors.words[:300000])))}
    gold, model = [], []
    oov = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line or line.startswith("#"):
                continue
            try:
                a, b, sim = (w.upper() for w in line.split("\t"))
                value = float(sim)
            except ValueError:
                continue
            if a not in ok or b not in ok:
                oov += 1
                continue
            gold.append(value)
            model.append(float(vectors.unit[ok[a]] @ vectors.unit[ok[b]]))
    if len(gold) < 2:
        return {"spearman": None, "coverage": 0.0}
    g, m = _average_ranks(np.asarray(gold)), _average_ranks(np.asarray(model))
    rho = float(np.corrcoef(g, m)[0, 1])
    return {"spearman": 0.0 if math.isnan(rho) else rho, "coverage": len(gold) / (len(gold) + oov)}


def evaluate_handle(handle: Any, tasks: list[str], corpus: str | None = None) -> dict[str, Any]:
    """Run the named tasks on a loaded model handle; tasks it cannot do are reported, not failed."""
    from engine.data.corpora import get_corpus, trained_on
    from engine.results import Capability

    out: dict[str, Any] = {"model": handle.name, "kind": handle.kind}
    for task in tasks:
        if task not in TASKS:
            raise ValueError(f"unknown task '{task}' (choose from {', '.join(TASKS)})")
        if task in ("analogy", "wordsim", "simlex"):
            if not handle.capabilities & Capability.STATIC:
                out[task] = {"skipped": f"{handle.kind} has no static word vectors"}
                continue
            vectors = handle.static_vectors()
            out[task] = analogy(vectors) if task == "analogy" else word_similarity(vectors, task)
        else:
            if not handle.capabilities & Capability.SENTENCE_SCORE:
                out[task] = {"skipped": f"{handle.kind} cannot score sentences"}
                continue
            name = corpus or trained_on(handle.info)
            sentences = list(get_corpus(name).sentences("heldout"))
            out[task] = {"perplexity": handle.perplexity(sentences), "corpus": name, "sentences": len(sentences)}
    return out
