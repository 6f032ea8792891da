"""word2vec: ours vs gensim, side by side in one run, on the default corpus (train part).

Same tokenization, vocabulary rule (min_count 5), hyper-parameters (gensim defaults: window 5,
sample 1e-3, alpha 0.025, 100 dimensions, negative 5) and epochs, for SG-NS, CBOW-NS, SG-HS and
CBOW-HS. Speed = corpus words x epochs / training wall time (vocabulary building excluded for both);
gensim uses workers = cores. Quality: analogy accuracy (questions-words), WS353 and SimLex-999
Spearman, scored by gensim's evaluation functions for both. Each variant runs ``--rounds`` times,
gensim and ours alternating, and reports the median speed of each (the quality of the first round);
our compiled CPU kernel is compiled (or loaded from numba's cache) before any timing.

With ``--threads 2,4,8,16`` each variant runs at each thread count (ours: the kernel's threads, gensim:
its workers), so that a defect that shows only with many threads (16 threads' changes to the top of
the Huffman tree summed: diverged) shows as a row. ``--corpus`` takes a text file where the data
packages are not installed (the GPU machine).

    python bench/speed/word2vec_vs_gensim.py [--epochs 5] [--rounds 3] [--max-words N] [--device cpu] [--torch-path]
                                       [--threads 2,4,8,16] [--corpus FILE] [--section NAME]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench._report import machine, write_section  # noqa: E402
from engine.config.settings import Word2VecConfig  # noqa: E402
from engine.data.corpora import get_corpus  # noqa: E402
from engine.data.evaluation import analogy, word_similarity  # noqa: E402
from engine.data.keyed_vectors import StaticVectors  # noqa: E402
from engine.data.text import encode_sentences, tokenized_sentences  # noqa: E402
from engine.data.vocab import Vocab  # noqa: E402
from engine.device import pick_device  # noqa: E402
from engine.models.word2vec.model import Word2VecModel, train_steps  # noqa: E402

VARIANTS = [("SG-NS", 1, 0), ("CBOW-NS", 0, 0), ("SG-HS", 1, 1), ("CBOW-HS", 0, 1)]


def quality(words, vectors) -> dict[str, float | None]:
    sv = StaticVectors(words, vectors)
    return {"analogy": analogy(sv)["accuracy"], "ws353": word_similarity(sv, "wordsim353")["spearman"],
            "simlex": word_similarity(sv, "simlex")["spearman"]}


def mean_quality(rounds: list[dict]) -> dict[str, float]:
    return {key: float(np.mean([q[key] for q in rounds])) for key in rounds[0]}


def run_ours(sentences, sg, hs, epochs, device, kernel=None, seed=1, threads=0) -> tuple[float, dict]:
    cfg = Word2VecConfig(sg=sg, hs=hs, epochs=epochs, workers=threads)
    vocab = Vocab.build(sentences, cfg.min_count)
    ids, starts = encode_sentences(sentences, vocab.index)
    model = Word2VecModel(vocab, cfg, device, seed=seed)
    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in train_steps(model, ids, starts, seed=seed, kernel=kernel):
            pass
        if device.type == "cuda":
            torch.cuda.synchronize(device)  # wait for the device: the steps queue their work without syncing
    elapsed = time.perf_counter() - t0
    raw_words = sum(len(s) for s in sentences)  # the count gensim uses: every token, in vocabulary or not
    vectors = model.word_vectors()
    if not np.all(np.isfinite(vectors)):  # a diverged run: a row that says so, not a crash in the scoring
        return raw_words * epochs / elapsed, {"analogy": float("nan"), "ws353": float("nan"), "simlex": float("nan")}
    return raw_words * epochs / elapsed, quality(vocab.words, vectors)


def run_gensim(sentences, sg, hs, epochs, seed=1, threads=0) -> tuple[float, dict]:
    from gensim.models import Word2Vec

    model = Word2Vec(sg=sg, hs=hs, negative=0 if hs else 5, workers=threads or os.cpu_count() or 1, seed=seed,
                     min_count=5)
    model.build_vocab(sentences)
    t0 = time.perf_counter()
    model.train(sentences, total_examples=model.corpus_count, epochs=epochs)
    elapsed = time.perf_counter() - t0
    words = model.corpus_total_words
    return words * epochs / elapsed, quality(list(model.wv.index_to_key), model.wv.vectors)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--max-words", type=int, default=None)
    p.add_argument("--device", default=None)
    p.add_argument("--variants", default=",".join(v[0] for v in VARIANTS))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--torch-path", action="store_true", help="ours with the batched torch steps, not the CPU kernel")
    p.add_argument("--threads", default="0", help="thread counts, comma-separated (0: every core)")
    p.add_argument("--corpus", default="default", help="a corpus name or a text file")
    p.add_argument("--section", default=None, help="the RESULTS.md section to write")
    p.add_argument("--no-gensim", action="store_true", help="ours alone (where gensim is not installed)")
    args = p.parse_args()
    known = {v[0].lower(): v[0] for v in VARIANTS}
    unknown = [v for v in args.variants.split(",") if v.lower() not in known]
    if unknown:
        p.error(f"unknown variant {', '.join(unknown)}: choose from {', '.join(known.values())}")
    args.variants = ",".join(known[v.lower()] for v in args.variants.split(","))
    device = pick_device(args.device)
    kernel = False if args.torch_path else None
    sentences, n = [], 0
    for words in tokenized_sentences(get_corpus(args.corpus).sentences("train")):
        sentences.append(words)
        n += len(words)
        if args.max_words and n >= args.max_words:
            break
    run_ours(sentences[:500], 1, 0, 1, device, kernel)  # compile (or load) the kernel, warm the allocator
    rows = []
    nan = {"analogy": float("nan"), "ws353": float("nan"), "simlex": float("nan")}
    for name, sg, hs in VARIANTS:
        if name not in args.variants.split(","):
            continue
        for threads in (int(t) for t in args.threads.split(",")):
            g_speeds, o_speeds, g_qs, o_qs = [], [], [], []
            for r in range(args.rounds):  # a seed per round, the same for both
                g_speed, g_quality = (float("nan"), nan) if args.no_gensim else \
                    run_gensim(sentences, sg, hs, args.epochs, seed=r + 1, threads=threads)
                o_speed, o_quality = run_ours(sentences, sg, hs, args.epochs, device, kernel, seed=r + 1, threads=threads)
                g_speeds.append(g_speed)
                o_speeds.append(o_speed)
                g_qs.append(g_quality)
                o_qs.append(o_quality)
                print(f"  {name} {threads} threads round {r + 1}: ours {o_speed:,.0f} w/s {o_quality}, "
                      f"gensim {g_speed:,.0f} w/s {g_quality}", flush=True)
            o_speed, g_speed = float(np.median(o_speeds)), float(np.median(g_speeds))
            rows.append((name, threads, o_speed, g_speed, mean_quality(o_qs), mean_quality(g_qs)))
            print(name, threads, f"ours {o_speed:,.0f} w/s {rows[-1][4]}", f"gensim {g_speed:,.0f} w/s {rows[-1][5]}",
                  flush=True)
            report(rows, args, n, device)  # after each row, so a cut-short run still records what it measured


def report(rows, args, n, device) -> None:
    from engine.models.word2vec import cpu as word2vec_cpu

    if device.type != "cpu":
        path = f"the batched torch steps on {device}"
    elif args.torch_path or not word2vec_cpu.available():
        path = "the batched torch steps on the CPU"
    else:
        path = "the compiled CPU kernel (numba)"
    flags = "".join(f" {shlex.quote(Path(a).name if a == args.corpus and a != 'default' else a)}"
                    for a in sys.argv[1:])  # as typed (a corpus file by its name): every option, --variants included
    lines = [
        f"## word2vec vs gensim ({device.type}{', torch path' if args.torch_path else ''}"
        f"{', by thread count' if args.threads != '0' else ''})",
        "",
        f"`python bench/speed/word2vec_vs_gensim.py{flags}` on the "
        f"{'default corpus' if args.corpus == 'default' else 'default corpus as a text file'}, train part ({n:,} "
        f"tokens), {args.epochs} epochs, gensim's default hyper-parameters for both; gensim's workers and our "
        f"kernel's threads as the row says (0: every core, {os.cpu_count()} here); ours with {path}. Speeds: "
        f"median of {args.rounds} alternating rounds; quality: mean of the {args.rounds} rounds (seeds "
        f"1..{args.rounds}, the same for both).",
        f"Machine: {machine()}.",
        "",
        "| variant | threads | ours words/s | gensim words/s | speed ratio | analogy ours / gensim | WS353 ours / gensim | SimLex ours / gensim |",
        "|---|---:|---:|---:|---:|---|---|---|",
    ]
    for name, threads, o_s, g_s, o_q, g_q in rows:
        lines.append(f"| {name} | {threads or os.cpu_count()} | {o_s:,.0f} | {g_s:,.0f} | {o_s / g_s:.2f}x "
                     f"| {o_q['analogy']:.3f} / {g_q['analogy']:.3f} | {o_q['ws353']:.3f} / {g_q['ws353']:.3f} "
                     f"| {o_q['simlex']:.3f} / {g_q['simlex']:.3f} |")
    default = f"word2vec-vs-gensim-{device.type}{'-torch-path' if args.torch_path else ''}"
    write_section(args.section or default, "\n".join(lines))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
