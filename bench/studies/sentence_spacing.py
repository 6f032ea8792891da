"""Where a left-to-right model goes after a sentence ends: on held-out documents of two sentences or more, typed as
text ("… his own music. Copland was …"), the next token's probability at each sentence's end, split three ways —
a token that begins with a space (the next sentence written as text), the model's end of text, and anything else
(the next sentence glued on with no space, "music.Copland", or the sentence going on). A GPT trained on a document's
sentences glued together puts its mass on the third; one trained on the text with its spaces on the first. For
models whose tokenizer keeps spaces (byte-level BPE: our GPT, GPT-2); a WordPiece model's pieces carry none.

    python bench/studies/sentence_spacing.py --name shipped=gpt-tiny --name run=runs/gpt-tiny-on2 \
        [--documents 300] [--section KEY --title TITLE]
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine import api  # noqa: E402

BOUNDARIES_PER_DOCUMENT = 3  # the first three sentence ends of each document


class Shares(NamedTuple):
    spaced: float  # mean probability of a token that begins with a space
    ended: float  # mean probability of the end of text
    glued: float  # the rest
    top_spaced: float  # share of sentence ends whose likeliest token begins with a space
    top_ended: float
    top_glued: float


def shares(probs: np.ndarray, spaced: np.ndarray, ended: np.ndarray) -> Shares:
    """``probs`` (contexts, vocabulary) split by the boolean masks ``spaced`` and ``ended`` (vocabulary,)."""
    p_spaced = probs[:, spaced].sum(1)
    p_ended = probs[:, ended].sum(1)
    top = probs.argmax(1)
    top_spaced, top_ended = spaced[top], ended[top]
    return Shares(float(p_spaced.mean()), float(p_ended.mean()), float((1 - p_spaced - p_ended).mean()),
                  float(top_spaced.mean()), float(top_ended.mean()), float((~top_spaced & ~top_ended).mean()))


def contexts(documents: int) -> list[str]:
    """The text of held-out documents up to each of their first sentence ends (not the last sentence's), spread
    over the held-out part."""
    from engine.data.corpora import get_corpus

    docs = [d.sentences for d in get_corpus("default").documents("heldout") if len(d.sentences) >= 2]
    step = max(1, len(docs) // max(1, documents))
    out = []
    for sentences in docs[::step][:documents]:
        for i in range(min(BOUNDARIES_PER_DOCUMENT, len(sentences) - 1)):
            out.append(" ".join(sentences[: i + 1]))
    return out


def measure(model: str, texts: list[str]) -> Shares:
    handle: Any = api.load(model)  # (a Transformer's: its adapter and its forward pass)
    adapter = handle.adapter
    tok = adapter.tokenizer
    size = tok.get_vocab_size()
    spaced = np.array([tok.decode([i], skip_special_tokens=False)[:1].isspace() for i in range(size)])
    ended = np.zeros(size, dtype=bool)
    if adapter.end_of_text is not None:
        ended[adapter.end_of_text] = True
    rows = []
    for text in texts:
        ids, _, _, _, _ = handle._encode(text)
        ids = ids[-adapter.max_len:]
        out = handle._forward(ids, logits=True, positions=[len(ids) - 1])
        rows.append(out.logits[0, 0].float().softmax(-1).cpu().numpy())
    probs = np.stack(rows)
    return shares(probs[:, :size], spaced, ended)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--name", action="append", required=True, help="LABEL=MODEL (a shipped name or a run folder)")
    p.add_argument("--documents", type=int, default=300)
    p.add_argument("--section", default="sentence-spacing")
    p.add_argument("--title", default="After a sentence ends: a space, the end of text, or glued on")
    args = p.parse_args()
    texts = contexts(args.documents)
    lines = [f"## {args.title}", "",
             f"`python bench/studies/sentence_spacing.py {shlex.join(sys.argv[1:])}`: {len(texts):,} sentence ends "
             f"(the first {BOUNDARIES_PER_DOCUMENT} of {args.documents} held-out documents of the default corpus of "
             "two sentences or more, spread over its held-out part; each document's text up to that end, its "
             "sentences parted by a space). The next token's probability there, three ways: a token that begins with "
             "a space (the next sentence written as text), the model's end of text, and the rest (the next sentence "
             "glued on, or the sentence going on); then which of the three the likeliest token is.",
             f"Machine: {machine()}", "",
             "| candidate | model | P(space) | P(end of text) | P(rest) | likeliest: space | end of text | rest |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for spec in args.name:
        label, _, model = spec.partition("=")
        s = measure(model, texts)
        lines.append(f"| {label} | {model} | {s.spaced:.3f} | {s.ended:.3f} | {s.glued:.3f} | {s.top_spaced:.3f} | "
                     f"{s.top_ended:.3f} | {s.top_glued:.3f} |")
        print(lines[-1], flush=True)
        api.release_memory()
    body = "\n".join(lines)
    print(body)
    write_section(args.section, body)


if __name__ == "__main__":
    main()
