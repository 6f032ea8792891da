"""A failure travels from a worker as the exception itself, to one place that says it (explorer.failures):
the engine's refusals in its own words, anything else in Python's words with its traceback in the log."""

import logging

from engine.api import InputError
from explorer.failures import Outcome, attempt, explain
from explorer.tasks import BackgroundJob, TaskRunner


def test_a_query_that_the_engine_refuses_arrives_as_its_exception_and_its_words(qtbot, caplog):
    runner = TaskRunner()
    errors, messages = [], []
    runner.error.connect(errors.append)
    runner.failed.connect(messages.append)

    def refused():
        raise InputError("“zzz” is not in the vocabulary")

    with caplog.at_level(logging.ERROR), qtbot.waitSignal(runner.failed, timeout=10_000):
        runner.submit(refused)
    assert len(errors) == 1 and isinstance(errors[0], InputError)
    assert messages == ["“zzz” is not in the vocabulary"]
    assert not caplog.records  # a refusal is not a bug: nothing in the log


def test_a_bug_in_a_long_job_is_said_and_its_traceback_logged(qtbot, caplog):
    def broken(progress, stop):
        progress(0.5, "half way")
        return {}["missing"]

    with caplog.at_level(logging.ERROR):
        job = BackgroundJob(broken)
        errors = []
        job.error.connect(errors.append)
        with qtbot.waitSignal(job.failed, timeout=10_000) as blocker:
            pass
    assert blocker.args == ["'missing'"] and isinstance(errors[0], KeyError) and not job.running
    assert any("Traceback" in r.getMessage() and "broken" in r.getMessage() for r in caplog.records)


def test_one_part_that_fails_leaves_the_others_and_says_why():
    good, bad = attempt(lambda: [1, 2]), attempt(lambda: (_ for _ in ()).throw(InputError("no [MASK] in the text")))
    assert not good.failed and good.value == [1, 2] and good.message == ""
    assert bad.failed and bad.value is None and bad.message == "no [MASK] in the text"
    assert explain(ValueError()) == "ValueError" and Outcome().message == ""


def test_a_refusal_kept_in_an_answer_does_not_keep_the_model_that_refused():
    """An answer keeps a refused part's exception to say why; its traceback must not come with it, or the frames
    it passed through keep the model alive after it is unloaded (the chaos bench found two MiniLMs held so)."""
    import gc
    import weakref

    from engine.api import InputError
    from explorer.failures import attempt

    class Model:  # stands for a loaded model: its method refuses, as a handle's query does
        def lens_grid(self):
            weights = self  # noqa: F841 - a frame's local holds the model, as a handle's method does
            raise InputError("this model has no lens")

    model = Model()
    held = weakref.ref(model)
    outcome = attempt(model.lens_grid)
    del model
    gc.collect()
    assert outcome.failed and "no lens" in outcome.message
    assert held() is None, "the refusal's traceback still holds the model"
