"""The shipped default checkpoints: their held-out metrics, and the nearest contextual neighbours of
"bank" and "play" in typed sentences among occurrences in the held-out corpus, so a reader sees
whether the senses separate (static vectors, by construction, cannot).

    python bench/quality/default_checkpoints.py [--occurrences 150]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from bench._report import loaded_models, machine, write_section  # noqa: E402
from engine import api  # noqa: E402
from engine.data.corpora import get_corpus  # noqa: E402
from engine.data.text import word_tokenize  # noqa: E402

SCENES = {
    "bank": ["We sat on the grassy bank of the river and watched the water.",
             "She deposited the money at the bank on Monday."],
    "play": ["The actors rehearsed the play before the opening night at the theatre.",
             "The children went outside to play football in the park."],
}


def occurrences(word: str, limit: int) -> list[str]:
    out = []
    for part in ("heldout", "train"):
        for s in get_corpus("default").sentences(part):
            if 6 <= len(s.split()) <= 40 and word in word_tokenize(s):
                out.append(s)
                if len(out) >= limit:
                    return out
    return out


def word_vector(handle, sentence: str, word: str, layer: int) -> np.ndarray | None:
    cv = handle.contextual_vectors(sentence)
    idx = [i for i, w in enumerate(cv.words) if w.lower() == word]
    return cv.vectors[layer, idx[0]] if idx else None


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--occurrences", type=int, default=150)
    p.add_argument("--models", default="elmo-tiny,gpt-tiny,bert-tiny,minilm-mlm")
    args = p.parse_args()
    lines = ["## Default checkpoints: held-out metrics and contextual neighbours", "", f"Machine: {machine()}", ""]
    lines += ["| checkpoint | steps of its last run | its held-out metrics then |", "|---|---:|---|"]
    handles = []
    for name, h in loaded_models(args.models.split(",")):
        handles.append(h)
        metrics = api.metrics_text(h.info.get("metrics") or {}) or (
            "none of its own: " + (h.info.get("description") or "its run ended without an evaluation").split("; ")[-1]
            + " (its scores: Model quality, below)")
        lines.append(f"| {name} | {h.info.get('trained_steps', '?')} | {metrics} |")
    for word, typed in SCENES.items():
        corpus = occurrences(word, args.occurrences)
        lines += ["", f"### \"{word}\": nearest of {len(corpus)} corpus occurrences (cosine, at the layer the polysemy "
                  "lens opens each model at: where it tells senses apart best, `api.sense_layer`)", ""]
        for h in handles:
            layer = api.sense_layer(h.info)
            vecs, sents = [], []
            for s in corpus:
                v = word_vector(h, s, word, layer)
                if v is not None:
                    vecs.append(v / (np.linalg.norm(v) + 1e-9))
                    sents.append(s)
            matrix = np.stack(vecs)
            lines.append(f"**{h.name}**, layer {layer} of {int(h.info.get('vector_layers', 1)) - 1}")
            lines.append("")
            for t in typed:
                q = word_vector(h, t, word, layer)
                if q is None:
                    lines.append(f"- *{t}*: “{word}” is not a word of it")
                    continue
                sims = matrix @ (q / (np.linalg.norm(q) + 1e-9))
                lines.append(f"- *{t}*")
                for k in np.argsort(-sims)[:3]:
                    lines.append(f"  - {sims[k]:.3f} — {sents[k]}")
            lines.append("")
    body = "\n".join(lines)
    print(body)
    write_section("default-checkpoints", body)


if __name__ == "__main__":
    main()
