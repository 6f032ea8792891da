"""The pretraining launcher runs a real (tiny) training off the GUI thread and draws its loss live."""

from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPalette

from tests.conftest import TINY, settle_layout

SHOTS = Path(__file__).resolve().parents[3] / "test-output" / "screenshots"


def choose(panel, kind):
    """Pick a model family and fill its generated settings form with the tests' tiny settings."""
    panel.kind.setCurrentText(kind)
    panel.settings.set_values(TINY[kind])
    assert not panel.settings.problems


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
    panel.corpus.setCurrentText(str(topic_corpus))
    yield win
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)


def test_a_run_draws_its_loss_and_opens_in_the_explorer(qtbot, window):
    panel = window.train
    choose(panel, "gpt")
    panel.steps.setValue(40)
    panel.start.click()
    assert not panel.start.isEnabled() and panel.stop.isEnabled()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000) as done:
        pass
    assert done.args == ["completed"]
    steps, losses = panel.loss_plot.points(panel.run_name)
    assert len(steps) == 4 and losses[-1] < losses[0]
    assert any(name.endswith("perplexity") for name in panel.eval_plot.styles)
    panel.loss_plot.redraw_now()  # (it redraws from its 10 Hz timer)
    assert len(panel.loss_plot.curves[panel.run_name].getData()[0]) == 4
    assert len(panel.speed_plot.points(panel.run_name)[0]) == 4  # throughput at every logged step
    assert "tokens/s" in panel.speed_plot.getPlotItem().getAxis("left").labelText
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "pretrain-gpt-tiny.png"))
    library = window.library

    def listed() -> bool:
        items = [library.available.child(i) for i in range(library.available.childCount())]
        return any(it.toolTip(0) == panel.run_dir and "gpt" in it.text(1) and "steps" in it.text(1) for it in items)

    qtbot.waitUntil(listed, timeout=10_000)  # the finished run is in the model library at once
    typed = "The river flows into the"  # a text of the user's in the Next token view, the Masked LM view on top
    window.predictions.next.set_sentences([typed])
    window.predictions.views.setCurrentIndex(0)
    window.tabs.setCurrentWidget(panel)
    with qtbot.waitSignal(window.session.loaded, timeout=60_000):
        panel.open_run.click()
    assert panel.run_name in window.session.models
    # shown where a GPT is seen best: the Next token view, the new run picked there, the user's text kept
    assert window.tabs.currentWidget() is window.predictions
    assert window.predictions.VIEWS[window.predictions.views.currentIndex()] == "next"
    assert window.predictions.next.model.currentText() == panel.run_name
    assert window.predictions.next.sentences() == [typed]
    assert panel.run_name in window.statusBar().currentMessage()


def bert_running(qtbot, window):
    """The Pretrain panel with a long BERT run started, once it has logged its first step."""
    panel = window.train
    choose(panel, "bert")
    panel.steps.setValue(100_000)
    panel.start.click()
    with qtbot.waitSignal(panel.job.run_event, timeout=120_000, check_params_cb=lambda ev: type(ev).__name__ == "StepMetrics"):
        pass
    return panel


def test_stop_saves_a_resumable_run_and_a_bad_corpus_is_reported(qtbot, window):
    panel = bert_running(qtbot, window)
    panel.stop.click()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000) as done:
        pass
    assert done.args == ["stopped"] and "Resume goes on from here" in panel.status.text()
    assert panel.status.text().count("stopped") == 1 and "--resume" not in panel.status.text()  # said once, as a button
    panel.corpus.setCurrentText("/no/such/corpus.txt")
    panel.start.click()
    with qtbot.waitSignal(panel.job.failed, timeout=60_000):
        pass
    assert "no corpus named" in panel.status.text() and panel.start.isEnabled()


