"""The window's long jobs (index builds, occurrence fetches) run torch on every core but one, and at least one:
the window keeps a core whatever the machine has."""

import threading

import pytest
import torch

import engine.api as api
from engine import query_threads


@pytest.mark.parametrize("cores", [1, 2, 4, 16])
def test_a_long_job_leaves_the_window_a_core_at_any_core_count(monkeypatch, cores):
    monkeypatch.setattr(query_threads, "DEFAULT_THREADS", [cores])  # torch's own choice on a machine with that many
    mine = torch.get_num_threads()
    seen = []

    def job():
        api.long_job_threads_here()
        seen.append(torch.get_num_threads())
        api.one_thread_here()  # and a query after it on the same worker: one
        seen.append(torch.get_num_threads())

    try:
        worker = threading.Thread(target=job)
        worker.start()
        worker.join()
    finally:
        torch.set_num_threads(mine)
    assert seen == [max(1, cores - 1), 1]
