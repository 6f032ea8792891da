"""An unloaded model still alive is thawed out of the frozen objects only at the last look: a holder that lets go
before it frees the model by its reference count, and no thaw gives every object back to the collector."""

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


def test_a_model_in_a_frozen_cycle_is_thawed_at_the_last_look_and_then_collected(qtbot, thaws):
    gone = a_model_in_a_frozen_cycle()  # only a collection after a thaw frees it
    try:
        garbage.thaw_for(gone, wait_ms=10, checks=3)  # looks at 0, 20 and 40 ms more
        assert thaws == []  # not at the first look
        qtbot.waitUntil(lambda: thaws == [1], timeout=2000)
    finally:
        garbage.unfreeze()
        gc.collect()
    assert gone() is None


def test_a_model_held_by_a_frozen_live_holder_that_lets_go_is_never_thawed_for(qtbot, thaws):
    """What holds an unloaded model is most often alive, frozen with the window at its last quiet moment (a queued
    query's closure): it lets go, and the model goes by its reference count. A thaw at the first look would have
    given every object back to the collector for nothing."""
    model = Model()
    gone = weakref.ref(model)
    holder = [model]  # a query's closure, say, alive at the freeze
    del model
    garbage.freeze_now()
    try:
        garbage.thaw_for(gone, wait_ms=20, checks=3)
        assert thaws == [] and gone() is not None
        holder.clear()  # the query ran and went
        assert gone() is None  # by its reference count: no collection
        qtbot.wait(200)
        assert thaws == []
    finally:
        garbage.unfreeze()


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


def test_no_object_is_listed_while_a_worker_may_be_building_one(qtbot, thaws, frozen, monkeypatch):
    """A list from ``gc.get_objects`` or ``gc.get_referrers`` names every object in it, a tuple a worker is still
    filling too, which then cannot be resized: the worker's query failed with "SystemError: bad argument to
    internal function" (the chaos bench, run Z34). While a query runs, the collector counts instead of listing; once
    it ends, it lists again. An unloaded model's looks list nothing at all."""
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
        garbage.thaw_for(gone, wait_ms=10_000, checks=1)
        assert listed == [] and thaws == [1]
        assert collector.long_lived >= len(young)  # counted, not listed: what the full collection left
        release.set()
        assert wait_for_workers(10_000)
        collector.pending = collector.long_lived + 1
        collector.full_is_due()
        assert listed == ["objects"]
    finally:
        release.set()
        collector.close()