def test_stopped_run_resumes_and_a_finished_run_replots(qtbot, window, contextual_runs):
    panel = window.train
    panel.show_run_curves(str(contextual_runs["gpt"][0]))
    qtbot.waitUntil(lambda: "re-plotted" in panel.status.text(), timeout=10_000)  # (read in a worker)
    steps, losses = panel.loss_plot.points("gpt")
    assert len(steps) == 4 and len(panel.loss_plot.points("gpt smoothed")[0]) == 4
    choose(panel, "gpt")
    panel.steps.setValue(60)
    panel.start.click()
    with qtbot.waitSignal(panel.job.run_event, timeout=120_000, check_params_cb=lambda ev: type(ev).__name__ == "StepMetrics"):
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


def test_a_run_still_training_is_followed_and_shown_again_not_twice(qtbot, window, contextual_runs, tmp_path):
    """A run trained elsewhere (``word2bert-train … &``) is read off the window's thread; while it has not finished
    its curves grow as its metrics.jsonl does, and stop being looked at once it has; showing a run again draws it
    afresh, not twice; a run that finishes while followed joins the model library."""
    import json
    import shutil

    panel = window.train
    panel.follower.timer.setInterval(50)
    lines = (contextual_runs["gpt"][0] / "metrics.jsonl").read_text().splitlines()
    steps = [i for i, line in enumerate(lines) if json.loads(line)["event"] == "step"]
    live = tmp_path / "elsewhere" / "gpt-live"
    shutil.copytree(contextual_runs["gpt"][0], live)
    (live / "metrics.jsonl").write_text("\n".join(lines[: steps[1] + 1]) + "\n")
    drawn = lambda: len(panel.loss_plot.points("gpt-live")[0]) if "gpt-live" in panel.loss_plot.buffers else 0  # noqa: E731
    panel.show_run_curves(str(live))
    qtbot.waitUntil(lambda: drawn() == 2, timeout=10_000)
    assert "still training" in panel.status.text() and panel.follower.following(str(live))
    with open(live / "metrics.jsonl", "a") as f:
        f.write("\n".join(lines[steps[1] + 1: steps[2] + 1]) + "\n" + lines[steps[2] + 1][:10])  # (a line half written)
    qtbot.waitUntil(lambda: drawn() == 3, timeout=10_000)
    (live / "metrics.jsonl").write_text("\n".join(lines) + "\n")  # and it finished
    qtbot.waitUntil(lambda: not panel.follower.following(), timeout=10_000)
    assert window.session.recent[0] == str(live) and "has finished" in panel.status.text()
    assert list(panel.loss_plot.points("gpt-live")[0]) == [
        json.loads(lines[i])["step"] for i in steps]  # each step once: the half-written line read when whole
    assert any(name.startswith("gpt-live ") for name in panel.eval_plot.styles)
    panel.show_run_curves(str(live))
    qtbot.waitUntil(lambda: "re-plotted" in panel.status.text() and "gpt-live" in panel.status.text(), timeout=10_000)
    assert len(panel.loss_plot.points("gpt-live")[0]) == len(steps) and not panel.follower.following()
    other = tmp_path / "other" / "gpt-live"  # another folder of the same name: drawn beside, not into it
    other.mkdir(parents=True)
    (other / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    panel.show_run_curves(str(other))
    qtbot.waitUntil(lambda: "other/gpt-live" in panel.monitor.events, timeout=10_000)
    panel.show_run_curves(str(tmp_path))  # a folder that is no run
    qtbot.waitUntil(lambda: "cannot read the run's metrics" in panel.status.text(), timeout=10_000)
    tuned = tmp_path / "topics-full"  # a fine-tuning run: drawn in the Fine-tune tab, not here
    tuned.mkdir()
    (tuned / "metrics.jsonl").write_text("\n".join(lines).replace('"kind": "gpt"', '"kind": "finetune"') + "\n")
    listed = panel.runs.count()
    panel.show_run_curves(str(tuned))
    qtbot.waitUntil(lambda: "topics-full is a fine-tuning run" in panel.status.text(), timeout=10_000)
    assert panel.runs.count() == listed


def count_events(widget, kind):
    """How many events of ``kind`` ``widget`` gets from now (call the returned function to read it)."""
    from PySide6.QtCore import QObject

    class Counter(QObject):
        n = 0

        def eventFilter(self, watched, event):  # noqa: N802 - Qt's name
            if event.type() == kind:
                self.n += 1
            return False

    counter = Counter(widget)
    widget.installEventFilter(counter)
    return lambda: counter.n


def test_settings_form_has_every_setting_and_refuses_bad_ones(qtbot, window):
    from engine import api

    panel = window.train
    for kind in api.model_kinds():
        panel.kind.setCurrentText(kind)
        names = {s.name for s in api.model_settings(kind)} - {"preset"}
        assert set(panel.settings.editors) == names and not panel.settings.problems
    panel.kind.setCurrentText("bert")
    panel.preset.setCurrentText("base")
    assert panel.settings.editors["layers"].value() == 12 and panel.settings.editors["hidden"].value() == 768
    panel.settings.editors["heads"].setValue(5)
    assert not panel.start.isEnabled()
    assert "hidden (768) must be a multiple of heads (5)" in panel.settings.problem_label.text()
    assert panel.settings.marked("heads") and panel.settings.marked("hidden") and not panel.settings.marked("layers")
    hidden = panel.settings.editors["hidden"]
    hidden.ensurePolished()  # (as on screen: an unpolished one restyles cheaply)
    restyled = count_events(hidden, QEvent.Type.StyleChange)
    recoloured = count_events(hidden, QEvent.Type.PaletteChange)
    panel.settings.editors["layers"].setValue(6)  # another field typed in: the marked ones stay as they are
    panel.settings.editors["layers"].setValue(8)
    assert restyled() == 0 and recoloured() == 0 and panel.settings.marked("hidden")  # (restyling one took 0.4 s)
    assert hidden.palette().color(QPalette.ColorRole.Base) != panel.settings.editors["layers"].palette().color(
        QPalette.ColorRole.Base)  # on a background of its own
    panel.settings.editors["heads"].setValue(12)
    panel.settings.editors["lr"].setText("fast")
    assert panel.settings.problems == ["lr must be a number, not 'fast'"] and not panel.start.isEnabled()
    panel.settings.editors["lr"].setText("3e-4")
    assert panel.start.isEnabled() and panel.settings.values()["lr"] == 3e-4
    panel.kind.setCurrentText("word2vec")
    assert panel.settings.editors["sg"].itemText(1) == "1: skip-gram"
    panel.settings.editors["max_vocab"].setText("50000")
    assert panel.settings.values()["max_vocab"] == 50000
    panel.settings.editors["max_vocab"].setText("")
    assert panel.settings.values()["max_vocab"] is None and panel.start.isEnabled()
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.settings.editors["negative"].setValue(0)  # with negative sampling: a problem to show
    settle_layout()  # the rebuilt form is laid out by the event loop
    window.grab().save(str(SHOTS / "pretrain-settings-word2vec.png"))


def test_a_file_setting_is_chosen_with_a_file_dialog(qtbot, window, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QFileDialog

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("bank\tN\t0-0\tbank .\tbank .\tT\n", encoding="utf-8")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(pairs), "")))
    panel = window.train
    panel.kind.setCurrentText("mlm-head")
    editor = panel.settings.editors["sense_pairs"]
    assert editor.text() == "" and len(editor.actions()) == 1
    editor.actions()[0].trigger()
    assert panel.settings.values()["sense_pairs"] == str(pairs)
    assert panel.settings.values()["sense_batch"] == 16 and not panel.settings.problems
    panel.settings.editors["sense_batch"].setValue(64)  # more pairs a step than windows: named under the form
    assert "sense_batch (64) cannot exceed batch_size (32)" in panel.settings.problem_label.text()
    # a run to go on from is a folder: the folder dialog, not the file one
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(tmp_path)))
    panel.kind.setCurrentText("bert")
    editor = panel.settings.editors["init_from"]
    assert "run folder" in editor.placeholderText() and len(editor.actions()) == 1
    editor.actions()[0].trigger()
    assert panel.settings.values()["init_from"] == str(tmp_path)


