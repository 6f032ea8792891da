"""A panel's views are built when first shown: a talk's step shows one view, and building every view of a panel in one
turn of the event loop was the largest cause of the window's stalls (bench/robustness/chaos.py --events). What is
built late must still show what the panel has: a result computed before its view existed is drawn when it appears."""

import numpy as np
import pytest


@pytest.fixture
def session(qtbot):
    from explorer.session import Session

    yield Session()
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)


def test_the_predictions_panel_builds_the_view_a_scene_shows_and_the_others_on_their_tab(qtbot, session):
    from explorer.panels.predictions.panel import PredictionsPanel
    from explorer.scenes import Scene

    panel = PredictionsPanel(session)
    qtbot.addWidget(panel)
    assert set(panel._built) == {"masked"}  # the first tab, on screen
    panel.set_presenting(True)
    panel.apply_scene(Scene("predictions", ["She played the piano."], ["ngram-kn"], selection="", view="probability"))
    assert set(panel._built) == {"masked", "probability"}
    view = panel._built["probability"]
    assert panel.views.currentWidget().isAncestorOf(view)
    assert view.only == ["ngram-kn"] and not view.stop.isVisibleTo(panel)  # the talk's settings reached it
    assert view.text.toPlainText().strip() == "She played the piano."
    panel.views.setCurrentIndex(3)  # the speaker clicks "Next sentence"
    assert "nsp" in panel._built and panel.views.widget(3).isAncestorOf(panel.nsp)


def test_the_attention_panels_other_views_are_built_on_their_tab_and_drawn_from_the_result(qtbot, session,
                                                                                          contextual_runs):
    from explorer.panels.attention import AttentionPanel
    from explorer.widgets.heatmap import Heatmap, HeatmapGrid

    panel = AttentionPanel(session)
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(session.modelsChanged, timeout=60_000):
        session.load(str(contextual_runs["bert"][0]))
    qtbot.waitUntil(lambda: panel.result is not None, timeout=30_000)
    assert not panel.findChildren(Heatmap) and not panel.findChildren(HeatmapGrid)  # only the head view
    layers, heads = panel.result.maps.weights.shape[:2]
    panel.views.setCurrentIndex(1)  # the model view: built now, and drawn from the result already there
    assert panel.grid.shape == (layers, heads)
    assert panel.views.widget(1).isAncestorOf(panel.grid)
    panel.views.setCurrentIndex(3)  # average / rollout: its layer box knows the model's layers
    assert panel.mix_layer.maximum() == layers - 1
    assert panel.atlas_corpus.isEnabled()  # asked for by name: the atlas is built, with the model there
    with pytest.raises(AttributeError):
        _ = panel.no_such_widget


def test_the_polysemy_map_is_built_on_its_tab_with_the_answer_already_there(qtbot, session, contextual_runs):
    from explorer.panels.polysemy.panel import PolysemyPanel
    from explorer.widgets.occurrence_map import OccurrenceMapView

    panel = PolysemyPanel(session)
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(session.modelsChanged, timeout=60_000):
        session.load(str(contextual_runs["bert"][0]))
    panel.sentences.setPlainText("She played the piano on stage.\nThey played a match in the rain.")
    panel.select("played")
    qtbot.waitUntil(lambda: panel.map_page.drawn[0] is not None, timeout=120_000)
    assert not panel.findChildren(OccurrenceMapView)  # the Map tab was never shown
    points = panel.map_page.drawn[0].points
    panel.views.setCurrentIndex(1)
    maps = panel.findChildren(OccurrenceMapView)
    assert len(maps) == 1 and maps[0].scatter.data.size == points.shape[0] and np.isfinite(points).all()
