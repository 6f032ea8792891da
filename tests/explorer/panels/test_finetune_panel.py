"""The fine-tune panel runs real (tiny) fine-tunes in a process, draws their curves live, runs the
ablation as three overlaid runs, shows probe predictions and lets one try the finished model."""

import random
from pathlib import Path

import pytest

from tests.conftest import FRAMES, TOPICS, settle_layout

SHOTS = Path(__file__).resolve().parents[3] / "test-output" / "screenshots"


@pytest.fixture
def panel(qtbot, tmp_path, monkeypatch, contextual_runs):
    monkeypatch.setenv("WORD2BERT_RUNS", str(tmp_path / "runs"))
    from explorer.main_window import MainWindow
    from explorer.session import Session

    rng = random.Random(0)
    rows = []
    for _ in range(120):
        topic = rng.choice(list(TOPICS))
        rows.append(f"{rng.choice(FRAMES[topic]).format(rng.choice(TOPICS[topic]))}\t{topic}\n")
    data = tmp_path / "topics.tsv"
    data.write_text("text\tlabel\n" + "".join(rows), encoding="utf-8")
    session = Session()
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.resize(1400, 950)
    window.show()
    window.tabs.setCurrentWidget(window.finetune)
    with qtbot.waitSignal(session.modelsChanged, timeout=60_000):
        session.load(str(contextual_runs["bert"][0]))
    p = window.finetune
    p.form.task.setCurrentText(str(data))
    p.form.epochs.setValue(3)
    p.form.lr.setText("2e-3")
    p.form.batch_size.setValue(16)
    p.form.max_len.setValue(32)
    p.form.probes.setPlainText("she played the violin on stage\nwe parked the bus outside")
    p.window_for_test = window
    p.bert_vocabulary, p.tmp_path = contextual_runs["bert"][0] / "tokenizer.json", tmp_path
    yield p
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)


def test_a_fine_tune_draws_curves_probes_and_answers(qtbot, panel, contextual_runs):
    qtbot.waitUntil(lambda: "train / " in panel.form.preview.toPlainText(), timeout=20_000)
    assert "fruit" in panel.form.preview.toPlainText() and "classify" in panel.form.preview.toPlainText()
    assert panel.model.currentText() == "bert"
    panel.start.click()
    assert panel.stop.isEnabled() and not panel.start.isEnabled()
    with qtbot.waitSignal(panel.job.finished, timeout=120_000) as done:
        pass
    assert done.args == ["completed"]
    name = panel.runs.item(0).text()
    steps, losses = panel.loss_plot.points(name)
    assert len(steps) >= 3 and all(loss == loss for loss in losses)
    assert panel.metric_choice.currentText() == "accuracy"
    assert len(panel.eval_plot.points(f"{name} accuracy")[0]) >= 2
    assert len(panel.lr_plot.points(name)[0]) == len(steps)
    assert panel.probe_table.table.columnCount() >= 3  # one column per validation (and step 0)
    assert panel.probe_table.table.verticalHeaderItem(0).text() == "she played the violin on stage"
    assert set(panel.probe_table.predictions()) == {"she played the violin on stage", "we parked the bus outside"}
    qtbot.waitUntil(lambda: panel.try_it.button.isEnabled(), timeout=30_000)
    assert "confusion" in panel.evaluation.heatmap.plot.getPlotItem().titleLabel.text
    assert panel.evaluation.heatmap.matrix.shape == (3, 3)
    panel.try_it.input.setText("a juicy peach from the market")
    with qtbot.waitSignal(panel.try_runner.finished, timeout=30_000):
        panel.try_it.button.click()
    assert panel.try_it.scores.rowCount() == 3
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.results.setCurrentWidget(panel.probe_table)
    panel.monitor.redraw_now()
    settle_layout()
    panel.window_for_test.grab().save(str(SHOTS / "finetune-probes.png"))
    panel.x_axis.setCurrentText("examples seen")
    assert panel.loss_plot.points(name)[0][-1] == steps[-1] * 16
    panel.results.setCurrentWidget(panel.evaluation)
    panel.monitor.redraw_now()
    settle_layout()
    panel.window_for_test.grab().save(str(SHOTS / "finetune-confusion.png"))
    # the run fine-tuned here, opened from the library too, is listed once; chosen there and unloaded, "Try it" goes
    # back to the run of this window and answers with it, not with the model that went
    run_model = panel.finished_model
    with qtbot.waitSignal(panel.session.modelsChanged, timeout=60_000):
        panel.session.load(str(panel.records[name].out))
    assert [panel.try_it.run.itemText(i) for i in range(panel.try_it.run.count())] == [name]
    assert panel.finished_model is run_model
    with qtbot.waitSignal(panel.session.modelsChanged, timeout=60_000):
        panel.session.load(str(_hf_classifier(panel.tmp_path / "sentiment", panel.bert_vocabulary)))
    panel.try_it.run.setCurrentText("sentiment")
    assert panel.finished_model is panel.session.models["sentiment"]
    panel.session.unload("sentiment")
    qtbot.waitUntil(lambda: panel.finished_model is not None and panel.try_it.run.currentText() == name,
                    timeout=30_000)
    assert panel.finished_model is panel.records[name].handle and panel.finished_model is not None
    # a fine-tuning run folder made elsewhere (word2bert-finetune's: a copy of this one) is re-plotted beside the
    # runs of the tab, with its loss, validation metric and learning rate; this tab's own run is not drawn twice
    import shutil

    elsewhere = panel.tmp_path / "elsewhere" / "topics-cli"
    shutil.copytree(panel.records[name].out, elsewhere)
    panel.show_run_curves(str(elsewhere))
    qtbot.waitUntil(lambda: "re-plotted" in panel.status.text(), timeout=10_000)
    assert [panel.runs.item(i).text() for i in range(panel.runs.count())] == [name, "topics-cli"]
    assert list(panel.loss_plot.points("topics-cli")[0]) == list(panel.loss_plot.points(name)[0])
    assert list(panel.eval_plot.points("topics-cli accuracy")[1]) == list(panel.eval_plot.points(f"{name} accuracy")[1])
    assert len(panel.lr_plot.points("topics-cli")[0]) == len(steps)
    qtbot.waitUntil(lambda: panel.evaluation.title.text().startswith("topics-cli, best checkpoint"), timeout=30_000)
    panel.show_run_curves(panel.records[name].out)
    assert "one of this tab's runs" in panel.status.text() and panel.runs.count() == 2
    panel.show_run_curves(str(contextual_runs["gpt"][0]))  # a pretraining run: drawn in the Pretrain tab, not here
    qtbot.waitUntil(lambda: "is a pretraining run (gpt)" in panel.status.text(), timeout=10_000)
    assert panel.runs.count() == 2 and not panel.shown_runs.follower.following()
    # opened from the library, such a run answers under "Try it" and shows its evaluation (its confusion matrix)
    library = shutil.copytree(panel.records[name].out, panel.tmp_path / "library" / "topics-lib")
    with qtbot.waitSignal(panel.session.modelsChanged, timeout=60_000):
        panel.session.load(str(library))
    panel.try_it.run.setCurrentText("topics-lib")
    qtbot.waitUntil(lambda: panel.evaluation.title.text().startswith("topics-lib, best checkpoint"), timeout=30_000)
    assert panel.finished_model is panel.session.models["topics-lib"]
    assert panel.evaluation.heatmap.matrix.shape == (3, 3)