def test_closing_the_window_stops_a_run_with_a_save(qtbot, window):
    """Closing the app is a Stop: the training process saves a resumable checkpoint before the app ends."""
    from engine import api

    panel = bert_running(qtbot, window)
    job = panel.job
    assert window.running_jobs() == [job]
    window.close()
    assert not job.running and job.status == "stopped"
    assert window.running_jobs() == []
    events = api.read_metrics(panel.run_dir)
    assert isinstance(events[-1], api.RunFinished) and events[-1].status == "stopped"
    assert api.load(panel.run_dir).kind == "bert"  # the saved checkpoint loads


def test_stop_while_the_corpus_is_read_ends_the_run_at_once_with_nothing_to_resume(qtbot, window):
    import time

    panel = window.train
    choose(panel, "bert")
    panel.corpus.setCurrentText("default")  # 2.2M words: seconds of reading and tokenizing before step 1
    panel.start.click()
    # (no event marks "reading the corpus": the CLI is busy before its first event, which a fast machine with
    # a GPU reaches in a few seconds; a second in, the process is up and has not got there on any machine)
    qtbot.wait(1000)
    assert panel.job.running
    # the empty loss plot says what the run is doing, not "Start a run" as if none had been started
    assert panel.loss_plot.empty.text().startswith(f"{panel.run_name}: reading the corpus")
    stopped_at = time.perf_counter()
    panel.stop.click()
    with qtbot.waitSignal(panel.job.finished, timeout=30_000) as done:
        pass
    assert time.perf_counter() - stopped_at < 10
    assert done.args[0] in ("stopped", "killed")  # "stopped" once the CLI listens for Ctrl-C; before, killed
    assert not panel.resume.isEnabled() and not panel.open_run.isEnabled()  # nothing was saved to resume
    assert panel.start.isEnabled() and not panel.stop.isEnabled()
    assert panel.loss_plot.empty.text().startswith("Start a run")


