"""How the window's process lets its worker threads wait (asleep, not spinning, and only as many as it needs) and
how many compiled kernels it keeps.

torch's CPU kernels run on an OpenMP team. Between two parallel regions GNU OpenMP's threads spin for a while
before they sleep, so a model query on a laptop's two cores kept both busy between its operations, and the GUI
thread waited for a core: a thread that wakes every 10 ms beside a query loop woke 2.9 ms late at the 95th
percentile with spinning threads and 0.15 ms late with sleeping ones, and a query was no slower beyond the
machine's noise (bench/robustness/omp_wait.py; bench/robustness/RESULTS.md, "Sleeping worker threads").

NumPy and SciPy each bring their own OpenBLAS, with a team of a thread per core that spins after every call too.
The window's NumPy work is small (a word's occurrence map, a GloVe word's neighbours): one thread does it as fast,
and the spinning teams no longer take the cores from the window's thread (bench/robustness/blas_threads.py;
bench/robustness/RESULTS.md, "The window's numerical work and the GIL").

torch's packed linear layers (engine/models/packed_linear.py) run through oneDNN, which compiles a kernel for every
shape a layer meets, and two caches keep each one for good: oneDNN's and ideep's (torch's layer over it), 1,024
each by default. A shape keeps ~560 kB on an AVX-512 machine, and the window's queries meet hundreds (each model,
each rounded text length): the chaos bench's window made ~280 in its warm-up and went on making more all through its
run, at a few MB a minute. The window keeps 64 in each (bench/robustness/RESULTS.md, "Chaos in the window", the
forty-fourth session's runs; a query's second pass over the same shapes 2% slower: "The compiled kernels' caches in
the window").

The settings are read once, when each library loads, so they are set before torch or NumPy is imported, and only
where the user has not set them. A training process started from the window gets its environment back as it was:
a training's threads are its own, and spinning is faster; a training meets a few shapes."""

from __future__ import annotations

import os

POLICY = "OMP_WAIT_POLICY"
BLAS_THREADS = "OPENBLAS_NUM_THREADS"
KERNEL_CACHES = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")  # oneDNN's, ideep's
KEPT_KERNELS = "64"
WINDOW_SETTINGS = {POLICY: "PASSIVE", BLAS_THREADS: "1", **dict.fromkeys(KERNEL_CACHES, KEPT_KERNELS)}
MARK = "WORD2BERT_SET_OMP_WAIT_POLICY"  # the settings the window's process set (the user had not): their names


def sleeping_worker_threads() -> None:
    """Call before torch or NumPy is imported (the window's process only)."""
    mine = [name for name in os.environ.get(MARK, "").split(",") if name in WINDOW_SETTINGS]
    for name, value in WINDOW_SETTINGS.items():
        if name not in os.environ:
            os.environ[name] = value
            mine.append(name)
    if mine:
        os.environ[MARK] = ",".join(dict.fromkeys(mine))


def training_environment(environment: dict[str, str]) -> dict[str, str]:
    """``environment`` for a training process: without the settings the window made for itself."""
    if MARK not in environment:
        return dict(environment)
    names = environment[MARK].split(",")
    mine = {POLICY} if names == ["1"] else set(names) & set(WINDOW_SETTINGS)  # ("1": before the BLAS threads)
    return {k: v for k, v in environment.items() if k not in mine and k != MARK}
