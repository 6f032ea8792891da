"""explorer.window_work: through a zoom's relayout and repaint the workers' models wait (engine.yield_points), and
they go on by themselves once the window has painted."""

from __future__ import annotations

import threading
import time

import pytest
import torch
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QLabel

from engine.api import release_workers, yield_at_modules
from engine.yield_points import stop_yielding_at_modules, workers_held
from explorer.theme import apply_zoom
from explorer.window_work import window_working


@pytest.fixture(autouse=True)
def _hook_removed_after():
    yield
    release_workers()
    stop_yielding_at_modules()


class _Painted(QLabel):
    def __init__(self) -> None:
        super().__init__("the window")
        self.painted: list[float] = []

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.painted.append(time.monotonic())
        super().paintEvent(event)


def test_the_workers_wait_through_a_zoom_until_the_window_has_painted(qtbot):
    app = QApplication.instance()
    label = _Painted()
    qtbot.addWidget(label)
    label.show()
    qtbot.waitExposed(label)
    qtbot.wait(50)
    yield_at_modules()
    module, stop, finished = torch.nn.Linear(4, 4), threading.Event(), []

    def work() -> None:
        x = torch.zeros(1, 4)
        while not stop.is_set():
            module(x)
            finished.append(time.monotonic())
            time.sleep(0.001)

    worker = threading.Thread(target=work)
    worker.start()
    try:
        qtbot.wait(50)
        label.painted.clear()
        apply_zoom(app, 2)
        zoomed = time.monotonic()
        # the window's other work in the turns before its paint (a view built as it is shown, say): 40 ms of them
        QTimer.singleShot(0, lambda: time.sleep(0.04))
        assert workers_held()
        qtbot.waitUntil(lambda: not workers_held(), timeout=2000)
        assert label.painted, "the window painted its new font"
        painted = label.painted[0]
        assert painted > zoomed + 0.03
        # (a forward under way as the hold began may end; none begins until the window has painted)
        during = [t for t in finished if zoomed + 0.005 < t < painted]
        assert during == [], f"{len(during)} forwards ran between the zoom and its paint"
        qtbot.wait(100)
        assert any(t > painted for t in finished)  # and they go on afterwards, by themselves
    finally:
        stop.set()
        worker.join()
        release_workers()
        apply_zoom(app, 0)


def test_the_window_never_holds_the_workers_for_long_even_if_its_turns_never_come(qtbot):
    window_working()
    assert workers_held()
    time.sleep(0.35)  # the event loop kept from turning (a modal C++ call, say): the hold has run out by itself
    assert not workers_held()
    qtbot.wait(50)  # (its turns come later and let go what is already let go)
    assert not workers_held()


def test_the_workers_wait_while_a_panel_draws_the_answer_it_was_given(qtbot):
    """A query's answer arrives: the panel draws it (its plots' many calls into Python) with the other workers
    waiting, and they go on by themselves once it has."""
    from explorer.tasks import TaskRunner

    runner = TaskRunner()
    held_when_drawn: list[bool] = []
    runner.finished.connect(lambda _result: held_when_drawn.append(workers_held()))
    runner.submit(lambda: 42)
    qtbot.waitUntil(lambda: bool(held_when_drawn), timeout=5000)
    assert held_when_drawn == [True]
    qtbot.waitUntil(lambda: not workers_held(), timeout=2000)
