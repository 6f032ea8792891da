"""word2vec's compiled CPU kernel, hierarchical softmax: how many of the top Huffman nodes each thread keeps its
own copy of (``HOT_NODES``). Shared, the top of the tree is read and written by every pair of every thread (the
threads wait on each other's cache lines); copied, each thread's copy moves alone and the call ends by adding the
mean of the copies' changes, so that a copied node learns as if from one thread's pairs.

Two measures, each hot count in its own turn, rounds alternating the order:
  speed  words/s of one epoch with ``--threads`` real threads (the cores this machine has), SG-HS and CBOW-HS;
  loss   the training loss per pair of the last of ``--epochs`` epochs with ``--blocks`` blocks (the kernel drives
         16 blocks on 2 cores exactly as 16 cores would run them), and with one block (sequential SGD) beside.

With ``--share-threads 8,4`` the top nodes shared (0 copied) are also measured with fewer threads: speed with that
many real threads, loss with that many blocks (on many cores, threads that all write the root may go faster fewer).

    python bench/speed/word2vec_hot_nodes.py [--hot 64,7,3,1,0] [--rounds 3] [--threads N] [--blocks 16] [--share-threads 8,4]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("NUMBA_NUM_THREADS", str(max(16, os.cpu_count() or 1)))  # (before numba is imported)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine.config.settings import Word2VecConfig  # noqa: E402
from engine.data.corpora import get_corpus  # noqa: E402
from engine.data.text import encode_sentences, tokenized_sentences  # noqa: E402
from engine.data.vocab import Vocab  # noqa: E402
from engine.models.word2vec import cpu  # noqa: E402
from engine.models.word2vec.model import Word2VecModel, train_steps  # noqa: E402

VARIANTS = [("SG-HS", 1), ("CBOW-HS", 0)]
RULE = ("The rule, written 2026-11-29 21:31 UTC before the first speed figure (a single seed's loss had been seen: it "
        "rose with every node copied): the kernel keeps the fewest copied nodes among the counts whose speed is at "
        "least 90% of 64's in both variants on the 2-core machine that wrote it; the loss says what each count costs. "
        "Speed with more cores is the GPU check's sweep to measure (bench/gpu_check.py).")


def sentences_of(corpus: str, words: int) -> list[list[str]]:
    out, n = [], 0
    for s in tokenized_sentences(get_corpus(corpus).sentences("train")):
        out.append(s)
        n += len(s)
        if n >= words:
            break
    return out


def train(sentences, sg: int, hot: int, workers: int, epochs: int, seed: int) -> tuple[float, float]:
    """(words/s, the loss per pair of the last epoch) of one run with ``hot`` copied nodes and ``workers`` blocks."""
    cpu.HOT_NODES = hot
    cfg = Word2VecConfig(sg=sg, hs=1, epochs=epochs, workers=workers)
    vocab = Vocab.build(sentences, cfg.min_count)
    ids, starts = encode_sentences(sentences, vocab.index)
    model = Word2VecModel(vocab, cfg, torch.device("cpu"), seed=seed)
    per_epoch = np.zeros((epochs, 2))
    t0 = time.perf_counter()
    with torch.no_grad():
        for info in train_steps(model, ids, starts, seed=seed, kernel=True):
            per_epoch[info["epoch"]] += (float(info["step_loss"]), info["loss_pairs"])
    elapsed = time.perf_counter() - t0
    return sum(len(s) for s in sentences) * epochs / elapsed, float(per_epoch[-1, 0] / max(per_epoch[-1, 1], 1))


def shared(threads: int) -> str:
    """A row's label: none copied, the top shared by ``threads`` threads (blocks, for the loss)."""
    return f"0, {threads} threads"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--hot", default="64,7,3,1,0")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="real threads for the speed")
    p.add_argument("--blocks", type=int, default=16, help="blocks for the loss")
    p.add_argument("--speed-words", type=int, default=1_000_000)
    p.add_argument("--loss-words", type=int, default=400_000)
    p.add_argument("--epochs", type=int, default=3, help="epochs of the loss runs (the speed runs take one)")
    p.add_argument("--corpus", default="default", help="a corpus name or a text file")
    p.add_argument("--section", default="word2vec-hot-nodes", help="the RESULTS.md section to write")
    p.add_argument("--share-threads", default="", help="thread counts at which the shared top is also measured")
    args = p.parse_args()
    hots = [int(h) for h in args.hot.split(",")]
    shares = [int(t) for t in args.share_threads.split(",") if t]
    speed_text, loss_text = sentences_of(args.corpus, args.speed_words), sentences_of(args.corpus, args.loss_words)
    train(loss_text[:300], 1, 64, 2, 1, 0)  # compile (or load) the kernel
    labels: list[int | str] = [*hots, *map(shared, shares)]
    speed: dict[tuple[str, int | str], list[float]] = {(v, h): [] for v, _ in VARIANTS for h in labels}
    loss: dict[tuple[str, int | str], list[float]] = {(v, h): [] for v, _ in VARIANTS for h in [*labels, -1]}  # -1: one block
    for r in range(args.rounds):
        order = hots if r % 2 == 0 else hots[::-1]
        for name, sg in VARIANTS:
            loss[(name, -1)].append(train(loss_text, sg, 64, 1, args.epochs, r + 1)[1])
            for h in order:
                speed[(name, h)].append(train(speed_text, sg, h, args.threads, 1, r + 1)[0])
                loss[(name, h)].append(train(loss_text, sg, h, args.blocks, args.epochs, r + 1)[1])
                print(f"round {r + 1} {name} hot {h}: {speed[(name, h)][-1]:,.0f} words/s, loss {loss[(name, h)][-1]:.4f}"
                      f" (one block {loss[(name, -1)][-1]:.4f})", flush=True)
            for t in shares if r % 2 == 0 else shares[::-1]:
                speed[(name, shared(t))].append(train(speed_text, sg, 0, t, 1, r + 1)[0])
                loss[(name, shared(t))].append(train(loss_text, sg, 0, t, args.epochs, r + 1)[1])
                print(f"round {r + 1} {name} {shared(t)}: {speed[(name, shared(t))][-1]:,.0f} words/s, "
                      f"loss {loss[(name, shared(t))][-1]:.4f}", flush=True)
    lines = [
        "## word2vec's CPU kernel, hierarchical softmax: the top nodes each thread copies",
        "",
        f"`python bench/speed/word2vec_hot_nodes.py --hot {args.hot} --rounds {args.rounds} --threads {args.threads} "
        f"--blocks {args.blocks}{f' --share-threads {args.share_threads}' if shares else ''}`: the {'default corpus' if args.corpus == 'default' else 'default corpus as a text file'}'s first {args.speed_words:,} words for the speed (one epoch, "
        f"{args.threads} real threads), its first {args.loss_words:,} for the loss ({args.epochs} epochs, "
        f"{args.blocks} blocks, and one block: sequential SGD); seeds 1..{args.rounds}, the order of the counts "
        f"reversed every other round; speed: median; loss: mean.",
        f"Machine: {machine()}.",
        "",
        RULE,
        "",
        "| variant | top nodes copied | words/s | vs 64 | loss per pair, last epoch | vs one block |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, _ in VARIANTS:
        one = float(np.mean(loss[(name, -1)]))
        for label in labels:
            s, s64 = float(np.median(speed[(name, label)])), float(np.median(speed[(name, 64)])) if 64 in hots else float("nan")
            lo = float(np.mean(loss[(name, label)]))
            lines.append(f"| {name} | {label} | {s:,.0f} | {s / s64:.2f}x | {lo:.4f} | {lo - one:+.4f} |")
        lines.append(f"| {name} | one block | | | {one:.4f} | |")
    write_section(args.section, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
