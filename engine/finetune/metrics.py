"""Metrics of the fine-tuning tasks: accuracy, macro-F1 and the confusion matrix (classification),
entity-level F1 over BIO tags (tagging, as CoNLL's conlleval), exact match and token F1 (spans, as
SQuAD's evaluation script), and the best-span decoder that never puts the end before the start."""

from __future__ import annotations

import re
import string
from collections import Counter

import numpy as np


def confusion_matrix(gold: np.ndarray, predicted: np.ndarray, n_labels: int) -> np.ndarray:
    """(n_labels, n_labels) counts: row = gold label, column = prediction."""
    matrix = np.zeros((n_labels, n_labels), dtype=np.int64)
    np.add.at(matrix, (gold, predicted), 1)
    return matrix


def classification_scores(matrix: np.ndarray) -> dict[str, float]:
    total = matrix.sum()
    tp = np.diag(matrix).astype(np.float64)
    precision = tp / np.maximum(matrix.sum(0), 1)
    recall = tp / np.maximum(matrix.sum(1), 1)
    f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    present = matrix.sum(1) > 0
    return {"accuracy": float(tp.sum() / max(total, 1)),
            "macro_f1": float(f1[present].mean()) if present.any() else 0.0}


def entities(tags: list[str]) -> set[tuple[str, int, int]]:
    """(type, first, last) of each entity in a BIO sequence. An I- tag that does not continue an entity
    of its type starts a new one (conlleval's rule)."""
    found, start, kind = set(), -1, ""
    for i, tag in enumerate([*tags, "O"]):
        prefix, _, name = tag.partition("-") if tag[:2] in ("B-", "I-") else ("", "", tag)
        continues = prefix == "I" and kind == name and start >= 0
        if start >= 0 and not continues:
            found.add((kind, start, i - 1))
            start, kind = -1, ""
        if prefix in ("B", "I") and not continues:
            start, kind = i, name
        elif not prefix and tag != "O":  # a tag outside BIO: a one-word entity of its own type
            found.add((tag, i, i))
    return found


def entity_words(words: tuple[str, ...], tags: list[str]) -> tuple[tuple[str, str], ...]:
    """(type, its words) of each entity of a tagged sentence, in the order they come."""
    return tuple((kind, " ".join(words[a : b + 1])) for kind, a, b in sorted(entities(tags), key=lambda e: e[1]))


def entity_scores(gold: list[list[str]], predicted: list[list[str]]) -> dict[str, object]:
    """Micro precision/recall/F1 over entities (exact type and boundaries), per-type F1, token accuracy."""
    per_type: dict[str, Counter[str]] = {}
    correct_tokens = total_tokens = 0
    for g, p in zip(gold, predicted, strict=True):
        ge, pe = entities(g), entities(p)
        for e in ge | pe:
            c = per_type.setdefault(e[0], Counter())
            c["tp"] += e in ge and e in pe
            c["gold"] += e in ge
            c["pred"] += e in pe
        correct_tokens += sum(a == b for a, b in zip(g, p, strict=True))
        total_tokens += len(g)

    def f1(c: Counter[str]) -> tuple[float, float, float]:
        precision = c["tp"] / c["pred"] if c["pred"] else 0.0
        recall = c["tp"] / c["gold"] if c["gold"] else 0.0
        return precision, recall, (2 * precision * recall / (precision + recall) if precision + recall else 0.0)

    total = sum(per_type.values(), Counter())
    precision, recall, score = f1(total)
    return {"entity_f1": score, "entity_precision": precision, "entity_recall": recall,
            "token_accuracy": correct_tokens / max(total_tokens, 1),
            "per_type_f1": {k: f1(c)[2] for k, c in sorted(per_type.items())},
            "per_type_support": {k: int(c["gold"]) for k, c in sorted(per_type.items())}}


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def span_scores(gold: list[str], predicted: list[str]) -> dict[str, float]:
    exact = f1_total = 0.0
    for g, p in zip(gold, predicted, strict=True):
        gt, pt = normalize_answer(g).split(), normalize_answer(p).split()
        exact += gt == pt
        common = sum((Counter(gt) & Counter(pt)).values())
        if common:
            precision, recall = common / len(pt), common / len(gt)
            f1_total += 2 * precision * recall / (precision + recall)
        elif not gt and not pt:
            f1_total += 1
    n = max(len(gold), 1)
    return {"exact_match": exact / n, "f1": f1_total / n}


def best_span(start_logits: np.ndarray, end_logits: np.ndarray, allowed: np.ndarray,
              max_answer: int = 30) -> tuple[int, int, float]:
    """The (start, end) maximising start + end logits with start <= end < start + max_answer, both on
    allowed tokens (the context). Returns the span and its score."""
    n = len(start_logits)
    scores = start_logits[:, None] + end_logits[None, :]  # (n, n): [i, j] = start i, end j
    i, j = np.indices((n, n))
    ok = (j >= i) & (j - i < max_answer) & allowed[:, None] & allowed[None, :]
    if not ok.any():
        return 0, 0, float("-inf")
    scores = np.where(ok, scores, -np.inf)
    flat = int(np.argmax(scores))
    return flat // n, flat % n, float(scores.flat[flat])
