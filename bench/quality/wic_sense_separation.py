"""Sense separation on WiC (Pilehvar & Camacho-Collados 2019), layer by layer, without training:
cosine similarity of the target word's vectors in the two sentences, the threshold chosen on (a sample
of) WiC train, accuracy on WiC dev. Static vectors give the same vector twice: 0.50 by construction.

WiC is read from ../shared/data/wic/ (development only; never copied into the project).

    python bench/quality/wic_sense_separation.py [--models assets/checkpoints/bert-tiny,...] [--train-pairs 1500]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from bench._report import loaded_models, machine, write_section  # noqa: E402
from engine.data.sense_pairs import BUNDLED, token_span  # noqa: E402
from engine.data.text import word_spans  # noqa: E402

WIC = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "wic"
DEFAULT_MODELS = ["assets/checkpoints/elmo-tiny", "assets/checkpoints/gpt-tiny", "assets/checkpoints/bert-tiny",
                  "all-minilm-l6-v2"]


def read_split(name: str, limit: int | None = None) -> list[tuple[str, int, str, int, bool]]:
    data = (WIC / f"{name}.data.txt").read_text(encoding="utf-8").splitlines()
    gold = (WIC / f"{name}.gold.txt").read_text(encoding="utf-8").split()
    rows = []
    for line, label in zip(data, gold, strict=True):
        _, _, idx, s1, s2 = line.split("\t")
        i, j = (int(x) for x in idx.split("-"))
        rows.append((s1, i, s2, j, label == "T"))
    if limit and len(rows) > limit:
        rows = [rows[k] for k in np.random.default_rng(0).choice(len(rows), limit, replace=False)]
    return rows


def target_vector(handle, cache: dict, sentence: str, index: int) -> np.ndarray | None:
    """(layers, dim): the mean over our words overlapping the index-th space-separated token."""
    if sentence not in cache:
        cv = handle.contextual_vectors(sentence)
        cache[sentence] = cv if len(cv.words) == len(word_spans(sentence)) else None
    cv = cache[sentence]
    if cv is None:
        return None
    start, end = token_span(sentence, index)
    words = [k for k, (a, b) in enumerate(word_spans(sentence)) if a < end and b > start]
    return cv.vectors[:, words].mean(1) if words else None


def cosines(handle, rows) -> tuple[np.ndarray, np.ndarray]:
    cache: dict = {}
    sims, labels = [], []
    for s1, i, s2, j, label in rows:
        a, b = target_vector(handle, cache, s1, i), target_vector(handle, cache, s2, j)
        if a is None or b is None:
            continue
        num = (a * b).sum(-1)
        den = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1) + 1e-9
        sims.append(num / den)
        labels.append(label)
    return np.asarray(sims), np.asarray(labels)


def best_threshold(sims: np.ndarray, labels: np.ndarray) -> float:
    candidates = np.unique(sims)
    accuracy = [((sims >= t) == labels).mean() for t in candidates]
    return float(candidates[int(np.argmax(accuracy))])


def dev_accuracy_by_layer(handle, train, dev) -> tuple[list[float], list[float], int]:
    """Per layer: dev accuracy at the threshold chosen on train, and train accuracy there; dev pairs used."""
    tr_s, tr_l = cosines(handle, train)
    dv_s, dv_l = cosines(handle, dev)
    dev_accs, train_accs = [], []
    for layer in range(tr_s.shape[1]):
        t = best_threshold(tr_s[:, layer], tr_l)
        dev_accs.append(float(((dv_s[:, layer] >= t) == dv_l).mean()))
        train_accs.append(float(((tr_s[:, layer] >= t) == tr_l).mean()))
    return dev_accs, train_accs, len(dv_l)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=",".join(DEFAULT_MODELS))
    p.add_argument("--train-pairs", type=int, default=1500)
    args = p.parse_args()
    train, dev = read_split("train", args.train_pairs), read_split("dev")
    command = "python bench/quality/wic_sense_separation.py" + (
        f" --models {args.models}" if args.models != p.get_default("models") else "") + (
        f" --train-pairs {args.train_pairs}" if args.train_pairs != p.get_default("train_pairs") else "")
    lines = ["## Sense separation on WiC dev (cosine threshold, no training)", "", f"Machine: {machine()}", "",
             f"`{command}`. Threshold per layer chosen on {len(train):,} WiC train pairs, accuracy on the {len(dev)} dev pairs; the "
             "best layer is the one that does best on those train pairs (dev is never used to choose). "
             "Static vectors: about 0.50 by construction (the same vector twice, unless the word is inflected differently). WiC paper: ELMo 0.577, BERT-large "
             "0.655, human 0.80. † taught word senses from word2bert's own sentences (`--sense-pairs sense-train`, "
             "not WiC's): still zero-shot on WiC; ‡ taught from another pairs file (WiC train's, say): not zero-shot.", "", "| model | dev accuracy by layer (0 = input layer, 1, 2, …) | layer chosen on train | its dev accuracy | dev pairs |",
             "|---|---|---:|---:|---:|"]
    for _name, handle in loaded_models(args.models.split(",")):
        accs, train_accs, pairs = dev_accuracy_by_layer(handle, train, dev)
        best = int(np.argmax(train_accs))  # the layer chosen on train, as the threshold is: dev stays unseen
        cells = ", ".join(f"{a:.3f}" for a in accs)
        trained_on = handle.info.get("sense_pairs")  # the bundled sense-train sentences are not WiC's: still zero-shot
        trained = " ‡" if trained_on and trained_on not in BUNDLED else " †" if trained_on else ""
        lines.append(f"| {handle.name} ({handle.kind}){trained} | {cells} | {best} | {accs[best]:.3f} | {pairs} |")
        print(lines[-1], flush=True)
    body = "\n".join(lines)
    print(body)
    write_section("wic-sense-separation", body)


if __name__ == "__main__":
    main()
