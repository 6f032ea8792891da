"""The run monitor draws the latest runs: past SHOWN_RUNS, the oldest drawn run is unticked and its curves hidden
(it stays listed, and ticking it draws it again); the autorange then reads only what is drawn. Past KEPT_RUNS, the
oldest are forgotten."""

from PySide6.QtCore import Qt

from explorer.widgets.run_monitor import KEPT_RUNS, LEARNING_RATE, SHOWN_RUNS, SPEED, RunMonitor


def _step(step: int, loss: float):
    from engine import api

    return api.StepMetrics(**{**{f: None for f in api.StepMetrics.__dataclass_fields__},
                              "step": step, "loss": loss, "lr": 1e-3, "throughput": 100.0, "unit": "tokens",
                              "epoch": 0, "progress": 0.5})


def test_only_the_latest_runs_are_drawn_and_an_older_one_can_be_ticked_back(qtbot):
    monitor = RunMonitor("held-out", LEARNING_RATE, examples_axis=False)
    qtbot.addWidget(monitor)
    monitor.show()
    names = [f"run {i}" for i in range(SHOWN_RUNS + 3)]
    for i, name in enumerate(names):
        monitor.show_event(name, _step(10, 3.0 - i * 0.1))
        monitor.show_event(name, _step(20, 2.0 - i * 0.1))
    ticked = [monitor.runs.item(i).text() for i in range(monitor.runs.count())
              if monitor.runs.item(i).checkState() == Qt.CheckState.Checked]
    assert ticked == names[-SHOWN_RUNS:]
    assert monitor.runs.count() == len(names)  # the older runs stay listed
    assert not monitor.loss_plot.shown("run 0") and not monitor.loss_plot.shown("run 0 smoothed")
    assert not monitor.extra_plot.shown("run 0")
    assert monitor.loss_plot.shown(names[-1])
    monitor.loss_plot.redraw_now()  # (a run's items are made at the redraw that draws its first points)
    drawn = {id(item) for item in monitor.loss_plot.getPlotItem().listDataItems()}
    assert len(drawn) == 2 * SHOWN_RUNS  # an unticked run's items are let go, not kept hidden
    monitor.show_event("run 0", _step(30, 1.5))  # a hidden run goes on: its points are kept, nothing is drawn
    assert not monitor.loss_plot.shown("run 0")
    monitor.runs.item(0).setCheckState(Qt.CheckState.Checked)  # the user asks for the first run again
    assert monitor.loss_plot.shown("run 0") and monitor.extra_plot.shown("run 0")
    x, y = monitor.loss_plot.curves["run 0"].getData()
    assert list(x) == [10, 20, 30] and list(y) == [3.0, 2.0, 1.5]  # every point, the hidden time's too
    colour = monitor.loss_plot.curves["run 0"].opts["pen"].color()
    assert colour.name() == monitor.loss_plot.curves["run 0 smoothed"].opts["pen"].color().name()
    assert colour.alpha() < 255  # the raw loss drawn faint again, as it was


def test_hours_of_runs_keep_the_latest_runs_only(qtbot):
    """Past KEPT_RUNS listed, the oldest runs (not drawn) are forgotten with their points; a forgotten run that goes
    on is listed again, from its next event."""
    from engine import api

    monitor = RunMonitor("held-out", LEARNING_RATE, examples_axis=False)
    qtbot.addWidget(monitor)
    ended = api.EvalMetrics(**{**{f: None for f in api.EvalMetrics.__dataclass_fields__}, "step": 20,
                                "metrics": {"loss": 2.5}})
    names = [f"run {i}" for i in range(KEPT_RUNS + 10)]
    for name in names:
        monitor.show_event(name, _step(10, 3.0))
        monitor.show_event(name, ended)
    listed = [monitor.runs.item(i).text() for i in range(monitor.runs.count())]
    assert listed == names[-KEPT_RUNS:]
    gone = names[0]
    assert gone not in monitor.events and gone not in monitor.loss_plot.buffers
    assert f"{gone} smoothed" not in monitor.loss_plot.buffers and gone not in monitor.extra_plot.buffers
    assert len(monitor.loss_plot.buffers) == 2 * KEPT_RUNS and len(monitor.eval_plot.buffers) == KEPT_RUNS
    assert len(monitor.extra_plot.buffers) == KEPT_RUNS
    monitor.show_event(gone, _step(30, 1.0))  # it was still going: listed again, from here
    assert monitor.runs.item(monitor.runs.count() - 1).text() == gone
    assert list(monitor.loss_plot.points(gone)[1]) == [1.0]


