"""The run scrubber: a tiny BERT run's kept checkpoints on a slider over its loss curve; moving it changes
the model every panel uses; senses emerging scored per checkpoint; a Trainer-style folder opens too."""

from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.conftest import settle_layout, tiny_spec


@pytest.fixture(scope="module")
def bert_run(topic_corpus, tmp_path_factory):
    from engine import api

    run_dir = tmp_path_factory.mktemp("history") / "bert-run"
    spec = replace(tiny_spec("bert", topic_corpus, run_dir, max_steps=6, keep_every=2, eval_every=3), log_every=1)
    assert list(api.train(spec))[-1].status == "completed"
    return run_dir


@pytest.fixture
def window(qtbot):
    from explorer.main_window import MainWindow
    from explorer.session import Session

    win = MainWindow(Session())
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    yield win
    win.history.cancel_scores()
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)


def test_the_scrubber_walks_a_run_and_every_panel_follows(qtbot, window, bert_run):
    panel = window.history
    window.tabs.setCurrentWidget(panel)
    panel.open_run(str(bert_run))
    alias = "bert-run (scrubber)"
    qtbot.waitUntil(lambda: alias in window.session.models, timeout=60_000)
    assert [k.step for k in panel.history] == [2, 4, 6] and panel.slider.maximum() == 2
    assert panel.marker.value() == 6 and len(panel.loss.points("loss")[0]) > 0  # the loss curve, marked
    held_out = panel.loss.points("held-out mlm loss")
    assert list(held_out[0]) == [3, 6] and all(v > 0 for v in held_out[1])  # the run's evaluations beside it
    scores = window.history.emerging.plot  # and their accuracies where the checkpoints' scores go, before any scoring
    for name in ("held-out mlm accuracy", "held-out nsp accuracy"):
        xs, ys = scores.points(name)
        assert list(xs) == [3, 6] and all(0 <= v <= 1 for v in ys), name
    assert not scores.empty.isVisible() and "held-out mlm accuracy" not in panel.loss.buffers
    last = window.session.models[alias]
    masked = window.predictions.masked
    masked.text.setText("the [MASK] sat on the mat .")
    masked.model.setCurrentText(alias)
    qtbot.waitUntil(lambda: masked.last is not None and masked.last.per_model[0][0] == alias, timeout=30_000)
    before = masked.last.per_model[0][1].value[0].probs
    with qtbot.waitSignal(window.predictions.shown, timeout=30_000):  # the view re-runs with the new step
        panel.slider.setValue(0)
    first = window.session.models[alias]
    assert first is not last and first.path.endswith("step-0000002") and panel.marker.value() == 2
    assert first.name == alias and masked.last.per_model[0][0] == alias  # the panels say the scrubber's name
    assert masked.model.currentText() == alias  # the user's choice kept
    assert not np.allclose(masked.last.per_model[0][1].value[0].probs, before)  # step 2 predicts otherwise than step 6
    panel.select_step(5)  # a click on the curve: the nearest kept checkpoint
    assert panel.current().step in (4, 6)
    panel.slider.setValue(0)
    qtbot.waitUntil(lambda: window.session.models[alias].path == first.path, timeout=30_000)  # from memory
    panel.pin_current()
    pinned = window.session.models["bert-run @ step 2"]  # compare with step 2, one click
    assert pinned.path == first.path and pinned.name == "bert-run @ step 2"
    panel.score_checkpoints()
    qtbot.waitUntil(lambda: not panel.emerging.job.running, timeout=120_000)
    xs, ys = panel.quality.points("senses (best layer)")
    assert list(xs) == [2, 4, 6] and all(0 <= y <= 1 for y in ys)
    from explorer.panels.senses_emerging import SETTLED_FIRST, SETTLED_TOP

    for name in (SETTLED_FIRST, SETTLED_TOP):  # each checkpoint's layers against the last one's
        xs, ys = panel.quality.points(name)
        assert list(xs) == [2, 4, 6] and ys[-1] == pytest.approx(1.0, abs=1e-3) and ys[0] < 0.9999
    assert panel.emerging.progress.format().startswith("scored 3 checkpoints")
    from engine.inspection.history_scores import scores_file

    assert scores_file(bert_run).is_file() and not (bert_run / "checkpoint_scores.json").exists()  # never in the run
    # read without over-reading: guessing's score drawn (0.47, not 0.5), the last layer visible on the best one
    assert panel.emerging.chance_line is not None and abs(panel.emerging.chance_line.value() - 7 / 15) < 1e-9
    assert panel.quality.curves["senses (last layer)"].opts["pen"].style() == Qt.PenStyle.DashLine
    from PySide6.QtWidgets import QApplication

    from explorer.theme import apply_theme
    from explorer.widgets.readable import MARKS, TEXT, contrast

    def readable_on(plot):  # the chance line's note, the score curves and the step's marker, on the plot's background
        background = plot.backgroundBrush().color()
        return (contrast(panel.emerging.chance_line.label.color, background) >= TEXT
                and min(contrast(c.opts["pen"].color(), background) for c in plot.curves.values()) >= MARKS
                and contrast(panel.quality_marker.pen.color(), background) >= MARKS)

    def ticks_readable():  # the checkpoints' ticks on the loss plot
        background = panel.loss.backgroundBrush().color()
        return len(panel.checkpoint_ticks.points()) == 3 and all(
            contrast(p.brush().color(), background) >= MARKS for p in panel.checkpoint_ticks.points())

    assert readable_on(panel.quality) and ticks_readable()  # (the last layer's pale green was 1.6:1 on white,
    try:  # the marker's orange 2.5:1)
        apply_theme(QApplication.instance(), "dark")
        assert readable_on(panel.quality) and ticks_readable()  # (the note's fixed grey was 2.3:1 on the dark theme's)
    finally:
        apply_theme(QApplication.instance(), "light")
    settle_layout()
    from tests.explorer.panels.test_attention_predictions import shot

    shot(qtbot, window, "run-history-scrubber")


