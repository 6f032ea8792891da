"""Models built with transformers are built one thread at a time: the app loads all-MiniLM-L6-v2 and
minilm-mlm on two threads, and transformers' lazy imports, resolved from both at once, once failed a start
("module 'transformers' has no attribute 'AutoModelForMaskedLM'")."""

import threading

import pytest


@pytest.fixture
def lock_seen(monkeypatch):
    """Each AutoConfig.from_pretrained call records whether another thread could have taken HF_LOCK then."""
    import transformers

    from engine.models.hf_lock import HF_LOCK

    seen: list[bool] = []
    original = transformers.AutoConfig.from_pretrained

    def spy(*args, **kwargs):
        free = []
        probe = threading.Thread(target=lambda: free.append(HF_LOCK.acquire(blocking=False)))
        probe.start()
        probe.join()
        if free[0]:
            HF_LOCK.release()
        seen.append(free[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", spy)
    return seen


def test_loading_a_hugging_face_folder_and_building_a_head_hold_the_lock(lock_seen):
    from engine import api
    from engine.models.masked_lm_head import build

    api.load("all-minilm-l6-v2")
    build("all-minilm-l6-v2")
    assert lock_seen and not any(lock_seen)  # no other thread could have entered transformers meanwhile


def test_two_threads_load_hugging_face_models_at_once():
    from engine import api

    results: list = []
    errors: list[BaseException] = []

    def load(name: str) -> None:
        try:
            results.append(api.load(name))
        except Exception as e:  # noqa: BLE001 - the test raises whatever failed, as it was raised
            errors.append(e)

    threads = [threading.Thread(target=load, args=(n,)) for n in ("all-minilm-l6-v2", "minilm-mlm")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:  # as raised in its thread: a model missing from this machine is named by its own message
        raise errors[0]
    assert len(results) == 2
    masked = next(h for h in results if h.name == "minilm-mlm")  # whichever thread finished first
    assert masked.fill_mask("She deposited the money at the [MASK].", k=10)[0].tokens