def test_max_steps_follows_the_family_unless_typed(qtbot, window):
    """word2vec opened with the networks' 300-step cap: its run stopped a third of a second in, as "stopped"."""
    panel = window.train
    panel.kind.setCurrentText("word2vec")
    assert panel.steps.value() == 0 and panel.steps.text() == "whole epochs"
    panel.kind.setCurrentText("bert")
    assert panel.steps.value() == 300
    panel.steps.setValue(50)  # typed by hand: kept whatever the family
    panel.kind.setCurrentText("glove")
    assert panel.steps.value() == 50


def test_the_form_shows_what_a_run_trains_with_on_the_device_chosen(qtbot, window, monkeypatch):
    """ELMo trains 512 windows a step at lr 1e-3 on a CUDA GPU (its CPU defaults: 32 at 5e-4); the form says
    so for the device chosen, "auto" meaning what the window found here, and the run is started with it."""
    panel = window.train
    panel.kind.setCurrentText("elmo")
    batch, lr = panel.settings.editors["batch_size"], panel.settings.editors["lr"]
    panel.settings.set_values({"hidden": 64})  # a value of the user's own: a device change keeps it
    panel.device.setCurrentText("cuda")
    assert batch.value() == 512 and float(lr.text()) == 1e-3
    assert "on cuda: batch size and lr chosen for GPUs" in panel.settings_title.text()
    assert panel.settings.values()["hidden"] == 64
    panel.device.setCurrentText("cpu")
    assert batch.value() == 32 and float(lr.text()) == 5e-4
    assert "GPUs" not in panel.settings_title.text()
    panel.device.setCurrentText("auto")
    panel.set_auto_device("cuda")  # what the window's probe says on a machine with a GPU
    assert batch.value() == 512
    panel.kind.setCurrentText("bert")
    panel.kind.setCurrentText("elmo")  # a fresh form for the family: still the GPU's values
    assert panel.settings.editors["batch_size"].value() == 512
    launched = []
    monkeypatch.setattr(panel, "_launch", lambda args, message, doing: launched.append(args))
    panel.start_run()
    args = launched[0]
    assert args[args.index("--batch-size") + 1] == "512" and "--device" not in args  # "auto": the CLI picks it
    panel.set_auto_device("cpu")
    assert panel.settings.editors["batch_size"].value() == 32