def test_checkpoints_kept_for_scrubbing_are_let_go_when_the_slider_rests(qtbot, window, bert_run):
    """While the slider moves, the last checkpoints stay loaded (moving back is instant); once it rests, all
    but the one shown are let go, and their memory with them."""
    import gc
    import weakref

    panel = window.history
    panel.open_run(str(bert_run))
    alias = "bert-run (scrubber)"
    qtbot.waitUntil(lambda: alias in window.session.models, timeout=60_000)
    for index in (0, 1):
        panel.slider.setValue(index)
        qtbot.waitUntil(lambda index=index: window.session.models[alias].path == panel.history[index].path,
                        timeout=30_000)
    assert len(panel.loaded) == 3  # steps 6, 2 and 4, for moving back
    others = [weakref.ref(h) for path, h in panel.loaded.items() if path != panel.history[1].path]
    from explorer.panels.history import SCRUB_REST_MS

    # what a bench's quiet moment waits for (a coarse Qt timer may fire up to 5% late)
    assert 0 < panel.rest_left_ms() <= SCRUB_REST_MS * 1.05 + 50
    panel._rest.setInterval(50)  # the rest, shortened (a running timer starts again with it)
    qtbot.waitUntil(lambda: len(panel.loaded) == 1, timeout=5_000)
    assert panel.rest_left_ms() == 0
    assert list(panel.loaded) == [panel.history[1].path]
    assert window.session.models[alias].path == panel.history[1].path  # the one shown still answers
    gc.collect()
    assert all(ref() is None for ref in others)