def test_a_run_stopped_before_it_saved_anything_is_not_said_to_be_saved():
    """Stopped while it read its corpus, a run said "nothing was trained, nothing to save: saved. Resume goes on
    from here." (and Resume stayed off): the status line now says only what happened."""
    from engine import api
    from explorer.widgets.run_monitor import finished_text

    early = api.RunFinished(status="stopped", step=0, run_dir="runs/x",
                            message="stopped before training began: nothing was trained, nothing to save")
    assert finished_text(early) == "stopped before training began: nothing was trained, nothing to save."
    later = api.RunFinished(status="stopped", step=40, run_dir="runs/x",
                            message="stopped at step 40; resume with --resume runs/x")
    assert finished_text(later) == "stopped at step 40: saved. Resume goes on from here."
    assert finished_text(api.RunFinished(status="completed", step=300, run_dir="runs/x", message=""),
                         "perplexity 41.000") == "completed at step 300. perplexity 41.000"


def test_the_metric_box_waits_for_the_first_evaluation_then_shows_its_metric(qtbot):
    """Before any evaluation the box was an empty drop-down to open; now it says what will fill it, and the first
    metric to come is chosen and drawn (the task's metric over the loss where the panel asks for that)."""
    from engine import api

    monitor = RunMonitor("validation", LEARNING_RATE, examples_axis=True, default_metric_skips_loss=True)
    qtbot.addWidget(monitor)
    box = monitor.metric_choice
    assert not box.isEnabled() and box.currentIndex() == -1 and box.placeholderText()
    evaluated = api.EvalMetrics(**{**{f: None for f in api.EvalMetrics.__dataclass_fields__}, "step": 20,
                                   "metrics": {"loss": 0.9, "accuracy": 0.7}})
    monitor.show_event("run", _step(10, 1.2))
    monitor.show_event("run", evaluated)
    assert box.isEnabled() and box.currentText() == "accuracy"
    assert monitor.eval_plot.shown("run accuracy") and not monitor.eval_plot.shown("run loss")


def test_the_x_axis_redraws_every_run_as_examples_seen_and_back_without_new_items(qtbot):
    """Steps or examples seen (a run's steps times its batch): every curve of every run, the hidden ones when they are
    ticked again, and the points that come after the switch; the curves' items stay the same (making them again for
    each kept run froze the window for half a second). (``xData``: every point an item holds; what it draws is
    clipped to the view.)"""
    from engine import api

    monitor = RunMonitor("held-out", SPEED, examples_axis=True)
    qtbot.addWidget(monitor)
    monitor.show()
    names = [f"run {i}" for i in range(SHOWN_RUNS + 2)]
    for i, name in enumerate(names):
        monitor.show_event(name, api.RunStarted(run_dir=name, kind="bert", device="cpu", total=40, unit="examples",
                                                info={"batch_size": 4 * (i + 1)}))
        monitor.show_event(name, _step(10, 3.0))
        monitor.show_event(name, _step(20, 2.0))
        monitor.show_event(name, api.EvalMetrics(step=20, metrics={"accuracy": 0.5}))
    monitor.redraw_now()
    items = {name: id(monitor.loss_plot.curves[name]) for name in names[-SHOWN_RUNS:]}
    last, batch = names[-1], 4 * len(names)
    monitor.x_axis.setCurrentText("examples seen")
    assert {name: id(monitor.loss_plot.curves[name]) for name in names[-SHOWN_RUNS:]} == items
    assert list(monitor.loss_plot.curves[last].xData) == [10 * batch, 20 * batch]
    assert list(monitor.loss_plot.curves[f"{last} smoothed"].xData) == [10 * batch, 20 * batch]
    assert list(monitor.extra_plot.curves[last].xData) == [10 * batch, 20 * batch]
    assert list(monitor.eval_plot.curves[f"{last} accuracy"].xData) == [20 * batch]
    assert monitor.loss_plot.getPlotItem().getAxis("bottom").labelText == "examples seen"
    monitor.show_event(last, _step(30, 1.0))  # a point after the switch: drawn as examples seen too
    monitor.redraw_now()
    assert list(monitor.loss_plot.curves[last].xData) == [10 * batch, 20 * batch, 30 * batch]
    monitor.runs.item(0).setCheckState(Qt.CheckState.Checked)  # a hidden run ticked: on the axis of the moment
    monitor.redraw_now()
    assert list(monitor.loss_plot.curves[names[0]].xData) == [40, 80]
    monitor.x_axis.setCurrentText("steps")
    assert list(monitor.loss_plot.curves[last].xData) == [10, 20, 30]
    assert list(monitor.loss_plot.curves[names[0]].xData) == [10, 20]
    assert list(monitor.eval_plot.curves[f"{last} accuracy"].xData) == [20]
    assert list(monitor.loss_plot.points(last)[1]) == [3.0, 2.0, 1.0]  # the losses as they were