def test_the_ablation_overlays_three_runs_and_fills_its_table(qtbot, panel):
    panel.form.epochs.setValue(2)
    panel.ablation.click()
    assert panel.queued.count() == 2  # one runs, two wait
    qtbot.waitUntil(lambda: panel.runs.count() == 3 and not panel.busy and not panel.queue, timeout=240_000)
    names = [panel.runs.item(i).text() for i in range(3)]
    assert [n.split("-")[1] for n in names] == ["full", "frozen", "scratch"]  # topics-full-MMDD-HHMMSS
    assert all(len(panel.loss_plot.points(n)[0]) > 0 for n in names)
    values = panel.ablation_table.values()
    assert set(values) == {"full", "frozen", "scratch"} and all(values.values())
    best = max(values, key=lambda strategy: float(values[strategy]))  # ties: the first, as the panel
    qtbot.waitUntil(lambda: panel.try_it.button.isEnabled(), timeout=30_000)
    assert panel.try_it.run.currentText().split("-")[1] == best  # "Try it" answers with the best run
    assert panel.try_it.run.count() == 3
    other = next(n for n in names if n != panel.try_it.run.currentText())
    panel.try_it.run.setCurrentText(other)  # another run answers: its model is loaded, the best one's let go
    qtbot.waitUntil(lambda: panel.finished_model is not None and panel.records[other].handle is panel.finished_model,
                    timeout=30_000)
    assert [n for n, r in panel.records.items() if r.handle is not None] == [other]
    headers = [panel.probe_table.table.horizontalHeaderItem(c).text()
               for c in range(panel.probe_table.table.columnCount())]
    assert {h.split()[0] for h in headers} == {"full", "frozen", "scratch"}  # the three runs side by side
    panel.runs.item(1).setCheckState(panel.runs.item(1).checkState().Unchecked)
    assert not panel.loss_plot.shown(names[1]) and panel.loss_plot.shown(names[0])
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.runs.item(1).setCheckState(panel.runs.item(1).checkState().Checked)
    panel.monitor.redraw_now()
    settle_layout()
    panel.window_for_test.grab().save(str(SHOTS / "finetune-ablation.png"))