def test_every_familys_settings_fit_the_column_without_scrolling_sideways(qtbot, window):
    """A long choice ("distill map", "init embeddings") made the whole form wider than its column: it scrolled
    sideways with every field cut. The fields now fit the column's default width; each list still shows its
    choices whole."""
    from PySide6.QtWidgets import QComboBox, QScrollArea

    from engine import api

    panel = window.train
    area = panel.settings.findChild(QScrollArea)
    for kind in api.model_kinds():
        panel.kind.setCurrentText(kind)
        settle_layout()
        assert area.horizontalScrollBar().maximum() == 0, kind
        for combo in panel.settings.findChildren(QComboBox):
            view = combo.view()
            assert view.minimumWidth() >= view.sizeHintForColumn(0)  # the open list: every choice whole


def test_a_run_that_goes_on_from_another_says_so_while_it_trains(qtbot, window, contextual_runs):
    """A run folder in "init from": the run takes that run's architecture (none of the tiny settings given here)
    and says where it goes on from below the status line, which every step rewrites."""
    panel = window.train
    panel.kind.setCurrentText("gpt")
    panel.settings.set_values({"init_from": str(contextual_runs["gpt"][0]), "seq_len": 32, "batch_size": 16})
    assert not panel.settings.problems
    panel.steps.setValue(20)
    panel.start.click()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000) as done:
        pass
    assert done.args == ["completed"]
    assert panel.notes.isVisible() and f"goes on from {contextual_runs['gpt'][0]}" in panel.notes.text()
    assert "hidden 256 → 64" in panel.notes.text()  # the form's tiny preset replaced by the earlier run's
    assert panel.run_name.startswith("gpt-on-")  # named after the run it goes on from (the fixture's folder: gpt)
    assert "completed" in panel.status.text()
    panel.start.click()  # the next run starts without the last one's notes
    assert not panel.notes.isVisible()
    panel.stop_run()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000):
        pass


