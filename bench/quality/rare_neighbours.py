"""Static neighbours among words seen often enough: the count threshold the app shows them with by default.

A word2vec or GloVe run learns a vector for every word seen ``min_count`` times, but a word seen a handful of
times gets a handful of updates: its vector is mostly where it started, and it turns up near frequent words by
chance ("star" → zach, braff in the shipped word2vec-sgns: each seen 6-7 times in 4.8M words). The app can leave
out of a neighbour list the words the model saw fewer than t times in training (the counts its run keeps in
vocab.txt; vectors without counts — GloVe 6B, a vectors file — are not filtered).

The rule, declared before any figure was seen: for each t in THRESHOLDS, the accuracy on gensim's analogy set
(questions-words, lowercased; 3CosAdd over unit vectors; the questions whose four words the model knows at all,
the same questions at every t; candidates: the words seen at least t times, the question's three words left out;
a question whose answer was seen fewer than t times counts as wrong). The default is the t with the highest
accuracy; a tie goes to the smaller t (more words shown). Measured on the shipped word2vec-sgns, the static model
of the default corpus (the analogy set is word2vec-sgns's development set already: its own choice was made on it;
WordSim-353 and SimLex-999, its test sets, are not used, and neighbour filtering cannot change them anyway).
Beside it, not part of the rule: the scenes' words' neighbours at each t.

    python bench/quality/rare_neighbours.py [--model word2vec-sgns]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine import api  # noqa: E402
from engine.data.evaluation import test_data  # noqa: E402

THRESHOLDS = (1, 10, 20, 50, 100)
SCENE_WORDS = ("bank", "bat", "star", "play", "spring", "match", "mouse", "cell", "light")


def questions(words: dict[str, int]) -> np.ndarray:
    """Rows (a, b, c, d) of word indices: a is to b as c is to d, every word known."""
    rows = []
    with open(test_data("questions-words.txt"), encoding="utf-8") as f:
        for line in f:
            if line.startswith(":") or not line.strip():
                continue
            q = [words.get(w) for w in line.lower().split()]
            if len(q) == 4 and None not in q:
                rows.append(q)
    return np.asarray(rows, dtype=np.int64)


def accuracy(unit: np.ndarray, counts: np.ndarray, qs: np.ndarray, t: int, batch: int = 512) -> float:
    """3CosAdd among the words seen at least t times (the question's words excluded)."""
    allowed = counts >= t
    right = 0
    for start in range(0, len(qs), batch):
        q = qs[start:start + batch]
        target = unit[q[:, 1]] - unit[q[:, 0]] + unit[q[:, 2]]
        sims = target @ unit.T
        sims[:, ~allowed] = -np.inf
        rows = np.arange(len(q))
        for col in range(3):
            sims[rows, q[:, col]] = -np.inf
        right += int((sims.argmax(1) == q[:, 3]).sum())
    return right / len(qs)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="word2vec-sgns")
    args = p.parse_args()
    handle = api.load(args.model)
    vectors = handle.static_vectors()
    counts = vectors.counts
    if counts is None:
        sys.exit(f"{args.model} keeps no training counts: nothing to filter")
    index = {w: i for i, w in enumerate(vectors.words)}
    qs = questions(index)
    unit = vectors.unit
    rows, scores = [], {}
    for t in THRESHOLDS:
        scores[t] = accuracy(unit, counts, qs, t)
        kept = int((counts >= t).sum())
        rare_answers = int((counts[qs[:, 3]] < t).sum())
        rows.append(f"| {t} | {kept:,} of {len(counts):,} | {scores[t]:.4f} | {rare_answers} |")
        print(rows[-1], flush=True)
    best = max(THRESHOLDS, key=lambda t: (scores[t], -t))
    examples = []
    for word in SCENE_WORDS:
        if word not in index:
            continue
        cells = [", ".join(n.word for n in handle.static_neighbours(word, 6, min_count=t)) for t in (1, best)]
        examples.append(f"| {word} | {cells[0]} | {cells[1]} |")
    body = "\n".join([
        f"## Static neighbours among words seen often enough ({args.model})", "", f"Machine: {machine()}", "",
        f"`python bench/quality/rare_neighbours.py --model {args.model}`. The rule, declared before the figures "
        "(the script's docstring): the default count threshold t of the app's static neighbours is the t with the "
        "highest analogy accuracy (gensim's questions-words, 3CosAdd, candidates: the words the model saw at least t "
        f"times in training; the same {len(qs):,} questions, those whose four words it knows, at every t; a "
        "question whose answer is rarer than t is wrong); a tie goes to the smaller t.", "",
        "| t (seen at least) | words left | analogy accuracy | answers rarer than t |", "|---:|---:|---:|---:|",
        *rows, "", f"**Chosen: t = {best}.** The scenes' words' nearest six, every word against t = {best} (not part of "
        "the rule):", "", f"| word | every word | seen at least {best} times |", "|---|---|---|", *examples])
    print(body)
    write_section(f"rare-neighbours-{args.model}", body, __file__)


if __name__ == "__main__":
    main()
