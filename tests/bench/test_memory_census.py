"""The chaos bench's census of who holds memory (bench/robustness/memory.py, ``holders_mb``): a model that
is no longer loaded but still alive is named with what keeps it, and a loaded model's own weights are not
counted as held elsewhere."""

import gc

import pytest

from bench.robustness.memory import holders_mb


class Keeper:
    """Stands for a panel that kept a model after it was unloaded."""


def earlier_windows_deleted() -> None:
    """A window an earlier test closed waits for Qt's event loop to delete it (pytest-qt's ``deleteLater``), and
    with it the models its panels show: not this test's holders."""
    import sys

    if "PySide6.QtCore" in sys.modules:
        from PySide6.QtCore import QCoreApplication, QEvent

        if QCoreApplication.instance() is not None:
            QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def test_an_unloaded_model_is_named_with_what_keeps_it_and_loaded_weights_are_not_counted():
    from engine import api

    earlier_windows_deleted()
    loaded = api.load("bert-tiny")
    kept = Keeper()
    kept.handle = api.load("bert-tiny")  # a second copy, no longer in the session's models
    assert kept.handle is not loaded

    groups = dict(holders_mb({id(loaded)}, min_mb=1.0))

    stray = [path for path in groups if path.startswith("handle bert-tiny:")]
    assert len(stray) == 1 and stray[0].endswith("Keeper → engine.handles.transformer.TransformerHandle"), groups
    # the stray copy's word embeddings (8,000 × 256 floats: 7.8 MB) are held; the loaded copy's are not listed
    embeddings = [mb for path, mb in groups.items() if path.endswith("Embedding → dict → dict → Parameter")]
    assert sum(embeddings) == pytest.approx(8000 * 256 * 4 / 2**20, rel=0.05), groups


def test_a_held_handle_costs_its_own_tensors_and_not_those_it_shares_with_loaded_models():
    """The census's "Try it" figure (bench/robustness/chaos.py, ``try_it_mb``): a model held apart counts its
    weights; the same weights, when a loaded model holds them too, count nothing."""
    from bench.robustness.memory import handle_tensors_mb
    from engine import api

    one = api.load("bert-tiny")
    other = api.load("gpt-tiny")
    alone = handle_tensors_mb(one, [other])
    assert alone == pytest.approx(5_479_746 * 4 / 2**20, rel=0.05)  # bert-tiny's 5.5 million float32 weights
    assert handle_tensors_mb(one, [other, one]) == alone  # (itself among the loaded: still its own)
    twin = type(one).__new__(type(one))  # another handle over the same model object: nothing of its own
    twin.__dict__.update(one.__dict__)
    assert handle_tensors_mb(twin, [one]) == 0.0