def test_unloading_the_scrubbers_model_lets_go_of_its_checkpoints(qtbot, window, bert_run):
    import gc
    import weakref

    panel = window.history
    panel.open_run(str(bert_run))
    alias = "bert-run (scrubber)"
    qtbot.waitUntil(lambda: alias in window.session.models, timeout=60_000)
    kept = [weakref.ref(h) for h in panel.loaded.values()]
    assert kept
    window.session.unload(alias)  # the library's Unload
    assert not panel.loaded
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)  # (a query asked of it just before, still running, holds it until it ends)
    settle_layout()
    gc.collect()
    assert all(ref() is None for ref in kept)  # the panel holds none of the run's checkpoints
    panel.slider.setValue(0)  # and moving the slider loads again
    qtbot.waitUntil(lambda: alias in window.session.models, timeout=30_000)


def test_a_trainer_style_folder_opens_as_a_run(qtbot, window, contextual_runs, tmp_path):
    from engine.cli.export import export_hf

    root = tmp_path / "trainer-run"
    root.mkdir()
    for step in (500, 1000):
        export_hf(contextual_runs["bert"][0], root / f"checkpoint-{step}")
    panel = window.history
    panel.open_run(str(root))
    qtbot.waitUntil(lambda: "trainer-run (scrubber)" in window.session.models, timeout=60_000)
    assert [k.step for k in panel.history] == [500, 1000]
    assert "no loss curve" in panel.title.text()
    assert not panel.checkpoint_ticks.data.size  # no checkpoint drawn at a made-up loss of 0
    assert "checkpoint-1000" in window.session.models["trainer-run (scrubber)"].path
    # with the Trainer's own log: its loss curve, its evaluations and the checkpoints on the curve
    import json

    log = [{"loss": 3.2, "step": 500}, {"eval_loss": 3.0, "eval_accuracy": 0.61, "eval_runtime": 2.5, "step": 500},
           {"loss": 2.5, "step": 1000}]
    (root / "checkpoint-1000" / "trainer_state.json").write_text(json.dumps({"log_history": log}), encoding="utf-8")
    panel.open_run(str(root))
    qtbot.waitUntil(lambda: "no loss curve" not in panel.title.text() and "reading" not in panel.title.text(),
                    timeout=60_000)
    xs, ys = panel.loss.points("loss")
    assert list(xs) == [500, 1000] and list(ys) == [3.2, 2.5]
    assert list(panel.loss.points("held-out eval loss")[1]) == [3.0]
    assert list(panel.emerging.plot.points("held-out eval accuracy")[1]) == [0.61]  # a score, not on the loss plot
    assert set(panel.emerging.plot.buffers) == {"held-out eval accuracy"}  # (its runtime is neither)
    assert sorted(panel.checkpoint_ticks.getData()[1]) == [2.5, 3.2]
    # a checkpoint between two logged losses sits on the line joining them; one after the last logged loss is not
    # put on the curve at a loss it never had (it was drawn at the nearest logged one, as if the curve ran flat)
    log = [{"loss": 3.0, "step": 250}, {"loss": 2.0, "step": 750}]
    (root / "checkpoint-1000" / "trainer_state.json").write_text(json.dumps({"log_history": log}), encoding="utf-8")
    panel.open_run(str(root))
    qtbot.waitUntil(lambda: "no loss curve" not in panel.title.text() and "reading" not in panel.title.text(),
                    timeout=60_000)
    xs, ys = panel.checkpoint_ticks.getData()
    assert list(xs) == [500] and list(ys) == [2.5]
    assert "1 outside the steps 250–750 whose training loss was logged" in panel.title.text()


