"""The Layer similarity tab against real (tiny) models: it opens on two different models, computes off the GUI thread
only while shown, draws every layer of A against every layer of B with each row's closest layer in bold, stops when
asked, and says why when there is nothing to compare."""

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

SHOTS = Path(__file__).resolve().parents[3] / "test-output" / "screenshots"


def _add(window, contextual_runs, *kinds):
    from engine import api

    for kind in kinds:
        window.session.set_model(f"tiny-{kind}", api.load(contextual_runs[kind][0]))


def _cells(panel):
    t = panel.table
    return np.array([[float(t.item(r, c).text()) for c in range(t.columnCount())] for r in range(t.rowCount())])


def test_two_models_layer_by_layer_with_the_closest_in_bold(qtbot, window, contextual_runs):
    panel = window.layers
    panel.count.setValue(20)
    _add(window, contextual_runs, "bert", "gpt")
    assert panel.job is None and panel.table.rowCount() == 0  # hidden: nothing computed yet
    assert panel.model_a.currentText() != panel.model_b.currentText()  # B opens on another model than A
    with qtbot.waitSignal(panel.shown, timeout=120_000):
        window.tabs.setCurrentWidget(panel)
    a = window.session.models[panel.model_a.currentText()]
    layers = a.contextual_vectors("a sentence").vectors.shape[0]
    assert panel.table.rowCount() == layers
    values = _cells(panel)[::-1]  # (the table's top row is A's top layer)
    assert np.all((values > -0.05) & (values <= 1.0))
    for i, row in enumerate(values):
        bold = [c for c in range(len(row)) if panel.table.item(layers - 1 - i, c).font().bold()]
        assert len(bold) == 1 and row[bold[0]] == row.max()  # (as shown, to 2 decimals: a tie may go either way)
    assert "held-out sentences" in panel.summary.text() and "Rows:" in panel.axes.text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "layer-similarity.png"))


def test_a_model_against_itself_shows_ones_on_the_diagonal_and_what_each_layer_changes(qtbot, window, contextual_runs):
    panel = window.layers
    panel.count.setValue(20)
    _add(window, contextual_runs, "bert")
    window.tabs.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.shown, timeout=120_000):
        panel.model_b.setCurrentText("tiny-bert")
    values = _cells(panel)
    np.testing.assert_allclose(np.diag(values[::-1]), 1.0)
    assert "against one another" in panel.summary.text() and "the one below it" in panel.summary.text()
    top = panel.table.rowCount() - 1
    assert not panel.table.item(top, 0).font().bold()  # the input's own cell is 1 but not its closest *other* layer


def test_stop_ends_the_job_and_a_new_choice_supersedes_the_old(qtbot, window, contextual_runs):
    panel = window.layers
    panel.count.setValue(2000)  # long enough to be stopped
    _add(window, contextual_runs, "bert", "elmo")
    window.tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.job is not None, timeout=10_000)
    job = panel.job
    qtbot.mouseClick(panel.stop, Qt.MouseButton.LeftButton)
    assert job.stop.is_set() and panel.progress.format() == "stopped" and not panel.stop.isEnabled()
    panel.count.setValue(20)
    with qtbot.waitSignal(panel.shown, timeout=120_000):
        pass  # the debounced new choice computes again
    assert panel.table.rowCount() > 0


def test_with_no_contextual_model_it_says_what_to_load(qtbot, window):
    panel = window.layers
    window.tabs.setCurrentWidget(panel)
    assert panel.job is None and panel.table.rowCount() == 0
    assert "Load two contextual models" in panel.summary.text()


def test_a_scene_chooses_both_models_and_the_sentences_and_comes_back_as_it_was(qtbot, window, contextual_runs):
    from explorer.scenes import Scene, SceneError, check_scene

    panel = window.layers
    _add(window, contextual_runs, "bert", "gpt", "elmo")
    scene = check_scene({"panel": "layers", "models": ["tiny-gpt", "tiny-elmo"], "contextual_model": "tiny-gpt",
                         "compare": "tiny-elmo", "count": 20}, "a test scene")
    window.tabs.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.shown, timeout=120_000):
        panel.apply_scene(scene)
    assert (panel.model_a.currentText(), panel.model_b.currentText(), panel.count.value()) == ("tiny-gpt", "tiny-elmo", 20)
    again = window.current_panel().current_scene()
    assert check_scene(again, "the view") == Scene("layers", [], ["tiny-gpt", "tiny-elmo"], contextual_model="tiny-gpt",
                                                   compare="tiny-elmo", count=20)
    panel.model_b.setCurrentIndex(list(window.session.models).index("tiny-bert"))
    panel.model_b.activated.emit(panel.model_b.currentIndex())  # picked by hand: it stays as models come and go
    _add(window, contextual_runs, "gpt")
    assert panel.model_b.currentText() == "tiny-bert"
    for bad in (0, 5000, "200", True):
        with pytest.raises(SceneError, match="count"):
            check_scene({"panel": "layers", "models": [], "count": bad}, "a bad scene")
    panel.debiased.setChecked(True)  # the debiased estimate is kept by the scene, and given back by it
    kept = check_scene(window.current_panel().current_scene().to_json(), "the view")
    assert kept.debiased is True
    panel.debiased.setChecked(False)
    panel.apply_scene(kept)
    assert panel.debiased.isChecked()
    panel.apply_scene(scene)  # a scene that does not name it: plain CKA
    assert not panel.debiased.isChecked()
    with pytest.raises(SceneError, match="debiased"):
        check_scene({"panel": "layers", "models": [], "debiased": "yes"}, "a bad scene")


def test_the_scrubbers_model_is_named_with_its_step_and_a_flat_diagonal_is_read_as_such():
    from types import SimpleNamespace

    from engine.api import LayerSimilarity
    from explorer.panels.layers import reading, who

    assert who(SimpleNamespace(name="run (scrubber)", path="/r/checkpoints/step-0012000")) == "run (scrubber) at step 12,000"
    assert who(SimpleNamespace(name="run (scrubber)", path="/r/checkpoint-500/")) == "run (scrubber) at step 500"
    assert who(SimpleNamespace(name="run (scrubber)", path="/shipped/gpt-tiny")) == "run (scrubber) at gpt-tiny"
    assert who(SimpleNamespace(name="bert-tiny", path="/x/step-3")) == "bert-tiny"
    flat = LayerSimilarity("a", "b", np.array([[1.0, 0.5], [0.5, 0.99]]), 100, 10, 0, False)
    assert "as alike at every depth" in reading(flat)
    apart = LayerSimilarity("a", "b", np.array([[1.0, 0.5], [0.5, 0.6]]), 100, 10, 2, False)
    assert "least alike at layer 1" in reading(apart) and "2 left out" in reading(apart)


def test_the_debiased_estimate_is_one_tick_away_and_said(qtbot, window, contextual_runs):
    panel = window.layers
    panel.count.setValue(20)
    _add(window, contextual_runs, "bert", "gpt")
    with qtbot.waitSignal(panel.shown, timeout=120_000):
        window.tabs.setCurrentWidget(panel)
    plain = _cells(panel)
    with qtbot.waitSignal(panel.shown, timeout=120_000):
        panel.debiased.setChecked(True)
    assert panel.summary.text().startswith("Debiased CKA over") and not np.array_equal(_cells(panel), plain)
