"""word2vec as a user times it: the whole command, start to end, against gensim's whole ``Word2Vec(...)``
call (its import included) on the same text file and settings; both run as fresh processes, alternating,
median of the rounds. Also the training loop alone from ours (the run's own words/s) for comparison with
bench/speed/word2vec_vs_gensim.py.

    python bench/speed/word2vec_end_to_end.py [--corpus FILE] [--epochs 1,5] [--rounds 3]

Without --corpus, the default corpus's train part is written to a temporary text file first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

from bench._report import machine, write_section  # noqa: E402

GENSIM = """
import sys
from gensim.models import Word2Vec
from gensim.models.word2vec import LineSentence
model = Word2Vec(LineSentence(sys.argv[1]), sg=1, hs=0, negative=5, vector_size=100, window=5, min_count=5,
                 sample=1e-3, workers=2, epochs=int(sys.argv[2]))
if len(sys.argv) > 3:  # the untimed run whose vectors are scored
    model.wv.save_word2vec_format(sys.argv[3])
"""


def quality(ours_run: Path, gensim_vectors: Path) -> tuple[str, str]:
    """Analogy accuracy and WordSim-353 Spearman of our run's vectors and of gensim's (the same functions)."""
    from engine import api
    from engine.data.evaluation import analogy, word_similarity
    from engine.data.keyed_vectors import load_word2vec_format

    def text(vectors) -> str:
        a, w = analogy(vectors), word_similarity(vectors, "wordsim353")
        return f"analogy {a['accuracy']:.3f}, WS353 {w['spearman'] or 0.0:.3f}"

    return text(api.load(ours_run).static_vectors()), text(load_word2vec_format(gensim_vectors))


PHASES = """
import json, sys, tempfile, time
from pathlib import Path
t0 = time.perf_counter()
import engine.cli.train, engine.training.loop, engine.training.static_runs  # the command's imports (no torch on
import engine.models.word2vec.arrays, engine.models.word2vec.steps  # a CPU-only machine: engine.device.accelerator_possible)
t1 = time.perf_counter()
from engine.models.word2vec import cpu as word2vec_cpu
word2vec_cpu.compile_now()
t2 = time.perf_counter()
from engine.config.run_spec import RunSpec
from engine.training.context import TrainContext
from engine.training.static_runs import _vocab_and_ids
with tempfile.TemporaryDirectory() as out:
    from engine.device import CPU
    ctx = TrainContext(RunSpec("word2vec", out, corpus=sys.argv[1]), None, device=CPU)
    cfg = ctx.spec.model
    vocab, ids, starts = _vocab_and_ids(ctx, cfg.lowercase, cfg.min_count, cfg.max_vocab)
    t3 = time.perf_counter()
    del ids
print(json.dumps({"imports": t1 - t0, "kernel": t2 - t1, "corpus": t3 - t2}), flush=True)
import os
os._exit(0)  # as the command leaves (engine.cli.runner.exit_now): no module teardown
"""


def phases(corpus: Path) -> dict[str, float]:
    """Start-up to imports done, kernel compiled/loaded, corpus read → vocabulary and ids: each timed in one
    fresh process (``python -c`` with nothing before the imports but the interpreter's start)."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", PHASES, str(corpus)], check=True, capture_output=True, text=True,
                         cwd=HERE)
    parts = json.loads(out.stdout.strip().splitlines()[-1])
    parts["interpreter"] = max(  # the process's start and exit
        time.perf_counter() - start - sum(parts.values()), 0.0)
    return parts


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=HERE)
    return time.perf_counter() - start


def ours(corpus: Path, epochs: int, out: Path) -> tuple[float, float, dict[str, float]]:
    """The whole command as a process, its JSON events read as they come: (seconds, words/s in the loop,
    its timeline: start-up until training starts, the loop, the rest until the process has ended)."""
    cmd = [sys.executable, "-m", "engine.cli", "word2vec", "--arch", "skipgram", "--loss", "ns", "--epochs",
           str(epochs), "--corpus", str(corpus), "--out", str(out), "--json-events"]
    start = time.perf_counter()
    seen: dict[str, float] = {}
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=HERE) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            event, now = json.loads(line)["event"], time.perf_counter() - start
            seen.setdefault(event, now)
            if event == "eval":  # the last one ends the loop (an evaluation between epochs counts in it)
                seen["loop_end"] = now
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"word2bert-train failed ({proc.returncode}): {' '.join(cmd)}")
    events = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    started = next(e for e in events if e["event"] == "started")
    loop_s = seen["loop_end"] - seen["started"]
    timeline = {"startup": seen["started"], "loop": loop_s, "rest": seconds - seen["loop_end"]}
    return seconds, started["total"] / max(loop_s, 1e-9), timeline