def test_a_trainer_run_still_training_is_followed(qtbot, window, contextual_runs, tmp_path):
    """A Hugging Face Trainer's run opened while it trains: each checkpoint it saves joins the slider once its
    trainer_state.json is written (the Trainer writes it after the weights), and once the run has reached its
    max_steps it is no longer looked at."""
    import json

    from engine.cli.export import export_hf

    panel = window.history
    panel.follower.timer.setInterval(50)
    root = tmp_path / "trainer-live"
    log: list[dict] = []

    def saved(step: int, state: bool = True) -> None:
        export_hf(contextual_runs["bert"][0], root / f"checkpoint-{step}")
        log.append({"loss": 4.0 - step / 1000, "step": step})
        if state:
            (root / f"checkpoint-{step}" / "trainer_state.json").write_text(json.dumps(
                {"global_step": step, "max_steps": 1500, "log_history": log}), encoding="utf-8")

    saved(500)
    panel.open_run(str(root))
    qtbot.waitUntil(lambda: "trainer-live (scrubber)" in window.session.models, timeout=60_000)
    assert [k.step for k in panel.history] == [500] and "still training" in panel.title.text()
    assert panel.follower.following(str(root))
    saved(1000, state=False)  # its weights written, its state not yet: not read half-saved
    qtbot.wait(300)
    assert [k.step for k in panel.history] == [500]
    (root / "checkpoint-1000" / "trainer_state.json").write_text(json.dumps(
        {"global_step": 1000, "max_steps": 1500, "log_history": log}), encoding="utf-8")
    qtbot.waitUntil(lambda: [k.step for k in panel.history] == [500, 1000], timeout=10_000)
    assert list(panel.loss.points("loss")[0]) == [500, 1000]
    saved(1500)
    qtbot.waitUntil(lambda: not panel.follower.following(), timeout=10_000)
    assert [k.step for k in panel.history] == [500, 1000, 1500] and "still training" not in panel.title.text()


def test_a_folder_without_checkpoints_says_why(qtbot, window, tmp_path):
    panel = window.history
    panel.open_run(str(tmp_path))
    qtbot.waitUntil(lambda: "holds no checkpoints" in panel.title.text(), timeout=10_000)
    assert not panel.slider.isEnabled() and not panel.emerging.score.isEnabled()


