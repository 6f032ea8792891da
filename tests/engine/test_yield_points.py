"""engine.yield_points: while the app's window holds them, worker threads stop at the start of a torch module's
forward and go on when it lets go, or when the hold runs out; the main thread never waits."""

from __future__ import annotations

import threading
import time

import pytest
import torch

from engine.yield_points import (
    hold_workers,
    release_workers,
    stop_yielding_at_modules,
    workers_held,
    yield_at_modules,
    yield_point,
)


@pytest.fixture(autouse=True)
def _hook_removed_after():
    yield
    release_workers()
    stop_yielding_at_modules()  # (later tests' models, a compiled one among them, run without it)


def _forwards_counted(module: torch.nn.Module, stop: threading.Event, done: list[int]) -> None:
    x = torch.zeros(1, 4)
    while not stop.is_set():
        module(x)
        done[0] += 1


def test_a_worker_stops_at_its_next_forward_while_held_and_goes_on_when_let_go():
    yield_at_modules()
    module, stop, done = torch.nn.Linear(4, 4), threading.Event(), [0]
    worker = threading.Thread(target=_forwards_counted, args=(module, stop, done))
    worker.start()
    try:
        time.sleep(0.1)
        assert done[0] > 0
        hold_workers(5.0)
        time.sleep(0.05)  # (the forward under way when the hold began ends)
        held_at = done[0]
        time.sleep(0.3)
        assert done[0] <= held_at + 1 and workers_held()
        module(torch.zeros(1, 4))  # the main thread is never held
        release_workers()
        time.sleep(0.1)
        assert done[0] > held_at + 10 and not workers_held()
    finally:
        release_workers()
        stop.set()
        worker.join()


def _took_in_a_thread(work) -> float:
    """How long ``work`` took in a thread of its own (not the main thread, which is never held)."""
    took: list[float] = []

    def worker() -> None:
        began = time.monotonic()
        work()
        took.append(time.monotonic() - began)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(5)
    return took[0]


def test_a_hold_never_outlasts_its_limit():
    hold_workers(0.2)
    try:
        waited = _took_in_a_thread(yield_point)
    finally:
        release_workers()
    assert 0.15 < waited < 1.0
    began = time.monotonic()
    waited = _took_in_a_thread(yield_point)  # nothing held: no wait at all
    assert time.monotonic() - began < 0.1 and waited < 0.05


def _waited_in_a_worker(work) -> float:
    """How long ``work`` took in a worker thread started while the workers are held for 0.3 s."""
    hold_workers(0.3)
    try:
        return _took_in_a_thread(work)
    finally:
        release_workers()


def test_building_a_model_loading_its_weights_and_a_query_s_steps_are_yield_points_too(tmp_path):
    """A worker loading a model (transformers builds hundreds of modules, the weights are read tensor by tensor) or
    walking a long query's steps waits as well, not only one running a forward."""
    from safetensors.torch import save_file

    from engine.cancel import check_cancelled
    from engine.data.safetensors_torch import read_safetensors

    yield_at_modules()
    save_file({"w": torch.ones(2, 2)}, str(tmp_path / "w.safetensors"))
    assert _waited_in_a_worker(lambda: torch.nn.Sequential(torch.nn.Linear(2, 2))) > 0.2
    assert _waited_in_a_worker(lambda: read_safetensors(tmp_path / "w.safetensors")) > 0.2
    assert _waited_in_a_worker(lambda: check_cancelled("a step")) > 0.2
    # and nothing waits once the hold is let go
    began = time.monotonic()
    thread = threading.Thread(target=lambda: (torch.nn.Linear(2, 2), read_safetensors(tmp_path / "w.safetensors")))
    thread.start()
    thread.join(5)
    assert time.monotonic() - began < 0.15
