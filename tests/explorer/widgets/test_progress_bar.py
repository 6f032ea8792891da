"""A progress bar told of each step paints with the window's next paint, not inside each report: a training's or an
index build's many reports a second each painted the window on its thread."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QProgressBar

from explorer.widgets.progress_bar import ProgressBar


class Paints(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        self.count += event.type() == QEvent.Type.Paint
        return False


def painted_during_reports(qtbot, bar: QProgressBar) -> tuple[int, int]:
    """Paints inside 100 reports of progress, and after them once the window has painted."""
    qtbot.addWidget(bar)
    bar.show()
    qtbot.waitExposed(bar)
    QApplication.processEvents()
    paints = Paints()
    bar.installEventFilter(paints)
    for value in range(0, 1000, 10):
        bar.setValue(value)
    during = paints.count
    QApplication.processEvents()
    return during, paints.count - during


def test_reports_of_progress_paint_once_with_the_window_and_show_the_last(qtbot):
    during, after = painted_during_reports(qtbot, ProgressBar(maximum=1000, textVisible=True))
    assert during == 0 and after == 1  # one paint, with the rest of the window
    plain = painted_during_reports(qtbot, QProgressBar(maximum=1000, textVisible=True))
    assert plain[0] >= 50  # Qt's own bar painted at (nearly) every report


def test_the_bar_shows_the_value_it_was_told_and_a_repeated_value_asks_for_no_paint(qtbot):
    bar = ProgressBar(maximum=1000, textVisible=True)
    qtbot.addWidget(bar)
    bar.setValue(500)
    assert bar.value() == 500 and bar.text() == "50%" and bar.updatesEnabled()
    bar.show()
    qtbot.waitExposed(bar)
    qtbot.wait(200)  # (its first paints done)
    paints = Paints()
    bar.installEventFilter(paints)
    bar.setValue(500)
    QApplication.processEvents()
    assert paints.count == 0
