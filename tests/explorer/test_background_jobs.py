"""Long jobs are found and stopped wherever they were started (explorer.tasks): a job whose owner is deleted — a
closed talk window's panel — stops at its next step instead of encoding on with the models it holds, and every
running job, whichever panel started it, is listed for the app to stop when it closes."""

import threading
import time

from PySide6.QtCore import QObject

from explorer.tasks import BackgroundJob, background_jobs, wait_for_workers


def _until_stopped(seen: list[str]):
    def work(progress, stop):
        t0 = time.monotonic()
        while not stop.is_set():
            if time.monotonic() - t0 > 20:
                seen.append("ran on")
                return "ran on"
            time.sleep(0.01)
        seen.append("stopped")
        return "stopped"

    return work


def test_a_job_whose_owner_is_deleted_stops(qtbot):
    owner = QObject()
    seen: list[str] = []
    job = BackgroundJob(_until_stopped(seen), owner)
    assert job in background_jobs()
    qtbot.wait(100)
    owner.deleteLater()  # the panel that asked is gone: nobody will read the result
    qtbot.waitUntil(lambda: bool(seen), timeout=15_000)
    assert seen == ["stopped"]
    assert wait_for_workers(10_000)
    # and it is no longer listed, though a panel may keep its Python object, which never hears that it ended (the
    # window's list of jobs to stop named such a job, left by another window: a flaky closing test)
    assert job.running and not any(j is job for j in background_jobs())


def test_every_running_job_is_listed_and_a_finished_one_is_not(qtbot):
    owners = [QObject(), QObject()]
    seen: list[str] = []
    jobs = [BackgroundJob(_until_stopped(seen), owner) for owner in owners]
    listed = background_jobs()
    assert all(any(job is j for j in listed) for job in jobs)
    for job in jobs:
        with qtbot.waitSignal(job.finished, timeout=15_000):
            job.cancel()
    assert not any(job is j for j in background_jobs() for job in jobs)
    assert seen == ["stopped", "stopped"]


def test_a_finished_query_keeps_nothing_it_ran_alive(qtbot):
    """A runnable the pool keeps after it ran (PySide can) must not keep the model its closure asked: an
    unloaded model would stay in memory (the chaos bench's census found 500 MB held that way)."""
    import gc
    import weakref

    from explorer.tasks import _Job, _Relay

    class Model:  # stands for a loaded model's handle
        pass

    for fails in (False, True):
        model = Model()
        held = weakref.ref(model)

        def ask(model=model, fails=fails):
            if fails:
                raise ValueError("a refusal")
            return id(model)

        job = _Job(1, ask, _Relay())
        del model, ask
        worker = threading.Thread(target=job.run)  # a worker's thread, as the pool's; the job object itself
        worker.start()  # stays referenced here, as the pool may keep it
        worker.join()
        gc.collect()
        assert held() is None, "the finished job still holds what it ran"


def test_stop_all_stops_a_query_in_flight_and_delivers_nothing(qtbot):
    """Stop-all (and closing the app) reaches the queries too, not only the long jobs: a long query stops at its
    next step, one still waiting its turn never runs, and neither panel gets an answer."""
    from engine.cancel import check_cancelled
    from explorer.tasks import TaskRunner, stop_queries

    ran: list[str] = []

    def long_query():
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20:
            check_cancelled("a long query")  # as the engine's corpus-wide queries do between steps
            time.sleep(0.01)
        ran.append("ran on")

    def waiting_query():
        ran.append("ran")

    first, second = TaskRunner(), TaskRunner()
    answers: list[object] = []
    for runner in (first, second):
        runner.finished.connect(answers.append)
        runner.failed.connect(answers.append)
    first.submit(long_query)
    second.submit(waiting_query)  # the query pool runs one at a time: this one waits behind the first
    qtbot.wait(200)
    assert first.busy and second.busy
    assert stop_queries() == 2
    assert wait_for_workers(10_000), "the long query did not stop"
    qtbot.wait(200)
    assert ran == [] and answers == []
    assert not first.busy and not second.busy


def test_a_long_job_stops_inside_the_engine_s_own_loops(qtbot):
    """Stop reaches the engine's steps, not only the job's own loop: scoring a checkpoint on the cloze set (one
    fill-mask per item) ends at the next item once the job is cancelled, instead of scoring all of them (the
    chaos bench found a Run-history scoring still running after six rounds of Stop-all)."""
    from engine.api import Capability
    from engine.inspection.quality import cloze_items, cloze_scores

    asked: list[str] = []

    class SlowMaskedLM:  # stands for a checkpoint: each fill-mask takes a while, and it never looks at Stop
        capabilities = {Capability.FILL_BLANK}

        def fill_mask(self, text, k=10):
            asked.append(text)
            time.sleep(0.05)
            from types import SimpleNamespace

            return [SimpleNamespace(tokens=("a",) * k)]

    owner = QObject()
    job = BackgroundJob(lambda progress, stop: cloze_scores(SlowMaskedLM()), owner)
    failed: list[str] = []
    job.failed.connect(failed.append)
    qtbot.wait(300)
    with qtbot.waitSignal(job.failed, timeout=10_000):
        job.cancel()
    assert failed and "cancel" in failed[0].lower()
    assert 0 < len(asked) < len(cloze_items()) / 2, "the job ran on after Stop"
    assert wait_for_workers(10_000)


def test_a_finished_training_job_is_let_go_and_a_running_one_when_it_ends(qtbot):
    """Each run started kept its job and QProcess as the panel's children for the life of the window (+204 of
    each in the chaos bench). A job the panel is done with goes: at once when its process has ended, else when it
    ends (a stopped run may still be saving its state)."""
    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent, QObject, Signal

    from explorer.training_process import retire

    class Job(QObject):
        finished = Signal(str)
        failed = Signal(str)

        def __init__(self, running: bool) -> None:
            super().__init__()
            self.running = running

    def flush() -> None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)

    done, saving = Job(False), Job(True)
    retire(done)
    retire(saving)
    retire(None)
    flush()
    assert not shiboken6.isValid(done)
    assert shiboken6.isValid(saving)  # still saving: left alone
    saving.running = False
    saving.finished.emit("stopped")
    flush()
    assert not shiboken6.isValid(saving)


def test_a_job_that_ended_is_deleted_and_its_owner_keeps_no_child(qtbot):
    """Ended jobs are let go: each used to stay its panel's child for the life of the window."""
    import shiboken6

    owner = QObject()
    done = BackgroundJob(lambda progress, stop: "answer", owner)
    failed = BackgroundJob(lambda progress, stop: 1 / 0, owner)
    results: list[object] = []
    done.finished.connect(results.append)
    failed.failed.connect(results.append)
    qtbot.waitUntil(lambda: len(results) == 2, timeout=15_000)
    assert "answer" in results  # its receivers ran first
    qtbot.waitUntil(lambda: not owner.findChildren(BackgroundJob), timeout=5_000)
    assert not shiboken6.isValid(done) and not shiboken6.isValid(failed)
    assert not done.running and not failed.running  # what an owner keeping the object still asks answers
    done.cancel()


def test_a_model_load_leaves_no_runner_behind(qtbot, tmp_path):
    from explorer.session import Session
    from explorer.tasks import TaskRunner

    session = Session()
    session.load(str(tmp_path / "no-such-model"))  # a failed load, as a finished one: its runner goes
    qtbot.waitUntil(lambda: not session.loading, timeout=30_000)
    qtbot.waitUntil(lambda: not session.findChildren(TaskRunner), timeout=5_000)