def test_a_scene_opens_a_run_in_the_run_history_at_a_step_and_a_bad_one_says_why(qtbot, window, bert_run, tmp_path):
    import json
    import subprocess
    import sys

    from explorer.scenes import SceneError, check_scene, load_scene

    path = tmp_path / "history.json"
    path.write_text(json.dumps({"panel": "history", "run": str(bert_run), "step": 3, "title": "halfway"}))
    panel = window.history
    with qtbot.waitSignal(panel.shown, timeout=60_000):
        window.open_scene(str(path))
    assert window.tabs.currentWidget() is panel
    assert panel.current().step == 2  # the kept checkpoint nearest step 3 (2 and 4 are as near: the first)
    assert "bert-run (scrubber)" in window.session.models and panel.marker.value() == 2
    scene = panel.current_scene()
    assert (scene.panel, scene.run, scene.step) == ("history", str(bert_run), 2)
    assert check_scene(scene.to_json(), "again").step == 2  # it saves and reads back
    for bad, why in (({"panel": "history"}, "needs 'run'"), ({"panel": "history", "run": "x", "step": "2"},
                                                               "'step' must be a whole number")):
        with pytest.raises(SceneError, match=why):
            check_scene(bad, "x.json")
    (tmp_path / "gone.json").write_text(json.dumps({"panel": "history", "run": str(tmp_path / "no-run")}))
    assert load_scene(str(tmp_path / "gone.json")).run  # read; the app's check names the missing folder:
    done = subprocess.run([sys.executable, "-m", "explorer", "--no-default-models", "--scene", str(tmp_path / "gone.json"),
                           "--screenshot", str(tmp_path / "x.png")], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode != 0 and "is not a folder here" in done.stderr and not (tmp_path / "x.png").exists()


def test_a_continued_run_begins_at_the_run_it_went_on_from(qtbot, window, bert_run, topic_corpus, tmp_path):
    """Step 0 of a run that went on from another is that run as it was: on the slider, named, and said apart in
    the title (not counted among the checkpoints off the loss curve)."""
    from engine import api

    out = tmp_path / "bert-on"
    spec = replace(tiny_spec("bert", topic_corpus, out, max_steps=4, keep_every=2, eval_every=2,
                             init_from=str(bert_run)), log_every=1)
    assert list(api.train(spec))[-1].status == "completed"
    panel = window.history
    panel.open_run(str(out))
    qtbot.waitUntil(lambda: "bert-on (scrubber)" in window.session.models, timeout=60_000)
    assert [k.step for k in panel.history] == [0, 2, 4]
    assert f"(step 0: {bert_run}, the run it went on from)" in panel.title.text()
    assert "outside the steps" not in panel.title.text()
    with qtbot.waitSignal(window.session.modelsChanged, timeout=30_000):
        panel.slider.setValue(0)
    assert panel.step_label.text() == f"step 0: {bert_run}"
    qtbot.waitUntil(lambda: f"is step 0 — {bert_run}, as this run went on from it" in panel.message.text(),
                    timeout=30_000)
    assert panel.loss.getPlotItem().viewRange()[0][0] <= 0  # in sight on the plot, with no loss logged there
    assert window.session.models["bert-on (scrubber)"].path == str(bert_run.resolve())


def test_a_run_before_its_first_save_shows_its_loss_so_far(qtbot, window, bert_run, topic_corpus, tmp_path):
    """A run still training and not yet saved (only its metrics.jsonl so far) shows its training loss and says
    it has no checkpoint yet; a continued one scrubs to the run it went on from (its step 0) meanwhile."""
    import shutil

    from engine import api

    panel = window.history
    young = tmp_path / "young"
    young.mkdir()
    shutil.copy(bert_run / "metrics.jsonl", young / "metrics.jsonl")
    panel.open_run(str(young))
    qtbot.waitUntil(lambda: "no checkpoint kept yet" in panel.title.text(), timeout=10_000)
    assert "its training loss to step 6" in panel.title.text()
    assert len(panel.loss.points("loss")[0]) == 6 and not panel.slider.isEnabled() and not panel.emerging.score.isEnabled()
    out = tmp_path / "bert-on"
    spec = replace(tiny_spec("bert", topic_corpus, out, max_steps=2, eval_every=2, init_from=str(bert_run)),
                   log_every=1)
    assert list(api.train(spec))[-1].status == "completed"
    for name in ("config.json", "model.safetensors", "checkpoints"):  # as it was before it saved
        shutil.rmtree(out / name) if (out / name).is_dir() else (out / name).unlink(missing_ok=True)
    panel.open_run(str(out))
    qtbot.waitUntil(lambda: "bert-on (scrubber)" in window.session.models, timeout=60_000)
    assert [k.step for k in panel.history] == [0] and panel.slider.isEnabled()
    assert "no checkpoint of its own yet (its training loss to step 2)" in panel.title.text()
    assert f"(step 0: {bert_run}, the run it went on from)" in panel.title.text()
    assert window.session.models["bert-on (scrubber)"].path == str(bert_run.resolve())


def test_a_run_still_training_is_followed(qtbot, window, bert_run, tmp_path):
    """Opened while it trains, a run's curve and checkpoints grow as it goes on; a kept checkpoint the user is
    looking at stays shown; the run's own folder, shown, moves on to the step it saved last (its weights read
    again); once the run has finished it is no longer looked at."""
    import json
    import shutil

    panel = window.history
    panel.follower.timer.setInterval(50)
    lines = (bert_run / "metrics.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    upto = lambda step: [line for line, e in zip(lines, events)  # noqa: E731
                         if e["event"] != "finished" and e.get("step", 0) <= step]
    saved = lambda step: [shutil.copy(f, live / f.name)  # noqa: E731  (the run's folder saves that step)
                          for f in (bert_run / "checkpoints" / f"step-{step:07d}").iterdir() if f.is_file()]
    live = tmp_path / "live"
    (live / "checkpoints").mkdir(parents=True)
    (live / "metrics.jsonl").write_text("\n".join(upto(3)) + "\n")
    shutil.copytree(bert_run / "checkpoints" / "step-0000002", live / "checkpoints" / "step-0000002")
    panel.open_run(str(live))
    qtbot.waitUntil(lambda: "live (scrubber)" in window.session.models, timeout=60_000)
    assert [k.step for k in panel.history] == [2] and "still training" in panel.title.text()
    assert panel.follower.following(str(live)) and list(panel.loss.points("loss")[0]) == [1, 2, 3]
    saved(4)
    (live / "metrics.jsonl").write_text("\n".join(upto(5)) + "\n")
    qtbot.waitUntil(lambda: len(panel.history) == 2, timeout=10_000)
    assert [(k.step, k.path) for k in panel.history][-1] == (4, str(live))
    assert list(panel.loss.points("loss")[0]) == [1, 2, 3, 4, 5] and panel.slider.maximum() == 1
    assert list(panel.emerging.plot.points("held-out mlm accuracy")[0]) == [3]  # (the run evaluates every 3 steps)
    assert panel.slider.value() == 0 and panel.current().step == 2  # what the user looks at stays
    assert window.session.models["live (scrubber)"].path.endswith("step-0000002")
    with qtbot.waitSignal(window.session.modelsChanged, timeout=30_000):
        panel.slider.setValue(1)  # the user looks at the latest: the run's folder
    at_four = window.session.models["live (scrubber)"]
    saved(6)
    (live / "metrics.jsonl").write_text("\n".join(lines) + "\n")  # and it finished
    qtbot.waitUntil(lambda: not panel.follower.following(), timeout=10_000)
    qtbot.waitUntil(lambda: window.session.models["live (scrubber)"] is not at_four, timeout=30_000)
    assert [k.step for k in panel.history] == [2, 6] and panel.current().step == 6 and panel.marker.value() == 6
    assert "still training" not in panel.title.text() and len(panel.loss.points("loss")[0]) == 6
    assert list(panel.emerging.plot.points("held-out mlm accuracy")[0]) == [3, 6]  # its evaluation since, added once


def test_an_elmo_run_that_logs_perplexity_shows_its_held_out_loss_on_the_training_loss_scale(contextual_runs):
    """ELMo runs made before 2026-12-06 logged perplexities and no loss: the Run history drew no held-out curve for
    them. Their held-out loss is the log of the perplexity (nats a word, both directions' mean, as the training
    loss), which is what ELMo now logs as its loss; a run that logs a loss keeps it."""
    import math

    from engine import api
    from explorer.panels.run_reading import _held_out_losses, read_run

    elmo, events = contextual_runs["elmo"]
    evals = [e for e in events if isinstance(e, api.EvalMetrics)]
    read = read_run(str(elmo), (), cached_scores=False)
    assert [(step, key) for step, key, _ in read.held_out] == [(e.step, "loss") for e in evals]
    assert [value for *_, value in read.held_out] == pytest.approx([math.log(e.metrics["perplexity"]) for e in evals])
    older = [api.EvalMetrics(e.step, {k: v for k, v in e.metrics.items() if k != "loss"}) for e in evals]
    fallback = [held for e in older for held in _held_out_losses(e)]  # (no loss logged: read from the perplexity)
    assert [(step, key) for step, key, _ in fallback] == [(step, key) for step, key, _ in read.held_out]
    assert [value for *_, value in fallback] == pytest.approx([value for *_, value in read.held_out])
    gpt = read_run(str(contextual_runs["gpt"][0]), (), cached_scores=False)
    assert gpt.held_out and all(key == "loss" for _, key, _ in gpt.held_out)  # its own logged loss, no other
    gpt_evals = [e for e in contextual_runs["gpt"][1] if isinstance(e, api.EvalMetrics)]
    assert [value for *_, value in gpt.held_out] == [e.metrics["loss"] for e in gpt_evals]