def test_the_library_offers_to_go_on_pretraining_from_a_run(qtbot, window):
    """Right-click a shipped GPT in the library: "Go on pretraining from gpt-tiny…" opens the Pretrain tab with
    the family and init_from set, the corpus left to choose; static vectors offer no such thing."""
    library = window.library
    window.tabs.setCurrentWidget(window.polysemy)

    def row(name):
        rows = [library.available.child(i) for i in range(library.available.childCount())]
        return next((r for r in rows if r.data(0, Qt.ItemDataRole.UserRole) == name), None)

    qtbot.waitUntil(lambda: row("gpt-tiny") is not None and row("glove-6b-50d") is not None, timeout=30_000)
    assert not any("pretraining" in text for text, _ in library.menu_actions(row("glove-6b-50d")))
    offered = dict(library.menu_actions(row("gpt-tiny")))
    offered["Go on pretraining from gpt-tiny…"]()
    panel = window.train
    assert window.tabs.currentWidget() is panel and panel.kind.currentText() == "gpt"
    assert panel.settings.values()["init_from"] == "gpt-tiny" and not panel.settings.problems
    assert "Goes on from gpt-tiny" in panel.status.text()
    # it learns as gpt-tiny did (64-token windows, no dropout: the form's 128 and 0.1 give way), and says so
    qtbot.waitUntil(lambda: panel.settings.values()["seq_len"] == 64, timeout=10_000)
    assert panel.settings.values()["dropout"] == 0.0
    assert "It learns as gpt-tiny did: seq len 64, dropout 0 (change them here" in panel.status.text()
    editor = panel.settings.editors["init_from"]  # scrolled into sight, at the foot of a long form
    qtbot.waitUntil(lambda: not editor.visibleRegion().isEmpty(), timeout=5_000)
    for _ in range(5):  # and kept whole in sight as the form settles (it was left half hidden)
        settle_layout()
    assert editor.visibleRegion().boundingRect().height() == editor.height()
    with qtbot.waitSignal(window.session.modelsChanged, timeout=60_000):  # loaded: unloading it, or going on from it
        window.session.load("gpt-tiny")
    loaded = next(library.loaded.child(i) for i in range(library.loaded.childCount())
                  if library.loaded.child(i).text(0) == "gpt-tiny")
    offered = dict(library.menu_actions(loaded))
    assert list(offered) == ["Show gpt-tiny in Predictions → Next token", "What makes gpt-tiny's neurons fire…",
                             "Unload gpt-tiny", "Go on pretraining from gpt-tiny…"]
    offered["Show gpt-tiny in Predictions → Next token"]()  # the view a GPT is for, gpt-tiny picked there
    assert window.tabs.currentWidget() is window.predictions
    assert window.predictions.VIEWS[window.predictions.views.currentIndex()] == "next"
    assert window.predictions.next.model.currentText() == "gpt-tiny"
    offered["What makes gpt-tiny's neurons fire…"]()  # its last layer's first neuron, in a window of its own
    neurons = window.neuron_window
    qtbot.waitUntil(lambda: neurons.result is not None, timeout=60_000)
    assert (neurons.result.layer, neurons.result.neuron) == (3, 0) and neurons.layer.maximum() == 4
    neurons.close()


def test_the_library_loads_an_available_model_and_shows_it_where_its_family_is_seen(qtbot, window):
    """Right-click word2vec-sgns, not loaded: "Load and show" loads it and turns to Neighbours, picked there."""
    library = window.library
    window.tabs.setCurrentWidget(window.polysemy)

    def row():
        rows = [library.available.child(i) for i in range(library.available.childCount())]
        return next((r for r in rows if r.data(0, Qt.ItemDataRole.UserRole) == "word2vec-sgns"), None)

    qtbot.waitUntil(lambda: row() is not None, timeout=30_000)
    offered = dict(library.menu_actions(row()))
    with qtbot.waitSignal(window.session.loaded, timeout=60_000):
        offered["Load and show word2vec-sgns"]()
    assert window.tabs.currentWidget() is window.neighbours
    assert window.neighbours.model.currentText() == "word2vec-sgns"


def test_an_elmo_explored_answers_in_the_lens_for_the_word_its_sentences_share(qtbot, window, contextual_runs):
    """A new ELMo opened in the explorer: the Polysemy lens, the run picked there, and the word the typed
    sentences share ("bank") chosen for it, so its neighbours come without a click; a word the user chose stays."""
    from PySide6.QtWidgets import QToolButton

    from explorer.widgets.word_chip import chip_word

    lens = window.polysemy
    assert lens.word == "bank"  # the first screen's word, selected at the start
    lens.select("")  # nothing chosen: the explorer chooses the word the sentences share
    run = str(contextual_runs["elmo"][0])
    lens.sentences.setPlainText("We sat on the bank of the river.\nShe deposited cash at the bank.")  # (not the
    with qtbot.waitSignal(lens.shown, timeout=120_000):  # sentences an earlier window left in the settings)
        window.explore(run)
    name = lens.model.currentText()
    assert window.tabs.currentWidget() is lens and name in window.session.models and run.endswith(name)
    assert lens.word == "bank" and lens._on_screen == (name, "bank", lens.layer.value())
    chips = [lens.chips.itemAt(i).widget() for i in range(lens.chips.count())]
    assert [chip_word(c) for c in chips if isinstance(c, QToolButton) and c.isChecked()] == ["bank"]
    lens.sentences.setPlainText("We sat on the bank of the river.\nThe river bank flooded.")
    lens.select("river")
    window.tabs.setCurrentWidget(window.train)
    assert window.show_model(name) and lens.word == "river"


