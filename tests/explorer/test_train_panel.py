"""The pretraining launcher runs a real (tiny) training off the GUI thread and draws its loss live."""

from pathlib import Path

import pytest
from conftest import TINY

SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch, topic_corpus):
    monkeypatch.setenv("WORD2BERT_RUNS", str(tmp_path / "runs"))
    from explorer.main_window import MainWindow
    from explorer.session import Session

    win = MainWindow(Session())
    qtbot.addWidget(win)
    win.show()
    win.tabs.setCurrentWidget(win.train)
    panel = win.train
    panel.extra_settings = {k: dict(v) for k, v in TINY.items()}
    panel.corpus.setCurrentText(str(topic_corpus))
    yield win
    from PySide6.QtCore import QThreadPool

    assert QThreadPool.globalInstance().waitForDone(30_000)


def test_a_run_draws_its_loss_and_opens_in_the_explorer(qtbot, window):
    panel = window.train
    panel.kind.setCurrentText("gpt")
    panel.steps.setValue(40)
    panel.start.click()
    assert not panel.start.isEnabled() and panel.stop.isEnabled()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000) as done:
        pass
    assert done.args == ["completed"]
    steps, losses = panel.loss_plot.points(panel.run_name)
    assert len(steps) == 4 and losses[-1] < losses[0]
    assert any(name.endswith("perplexity") for name in panel.eval_plot.curves)
    qtbot.wait(250)  # the plot redraws from its 10 Hz timer
    assert len(panel.loss_plot.curves[panel.run_name].getData()[0]) == 4
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "pretrain-gpt-tiny.png"))
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):
        panel.open_run.click()
    assert panel.run_name in window.session.models


def test_stop_saves_a_resumable_run_and_a_bad_corpus_is_reported(qtbot, window):
    panel = window.train
    panel.kind.setCurrentText("bert")
    panel.steps.setValue(100_000)
    panel.start.click()
    with qtbot.waitSignal(panel.job.event, timeout=120_000, check_params_cb=lambda ev: type(ev).__name__ == "StepMetrics"):
        pass
    panel.stop.click()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000) as done:
        pass
    assert done.args == ["stopped"] and "resume" in panel.status.text()
    panel.corpus.setCurrentText("/no/such/corpus.txt")
    panel.start.click()
    with qtbot.waitSignal(panel.job.failed, timeout=60_000):
        pass
    assert "no corpus named" in panel.status.text() and panel.start.isEnabled()


def test_stopped_run_resumes_and_a_finished_run_replots(qtbot, window, contextual_runs):
    panel = window.train
    panel.show_run_curves(str(contextual_runs["gpt"][0]))
    steps, losses = panel.loss_plot.points("gpt")
    assert len(steps) == 4 and len(panel.loss_plot.points("gpt smoothed")[0]) == 4
    panel.kind.setCurrentText("gpt")
    panel.steps.setValue(60)
    panel.start.click()
    with qtbot.waitSignal(panel.job.event, timeout=120_000, check_params_cb=lambda ev: type(ev).__name__ == "StepMetrics"):
        pass
    panel.stop.click()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000):
        pass
    assert panel.resume.isEnabled()
    first_steps = len(panel.loss_plot.points(panel.run_name)[0])
    panel.resume.click()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000) as done:
        pass
    assert done.args == ["completed"]
    steps, _ = panel.loss_plot.points(panel.run_name)
    assert len(steps) > first_steps and steps[-1] == 60
