"""The polysemy lens's occurrence fetcher lets go of an unloaded model: a fetch under way for it stops at its next
check (its work holds the model, whose memory waited for the whole fetch, a corpus's word index built first)."""

import threading

from explorer.panels.polysemy.occurrences import OccurrenceFetcher
from explorer.tasks import wait_for_workers


def test_forgetting_a_model_stops_a_fetch_under_way_for_it(qtbot, monkeypatch):
    import engine.api

    started = threading.Event()

    def slow_index(corpus, progress=None):  # (a first word index of a corpus: seconds to a minute)
        from engine.cancel import check_cancelled

        started.set()
        while True:
            check_cancelled("indexing")
            threading.Event().wait(0.01)

    monkeypatch.setattr(engine.api, "word_index", slow_index)
    from PySide6.QtWidgets import QWidget

    owner = QWidget()  # (the fetcher's owner, as the polysemy panel is: closed and deleted by qtbot after the test)
    qtbot.addWidget(owner)
    fetcher = OccurrenceFetcher(owner)
    failed = []
    fetcher.failed.connect(failed.append)
    fetcher.fetch({"m": object(), "n": object()}, "bank", "default")
    job = fetcher.job
    assert started.wait(10) and job.running
    fetcher.forget("x")  # another model: the fetch goes on
    assert not job.stop.is_set()
    fetcher.forget("n")
    assert job.stop.is_set() and fetcher.asked is None
    qtbot.waitUntil(lambda: not job.running, timeout=10_000)
    assert failed == []  # (a cancelled fetch says nothing)
    assert wait_for_workers(10_000)  # (its worker done with the job's relays before the fetcher, their owner, goes)
    qtbot.wait(20)
