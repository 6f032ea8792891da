"""How the window's process lets torch's worker threads wait: asleep, not spinning.

torch's CPU kernels run on an OpenMP team. Between two parallel regions GNU OpenMP's threads spin for a while
before they sleep, so a model query on a laptop's two cores kept both busy between its operations, and the GUI
thread waited for a core: a thread that wakes every 10 ms beside a query loop woke 2.9 ms late at the 95th
percentile with spinning threads and 0.15 ms late with sleeping ones, and a query was no slower beyond the
machine's noise (bench/robustness/omp_wait.py; bench/robustness/RESULTS.md, "Sleeping worker threads").
The policy is read once, when torch's OpenMP library loads, so it is set before torch is imported, and only
where the user has not set it. A training process started from the window gets it back as it was: a training's
threads are its own, and spinning is faster."""

from __future__ import annotations

import os

POLICY = "OMP_WAIT_POLICY"
MARK = "WORD2BERT_SET_OMP_WAIT_POLICY"  # the window's process set the policy (the user had not)


def sleeping_worker_threads() -> None:
    """Call before torch is imported (the window's process only)."""
    if POLICY not in os.environ:
        os.environ[POLICY] = "PASSIVE"
        os.environ[MARK] = "1"


def training_environment(environment: dict[str, str]) -> dict[str, str]:
    """``environment`` for a training process: without the policy the window set for itself."""
    if MARK not in environment:
        return dict(environment)
    return {k: v for k, v in environment.items() if k not in (POLICY, MARK)}