def default_corpus_file(folder: Path) -> Path:
    from engine.data.corpora import get_corpus

    path = folder / "default-train.txt"
    with open(path, "w", encoding="utf-8") as f:
        for doc in get_corpus("default").documents("train"):
            f.write("\n".join(doc.sentences) + "\n\n")
    return path


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", default="")
    p.add_argument("--epochs", default="1,5")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    rows: list[str] = []
    loops: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(args.corpus) if args.corpus else default_corpus_file(Path(tmp))
        for epochs in (int(e) for e in args.epochs.split(",")):
            mine, theirs, loop, timelines = [], [], [], []
            for r in range(args.rounds):
                seconds, words_per_s, timeline = ours(corpus, epochs, Path(tmp) / f"w2v-{epochs}-{r}")
                mine.append(seconds)
                loop.append(words_per_s)
                timelines.append(timeline)
                theirs.append(timed([sys.executable, "-c", GENSIM, str(corpus), str(epochs)]))
                print(f"epochs {epochs} round {r + 1}: ours {mine[-1]:.1f} s, gensim {theirs[-1]:.1f} s", flush=True)
            a, b = statistics.median(mine), statistics.median(theirs)
            vectors = Path(tmp) / f"gensim-{epochs}.txt"
            subprocess.run([sys.executable, "-c", GENSIM, str(corpus), str(epochs), str(vectors)], check=True,
                           capture_output=True, cwd=HERE)
            ours_q, gensim_q = quality(Path(tmp) / f"w2v-{epochs}-0", vectors)
            rows.append(f"| {epochs} | {a:.1f} s | {b:.1f} s | {b / a:.2f}× | {min(mine):.1f} s | {min(theirs):.1f} s | "
                        f"{min(theirs) / min(mine):.2f}× | {statistics.median(loop):,.0f} | "
                        f"{ours_q} | {gensim_q} |")
            loops[epochs] = {k: statistics.median(t[k] for t in timelines) for k in timelines[0]}
        split = [phases(corpus) for _ in range(args.rounds)]
        parts = {k: statistics.median(p[k] for p in split) for k in split[0]}
    body = "\n".join([
        "## word2vec end to end: the whole command vs gensim's whole call", "", f"Machine: {machine()}", "",
        f"`python bench/speed/word2vec_end_to_end.py --rounds {args.rounds}`: `word2bert-train word2vec --arch skipgram "
        "--loss ns --epochs N --corpus FILE` as a process vs `python -c \"Word2Vec(LineSentence(FILE), sg=1, "
        "negative=5, vector_size=100, window=5, min_count=5, sample=1e-3, workers=2, epochs=N)\"` (imports "
        "included), alternating; median seconds. Speed ratio = gensim's time / ours (above 1: ours is faster).",
        "Quality, at the same settings: analogy accuracy (questions-words, 3CosAdd) and WordSim-353 Spearman of "
        "our first round's vectors and of a separate, untimed gensim run's (gensim reads the file split on spaces "
        "only, with case and punctuation attached; ours lowercases and splits punctuation).",
        "The machine's speed varies from one run to the next (its two cores are virtual: the same command's training loop "
        "took 1.9–4.7 s in five runs on an idle machine), so the fastest round of each is given beside the median.",
        "", "| epochs | ours (whole command) | gensim (whole call) | speed ratio | ours, fastest round | gensim, fastest "
        "round | speed ratio, fastest | ours, words/s over the run | "
        "ours: quality | gensim: quality |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|", *rows, "",
        "Where the whole command's time goes, from its own events as they arrive (median of the rounds): "
        "start-up until training starts (the interpreter, the imports and the compiled kernel in the command's "
        "process — no torch: on a machine without a GPU the command trains numpy arrays with the compiled kernel, "
        "engine/models/word2vec/arrays.py; meanwhile a second process forked at start reads the corpus into word ids, "
        "engine/data/prefetch.py), the training loop, and the rest (evaluation, saving, exit). For comparison, "
        "each start-up part alone in a fresh process, one after the other:", "",
        "| epochs | start-up until training | training loop | evaluation, saving, exit | "
        "alone: imports (engine, no torch) | alone: kernel load | alone: corpus → vocabulary and ids |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        *(f"| {e} | {t['startup']:.2f} s | {t['loop']:.2f} s | {t['rest']:.2f} s | {parts['imports']:.2f} s | "
          f"{parts['kernel']:.2f} s | {parts['corpus']:.2f} s |" for e, t in loops.items())])
    print(body)
    write_section("word2vec-end-to-end", body)


if __name__ == "__main__":
    main()
