"""How many threads torch runs on in the thread that asks: one for a small interactive query, every core but one
for the window's long jobs. torch's own choice is kept the first time a thread asks for another."""

from __future__ import annotations

from typing import Any

DEFAULT_THREADS: list[int] = []  # torch's own choice, kept before any thread asks for one


def _loaded_torch() -> Any:
    """torch if something has imported it (None otherwise: it is never imported just for this). When
    another thread is still importing it, sys.modules holds a half-initialised module: ``import``
    waits for that thread to finish instead of touching it."""
    import sys

    if "torch" not in sys.modules:
        return None
    import torch

    return torch


def one_thread_here() -> None:
    """Let the calling thread run torch on one core (when torch is loaded). Small interactive queries
    are faster so: with its own team of threads, a fill-mask on a worker thread took 2-5x longer
    (bench/speed/attention_predictions_speed.py). Threads that start using torch later would inherit the
    setting: long jobs call ``long_job_threads_here`` first."""
    torch = _loaded_torch()
    if torch is not None:
        default_threads(torch)
        torch.set_num_threads(1)


def long_job_threads_here() -> None:
    """Let the calling thread run torch on every core but one, and at least one (the window's long jobs: corpus
    index builds, the lens's occurrence fetches). The window keeps a core: beside its query thread, two long jobs
    with torch on every core made five torch threads on a laptop's two cores, and the window's thread waited
    (bench/robustness/CHAOS-HISTORY.md, "The twentieth session's runs"); alone on two cores, a corpus index took as long
    on one as on two (bert-tiny 10.2 and 10.4 s, minilm-mlm 26.2 and 26.1 s)."""
    torch = _loaded_torch()
    if torch is not None:
        torch.set_num_threads(max(1, default_threads(torch) - 1))


def default_threads(torch: Any) -> int:
    """torch's own number of threads, kept the first time a thread asks for another."""
    if not DEFAULT_THREADS:
        DEFAULT_THREADS.append(torch.get_num_threads())
    return DEFAULT_THREADS[0]

