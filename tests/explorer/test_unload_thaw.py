"""An unloaded model still alive is thawed out of the frozen objects only when a thaw could free it."""

from __future__ import annotations

import gc
import weakref

import pytest

from explorer import garbage


class Model:
    """Stands in for a model handle."""


def a_model_in_a_frozen_cycle() -> weakref.ref:
    """A weak reference to an unloaded model that only its own cycle holds, frozen: a search would thaw at once."""
    model = Model()
    model.itself = model  # type: ignore[attr-defined]
    gone = weakref.ref(model)
    loaded = {"model": model}
    del model
    garbage.freeze_now()
    loaded.clear()
    return gone


@pytest.fixture
def thaws(monkeypatch):
    called: list[int] = []
    monkeypatch.setattr(garbage, "thaw", lambda: called.append(1))
    return called


@pytest.fixture
def frozen():
    """Something frozen, as in the window after its first quiet moment."""
    garbage.freeze_now()
    yield
    garbage.unfreeze()


def test_a_model_held_by_a_live_answer_is_looked_at_again_not_thawed(qtbot, thaws, frozen):
    model = Model()
    answer = {"model": model}  # made after the freeze: an answer on screen, say
    gone = weakref.ref(model)
    del model
    garbage.thaw_for(gone, wait_ms=20, checks=3)
    assert thaws == []  # a thaw would not free it: the answer holds it
    answer.clear()  # the answer goes: so does the model, with no thaw at all
    qtbot.wait(200)
    assert gone() is None and thaws == []


def test_a_model_held_by_a_live_answer_for_good_is_thawed_at_the_last_look(qtbot, thaws, frozen):
    model = Model()
    answer = [model]
    gone = weakref.ref(model)
    del model
    garbage.thaw_for(gone, wait_ms=10, checks=3)  # looks at 0, 20 and 40 ms more
    qtbot.waitUntil(lambda: thaws == [1], timeout=2000)
    assert answer


def test_a_model_in_a_frozen_cycle_is_thawed_at_once(thaws):
    model = Model()
    model.itself = model  # type: ignore[attr-defined]  # a cycle: only a collection frees it
    gone = weakref.ref(model)
    loaded = {"model": model}  # the session's, at the freeze
    del model
    garbage.freeze_now()  # frozen with it: no collection sees it
    loaded.clear()  # unloaded
    try:
        garbage.thaw_for(gone, wait_ms=10_000)
        assert thaws == [1]
    finally:
        garbage.unfreeze()
        gc.collect()
    assert gone() is None


def test_nothing_frozen_nothing_to_thaw(thaws):
    model = Model()
    model.itself = model  # type: ignore[attr-defined]
    gone = weakref.ref(model)
    del model
    garbage.unfreeze()
    garbage.thaw_for(gone, wait_ms=10_000)
    assert thaws == []  # an ordinary collection frees it
    gc.collect()
    assert gone() is None


def test_a_busy_window_is_not_searched_for_referrers(qtbot, thaws, frozen, monkeypatch):
    """Searching for a model's referrers visits every unfrozen object: past ``REFERRERS_AT_MOST`` of them the
    model counts as held, is looked at again, and is thawed at the last look."""
    collector = garbage._GuiCollector()
    collector.timer.stop()
    monkeypatch.setattr(garbage, "_COLLECTOR", [collector])
    searched: list[int] = []
    monkeypatch.setattr(gc, "get_referrers", lambda *objects: searched.append(1) or [])
    try:
        gone = a_model_in_a_frozen_cycle()
        collector.pending = garbage.REFERRERS_AT_MOST  # arrived since the freeze: too many to search
        garbage.thaw_for(gone, wait_ms=10, checks=3)
        assert thaws == [] and searched == []
        qtbot.waitUntil(lambda: thaws == [1], timeout=2000)  # the last look
        assert searched == []
        collector.pending = 0  # a freeze just now: few to search
        garbage.thaw_for(gone, wait_ms=10_000)
        assert searched == [1] and thaws == [1, 1]
    finally:
        collector.close()


def test_no_object_is_listed_while_a_worker_may_be_building_one(qtbot, thaws, frozen, monkeypatch):
    """A list from ``gc.get_objects`` or ``gc.get_referrers`` names every object in it, a tuple a worker is still
    filling too, which then cannot be resized: the worker's query failed with "SystemError: bad argument to
    internal function" (the chaos bench, run Z34). While a query runs, the collector counts instead of listing,
    and an unloaded model is not searched for, only looked at again; once it ends, both list again."""
    import threading

    from explorer.tasks import TaskRunner, wait_for_workers

    collector = garbage._GuiCollector()
    collector.timer.stop()
    monkeypatch.setattr(garbage, "_COLLECTOR", [collector])
    listed: list[str] = []
    real_objects, real_referrers = gc.get_objects, gc.get_referrers
    monkeypatch.setattr(gc, "get_objects", lambda *a, **k: listed.append("objects") or real_objects(*a, **k))
    monkeypatch.setattr(gc, "get_referrers", lambda *a: listed.append("referrers") or real_referrers(*a))
    release, started = threading.Event(), threading.Event()
    runner = TaskRunner()
    runner.submit(lambda: started.set() or release.wait(20))
    assert started.wait(10)
    try:
        gone = a_model_in_a_frozen_cycle()
        young = [[] for _ in range(1000)]
        for generation in (0, 1, 2):
            gc.collect(generation)
        collector.pending = collector.long_lived + 1  # a full collection due by the arrivals
        assert not collector.full_is_due()  # it waits for the query to end
        garbage.thaw_for(gone, wait_ms=10_000)
        assert listed == [] and thaws == []
        assert collector.long_lived >= len(young)  # counted, not listed: what the full collection left
        release.set()
        assert wait_for_workers(10_000)
        garbage.thaw_for(gone, wait_ms=10_000)
        assert listed == ["referrers"] and thaws == [1]  # searched now: only its own cycle holds it
        collector.pending = collector.long_lived + 1
        collector.full_is_due()
        assert listed == ["referrers", "objects"]
    finally:
        release.set()
        collector.close()
