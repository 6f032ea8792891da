"""The chaos monkey's check for views laid out past the window's edge (bench/robustness/monkey.py ``sprawling``):
it names a widget far wider than the window, and nothing on the window as it opens."""

from PySide6.QtWidgets import QLabel

from bench.robustness.monkey import Monkey
from tests.conftest import settle_layout


def test_the_monkey_names_a_widget_laid_out_far_wider_than_the_window(qtbot):
    from explorer.main_window import MainWindow
    from explorer.session import Session

    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.resize(1200, 760)
    window.show()
    monkey = Monkey(window, seed=1)
    settle_layout()
    assert monkey.sprawling() == []
    window.polysemy.layout().addWidget(QLabel("a" * 3000))  # a label that cannot wrap: its view is laid out to fit
    settle_layout()
    found = monkey.sprawling()
    assert found and any(line.startswith("QLabel ") and "in MainWindow" in line for line in found), found
