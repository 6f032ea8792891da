"""How the window's process lets its worker threads wait: asleep, not spinning, and only as many as it needs.

torch's CPU kernels run on an OpenMP team. Between two parallel regions GNU OpenMP's threads spin for a while
before they sleep, so a model query on a laptop's two cores kept both busy between its operations, and the GUI
thread waited for a core: a thread that wakes every 10 ms beside a query loop woke 2.9 ms late at the 95th
percentile with spinning threads and 0.15 ms late with sleeping ones, and a query was no slower beyond the
machine's noise (bench/robustness/omp_wait.py; bench/robustness/RESULTS.md, "Sleeping worker threads").

NumPy and SciPy each bring their own OpenBLAS, with a team of a thread per core that spins after every call too.
The window's NumPy work is small (a word's occurrence map, a GloVe word's neighbours): one thread does it as fast,
and the spinning teams no longer take the cores from the window's thread (bench/robustness/blas_threads.py;
bench/robustness/RESULTS.md, "The window's numerical work and the GIL").

The settings are read once, when each library loads, so they are set before torch or NumPy is imported, and only
where the user has not set them. A training process started from the window gets its environment back as it was:
a training's threads are its own, and spinning is faster."""

from __future__ import annotations

import os

POLICY = "OMP_WAIT_POLICY"
BLAS_THREADS = "OPENBLAS_NUM_THREADS"
WINDOW_SETTINGS = {POLICY: "PASSIVE", BLAS_THREADS: "1"}
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