def test_a_run_folder_chosen_to_go_on_from_brings_how_it_learned_to_the_form(qtbot, window, contextual_runs,
                                                                              monkeypatch):
    """Choose a run folder as "init from": the form shows how that run learned (its window length here), and a
    value the user changes afterwards stays when the field is left again unchanged."""
    from PySide6.QtWidgets import QFileDialog

    earlier = str(contextual_runs["gpt"][0])
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: earlier))
    panel = window.train
    panel.kind.setCurrentText("gpt")
    assert panel.settings.values()["seq_len"] == 128
    editor = panel.settings.editors["init_from"]
    editor.actions()[0].trigger()
    qtbot.waitUntil(lambda: panel.settings.values()["seq_len"] == 32, timeout=10_000)
    # its architecture, which the run takes whatever the form says: shown, not to be edited, saying why
    hidden = panel.settings.editors["hidden"]
    assert panel.settings.values()["hidden"] == 64 and not hidden.isEnabled()
    assert "Taken from gpt: a run that goes on from it has its architecture" in hidden.toolTip()
    assert panel.settings.editors["seq_len"].isEnabled()  # how it learned: the user's to change
    assert "gpt decides the architecture: a preset sets the rest" in panel.preset.toolTip()
    panel.preset.setCurrentText("small")  # a preset leaves the held values, and the run named, be
    assert panel.settings.values()["hidden"] == 64 and panel.settings.values()["init_from"] == earlier
    assert "It learns as gpt did: seq len 32, dropout 0.1" in panel.status.text()
    panel.settings.set_values({"seq_len": 24})
    editor.editingFinished.emit()  # the field left with the same run in it: nothing read again
    qtbot.wait(300)
    assert panel.settings.values()["seq_len"] == 24
    editor.setText("")  # no run to go on from: the architecture is the form's again
    editor.editingFinished.emit()
    assert hidden.isEnabled() and "Taken from" not in hidden.toolTip()
    assert "decides the architecture" not in panel.preset.toolTip()



def test_a_run_of_another_family_chosen_to_go_on_from_brings_its_family(qtbot, window, contextual_runs, tmp_path,
                                                                         monkeypatch):
    """A gpt run chosen in the bert form: the model becomes gpt (a run goes on in its own family) and the
    status says why; a folder no run can go on from is said at once, with the reason the run would give."""
    from PySide6.QtWidgets import QFileDialog

    chosen = [str(contextual_runs["gpt"][0])]
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: chosen[0]))
    panel = window.train
    panel.kind.setCurrentText("bert")
    panel.settings.editors["init_from"].actions()[0].trigger()
    qtbot.waitUntil(lambda: panel.kind.currentText() == "gpt", timeout=10_000)
    qtbot.waitUntil(lambda: "It learns as gpt did" in panel.status.text(), timeout=10_000)
    assert panel.settings.values()["init_from"] == chosen[0]
    assert "The model is now gpt: gpt is a gpt run (a bert run cannot go on from it)" in panel.status.text()
    assert not panel.settings.editors["hidden"].isEnabled()
    chosen[0] = str(tmp_path)  # a folder with no run in it
    panel.settings.editors["init_from"].actions()[0].trigger()
    qtbot.waitUntil(lambda: panel.status.text().startswith("Cannot go on from"), timeout=10_000)
    assert panel.kind.currentText() == "gpt" and panel.settings.editors["hidden"].isEnabled()
