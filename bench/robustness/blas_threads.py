"""The window's NumPy work and the GIL (issue 37: the event loop's stalls): how long the Polysemy lens's occurrence
map and a GloVe word's neighbours keep the window's thread from running, with NumPy's and SciPy's OpenBLAS on a
thread per core (their default) and on one (the window's, explorer/worker_threads.py), and the map's projection
done by scikit-learn's PCA (before) or by ``engine.inspection.projection.pca_2d`` (now), and a t-SNE map started
from either.

A perf profile of the talk window opening on a quiet machine found the window's thread asleep through turns of
60-100 ms while a worker drew a word's occurrence map: scikit-learn's PCA runs SciPy's LAPACK, which holds the
GIL from start to end, and the two OpenBLAS teams' threads spun on the cores between calls.

Each setting of the BLAS threads runs in a fresh process (the setting is read when NumPy loads), rounds
alternated; in each, the main thread sleeps 0.5 ms and wakes, over and over (the window's switch interval,
0.1 ms), while a worker thread runs each job (``gil_holds.longest_hold``). Medians over the rounds.

    python bench/robustness/blas_threads.py [--rounds 5] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

SETTINGS = {"a thread per core (OpenBLAS's default)": None, "one thread (the window's)": "1"}
MODELS = ("bert-tiny", "all-minilm-l6-v2")
WORD, LAYER = "bank", -1


def jobs() -> list[tuple[str, Any]]:
    """(label, call) for each job, its data read once (the occurrences from the cache, as the lens reads them)."""
    import numpy as np

    from engine import api
    from engine.inspection import projection

    def sklearn_pca(x: np.ndarray, method: str, seed: int) -> np.ndarray:
        from sklearn.decomposition import PCA

        return PCA(n_components=2, random_state=seed).fit_transform(x)

    def sklearn_tsne(x: np.ndarray) -> np.ndarray:
        from sklearn.manifold import TSNE

        return TSNE(n_components=2, perplexity=30.0, init="pca", random_state=0).fit_transform(x)

    out: list[tuple[str, Any]] = []
    for name in MODELS:
        occurrences = api.word_occurrences(api.load(name), WORD)
        vectors = np.asarray(occurrences.vectors[:, LAYER], np.float32)
        corpus, typed = vectors[:-2], vectors[-2:]
        sentences = list(occurrences.sentences)

        def drawn(pca: Any, corpus: Any = corpus, typed: Any = typed, sentences: list[str] = sentences) -> None:
            before, projection._project = projection._project, pca  # type: ignore[assignment]
            try:
                projection.occurrence_map(corpus, sentences[:-2], typed, sentences[-2:], "pca")
            finally:
                projection._project = before  # type: ignore[assignment]

        shape = f"{len(vectors)} × {vectors.shape[1]}"
        out.append((f"map of “{WORD}”, {name} ({shape}), scikit-learn's PCA (before)", lambda d=drawn: d(sklearn_pca)))
        out.append((f"map of “{WORD}”, {name} ({shape}), pca_2d (now)", lambda d=drawn: d(projection._project)))
        out.append((f"the projection alone, {name}: scikit-learn's PCA", lambda v=vectors: sklearn_pca(v, "pca", 0)))
        out.append((f"the projection alone, {name}: pca_2d", lambda v=vectors: projection.pca_2d(v)))
        if name == MODELS[-1]:  # t-SNE, which starts from a PCA: scikit-learn's own (before) or pca_2d (now)
            out.append((f"t-SNE map of “{WORD}”, {name}, scikit-learn's init (before)",
                        lambda v=vectors: sklearn_tsne(v)))
            out.append((f"t-SNE map of “{WORD}”, {name}, from pca_2d (now)",
                        lambda v=vectors: projection._project(v, "tsne", 0)))
    glove = api.load("glove-6b-50d")
    out.append(("neighbours of “bank”, glove-6b-50d", lambda: glove.static_neighbours("bank", 20)))
    return out


def child() -> None:
    """One round in this process: every job once after a warm call; prints {label: [wall s, longest wait s]}."""
    import gc

    from bench.robustness.gil_holds import SWITCH_S, longest_hold

    sys.setswitchinterval(SWITCH_S)
    gc.disable()  # as the window's process (explorer.garbage collects on its own thread)
    found = {}
    for label, job in jobs():
        job()
        found[label] = longest_hold(job, one_thread=True)
    print(json.dumps(found))


def measure(rounds: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    rows: dict[str, dict[str, list[tuple[float, float]]]] = {s: {} for s in SETTINGS}
    for r in range(rounds):
        for setting in (list(SETTINGS) if r % 2 == 0 else list(SETTINGS)[::-1]):
            environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
            environment["OMP_WAIT_POLICY"] = "PASSIVE"  # the window's torch threads
            if SETTINGS[setting] is not None:
                environment["OPENBLAS_NUM_THREADS"] = SETTINGS[setting]  # type: ignore[assignment]
            done = subprocess.run([sys.executable, __file__, "--child"], env=environment, check=True,
                                  capture_output=True, text=True)
            for label, got in json.loads(done.stdout.strip().splitlines()[-1]).items():
                rows[setting].setdefault(label, []).append(tuple(got))
        print(f"round {r + 1} of {rounds}", flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child()
        return
    rows = measure(args.rounds)
    names = list(SETTINGS)
    lines = ["| job (on a worker thread) | " + " | ".join(f"{s}: wall / longest wait" for s in names) + " |",
             "|---|" + "---:|" * len(names)]
    for label in rows[names[0]]:
        cells = []
        for s in names:
            runs = rows[s][label]
            cells.append(f"{statistics.median(t for t, _ in runs) * 1000:,.1f} / "
                         f"{statistics.median(h for _, h in runs) * 1000:,.1f} ms")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    body = "\n".join([
        "## The window's numerical work and the GIL", "",
        f"Machine: {machine()}", "",
        f"`python bench/robustness/blas_threads.py --rounds {args.rounds}`: the main thread sleeps 0.5 ms and wakes, "
        "over and over (the window's switch interval), while a worker thread runs one job of the Polysemy lens's "
        f"(the occurrence map of “{WORD}” at the last layer from the cached occurrences: the projection, then the "
        "sense clusters) or a GloVe neighbours query; the longest time the main thread could not run beyond its sleep. "
        "NumPy's and SciPy's OpenBLAS on a thread per core and on one thread, each in a fresh process, rounds "
        f"alternated; {args.rounds} rounds, medians.", "", *lines, ""])
    print(body)
    if not args.no_write:
        write_section("blas-threads", body)


if __name__ == "__main__":
    main()
