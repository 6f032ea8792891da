"""word2vec as a user times it: the whole command, start to end, against gensim's whole ``Word2Vec(...)``
call (its import included) on the same text file and settings; both run as fresh processes, alternating,
median of the rounds. Also the training loop alone from ours (the run's own words/s) for comparison with
bench/word2vec_vs_gensim.py.

    python bench/word2vec_end_to_end.py [--corpus FILE] [--epochs 1,5] [--rounds 3]

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

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from bench._report import machine, write_section  # noqa: E402

GENSIM = """
import sys
from gensim.models import Word2Vec
from gensim.models.word2vec import LineSentence
Word2Vec(LineSentence(sys.argv[1]), sg=1, hs=0, negative=5, vector_size=100, window=5, min_count=5, sample=1e-3,
         workers=2, epochs=int(sys.argv[2]))
"""


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=HERE)
    return time.perf_counter() - start


def ours(corpus: Path, epochs: int, out: Path) -> tuple[float, float]:
    seconds = timed([sys.executable, "-m", "engine.cli", "word2vec", "--arch", "skipgram", "--loss", "ns",
                     "--epochs", str(epochs), "--corpus", str(corpus), "--out", str(out)])
    events = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    steps = [e for e in events if e["event"] == "step"]
    started = next(e for e in events if e["event"] == "started")
    loop_words_per_s = started["total"] / max(steps[-1]["elapsed_s"], 1e-9) if steps else float("nan")
    return seconds, loop_words_per_s


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
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(args.corpus) if args.corpus else default_corpus_file(Path(tmp))
        for epochs in (int(e) for e in args.epochs.split(",")):
            mine, theirs, loop = [], [], []
            for r in range(args.rounds):
                seconds, words_per_s = ours(corpus, epochs, Path(tmp) / f"w2v-{epochs}-{r}")
                mine.append(seconds)
                loop.append(words_per_s)
                theirs.append(timed([sys.executable, "-c", GENSIM, str(corpus), str(epochs)]))
                print(f"epochs {epochs} round {r + 1}: ours {mine[-1]:.1f} s, gensim {theirs[-1]:.1f} s", flush=True)
            a, b = statistics.median(mine), statistics.median(theirs)
            rows.append(f"| {epochs} | {a:.1f} s | {b:.1f} s | {b / a:.2f}× | {statistics.median(loop):,.0f} |")
    body = "\n".join([
        "## word2vec end to end: the whole command vs gensim's whole call", "", f"Machine: {machine()}", "",
        f"`python bench/word2vec_end_to_end.py --rounds {args.rounds}`: `word2bert-train word2vec --arch skipgram "
        "--loss ns --epochs N --corpus FILE` as a process vs `python -c \"Word2Vec(LineSentence(FILE), sg=1, "
        "negative=5, vector_size=100, window=5, min_count=5, sample=1e-3, workers=2, epochs=N)\"` (imports "
        "included), alternating; median seconds. Speed ratio = gensim's time / ours (above 1: ours is faster).",
        "", "| epochs | ours (whole command) | gensim (whole call) | speed ratio | ours, words/s over the run |",
        "|---:|---:|---:|---:|---:|", *rows])
    print(body)
    write_section("word2vec-end-to-end", body)


if __name__ == "__main__":
    main()