def test_the_three_plots_draw_a_step_at_one_place_and_follow_every_curve_until_the_user_zooms(qtbot):
    """The loss, the held-out metric and the speed share one x: the span of all their curves (an evaluation at step
    20 before the first logged loss at step 50 was drawn at the left edge of its plot and a third of the way into
    the loss's), a step at the same pixel on each. New points widen it; a wheel zoom on one plot holds all three
    where the user put them; pyqtgraph's "A" button follows the curves again."""
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    from engine import api
    from tests.conftest import settle_layout
    from tests.explorer.widgets.test_aligned_axes import screen_x

    monitor = RunMonitor("held-out", SPEED, examples_axis=False)
    qtbot.addWidget(monitor)
    monitor.resize(800, 900)
    monitor.show()
    qtbot.waitExposed(monitor)
    plots = (monitor.loss_plot, monitor.eval_plot, monitor.extra_plot)
    monitor.show_event("run", api.EvalMetrics(step=20, metrics={"loss": 8.3}))
    for step in (50, 100, 120):
        monitor.show_event("run", _step(step, 12345.5 / step))  # the loss's numbers wider than the metric's
    monitor.redraw_now()
    settle_layout()
    ranges = [plot.getPlotItem().viewRange()[0] for plot in plots]
    assert ranges[0] == ranges[1] == ranges[2] and ranges[0][0] < 20 and ranges[0][1] > 120
    for step in (20, 50, 120):
        xs = [screen_x(plot, step) for plot in plots]
        assert max(xs) - min(xs) <= 1, (step, xs)
    monitor.show_event("run", _step(400, 30.0))  # the run goes on: all three follow it
    monitor.redraw_now()
    assert all(plot.getPlotItem().viewRange()[0][1] > 400 for plot in plots)

    view = monitor.eval_plot.viewport()  # the user zooms into the held-out metric with the wheel
    at = QPointF(view.width() / 2, view.height() / 2)
    QApplication.sendEvent(view, QWheelEvent(at, QPointF(view.mapToGlobal(at.toPoint())), QPoint(0, 0),
                                             QPoint(0, 240), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                             Qt.ScrollPhase.NoScrollPhase, False))
    zoomed = monitor.eval_plot.getPlotItem().viewRange()[0]
    assert zoomed[1] - zoomed[0] < 380 and monitor.loss_plot.getPlotItem().viewRange()[0] == zoomed
    monitor.show_event("run", _step(800, 20.0))  # a new point does not pull the zoomed view away
    monitor.redraw_now()
    assert all(plot.getPlotItem().viewRange()[0] == zoomed for plot in plots)
    monitor.extra_plot.getPlotItem().autoBtnClicked()  # "A" on another plot: every curve in sight again
    assert all(plot.getPlotItem().viewRange()[0][1] > 800 for plot in plots)
    assert all(plot.getPlotItem().viewRange()[0][0] < 20 for plot in plots)