def test_bad_data_is_reported_before_training(qtbot, panel, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("just text\nno labels here\n", encoding="utf-8")
    panel.form.task.setCurrentText(str(bad))
    qtbot.waitUntil(lambda: "cannot use this data" in panel.form.preview.toPlainText(), timeout=20_000)
    assert "no label column" in panel.form.preview.toPlainText()
    panel.start.click()
    with qtbot.waitSignal(panel.job.finished, timeout=60_000):
        pass
    assert "no label column" in panel.status.text()


def test_stop_works_while_loading_while_training_and_when_the_window_closes(qtbot, panel):
    import time

    from engine import api

    # 1. while the process loads the model and reads the data (before its first event)
    panel.start.click()
    run = panel.current
    stopped_at = time.perf_counter()
    panel.stop.click()
    with qtbot.waitSignal(panel.job.finished, timeout=60_000) as done:
        pass
    assert time.perf_counter() - stopped_at < 15 and done.args[0] in ("stopped", "killed")
    assert panel.start.isEnabled() and not panel.stop.isEnabled() and not panel.pause.isEnabled()
    assert run.name not in [panel.try_it.run.itemText(i) for i in range(panel.try_it.run.count())]  # nothing to try
    # 2. while it trains: it keeps its best checkpoint, which answers
    panel.form.epochs.setValue(50)
    panel.start.click()
    with qtbot.waitSignal(panel.job.run_event, timeout=120_000,
                          check_params_cb=lambda ev: isinstance(ev, api.StepMetrics) and ev.step >= 4):
        pass
    panel.stop.click()
    with qtbot.waitSignal(panel.job.finished, timeout=60_000) as done:
        pass
    assert done.args == ["stopped"] and panel.start.isEnabled() and not panel.stop.isEnabled()
    assert "Resume goes on from here" in panel.status.text() and panel.status.text().count("stopped at") == 1
    assert api.load(panel.current.out).classify("a ripe mango").labels
    # 3. closing the window while one trains: stopped with a save, as Stop does
    panel.start.click()
    with qtbot.waitSignal(panel.job.run_event, timeout=120_000,
                          check_params_cb=lambda ev: isinstance(ev, api.StepMetrics) and ev.step >= 2):
        pass
    job, out = panel.job, panel.current.out
    panel.window_for_test.close()
    assert not job.running and job.status == "stopped"
    assert isinstance(api.read_metrics(out)[-1], api.RunFinished) and api.load(out).classify("a bus").labels


def _hf_classifier(folder, vocabulary):
    """A (random) sentiment classifier saved by transformers, with a tiny BERT run's vocabulary."""
    import transformers

    from engine.data.text import load_subword_tokenizer

    tok = load_subword_tokenizer(vocabulary)
    transformers.BertForSequenceClassification(transformers.BertConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, num_labels=2, id2label={0: "NEGATIVE", 1: "POSITIVE"},
        label2id={"NEGATIVE": 0, "POSITIVE": 1})).save_pretrained(folder)
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                                         pad_token="[PAD]", mask_token="[MASK]").save_pretrained(folder)
    return folder


def test_a_fine_tuned_hugging_face_classifier_opened_from_the_library_answers_in_try_it(qtbot, panel, tmp_path):
    """A sentiment or topic classifier saved by transformers (…ForSequenceClassification) is a fine-tuned model:
    "Try it" lists it once it is loaded and answers with its own labels; unloaded, it answers no more."""
    session = panel.session
    with qtbot.waitSignal(session.modelsChanged, timeout=60_000):
        session.load(str(_hf_classifier(tmp_path / "sentiment", panel.bert_vocabulary)))
    from explorer.panels.library import ABOUT, LibraryPanel

    library = panel.window_for_test.findChild(LibraryPanel)
    item = next(library.loaded.child(i) for i in range(library.loaded.childCount())
                if library.loaded.child(i).text(0) == "sentiment")
    assert "fine-tuned: classifies texts (NEGATIVE, POSITIVE)" in item.text(1)  # what it is, in the library
    assert item.data(0, ABOUT).count("classifies texts") == 1 and "Can do: contextual, attention, classify" in \
        item.data(0, ABOUT)
    try_it = panel.try_it
    assert panel.results.currentWidget() is try_it  # where it answers, shown as it loads
    assert try_it.run.currentText() == "sentiment" and try_it.button.isEnabled()
    assert panel.model.findText("sentiment") < 0  # a fine-tuned model is tried, not fine-tuned again
    with qtbot.waitSignal(panel.try_runner.finished, timeout=30_000):
        try_it.input.setText("the fruit was fresh and sweet")
        try_it.button.click()
    assert any(label in try_it.result.text() for label in ("NEGATIVE", "POSITIVE"))
    assert {try_it.scores.item(r, 0).text() for r in range(2)} == {"NEGATIVE", "POSITIVE"}
    session.unload("sentiment")
    qtbot.waitUntil(lambda: try_it.run.findText("sentiment") < 0, timeout=10_000)
    assert panel.finished_model is None and not try_it.button.isEnabled()


def test_start_on_a_model_that_cannot_be_fine_tuned_says_so(qtbot, panel):
    """The chaos bench's monkey chose the picker's "word2vec-sgns (cannot)" row and pressed Start: a KeyError."""
    with qtbot.waitSignal(panel.session.modelsChanged, timeout=60_000):
        panel.session.load("word2vec-sgns")
    rows = [panel.model.itemText(i) for i in range(panel.model.count())]
    cannot = next(i for i, text in enumerate(rows) if text.endswith("(cannot)"))
    panel.model.setCurrentIndex(cannot)
    panel.start.click()
    assert "choose a model that can be fine-tuned" in panel.status.text()
    assert panel.job is None or not panel.job.running
