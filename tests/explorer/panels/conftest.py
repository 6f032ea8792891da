"""The main window the panel tests drive: shown, with an empty session; at the end, no query or job left running."""

import pytest


@pytest.fixture
def window(qtbot):
    from explorer.main_window import MainWindow
    from explorer.session import Session

    win = MainWindow(Session())
    qtbot.addWidget(win)
    win.show()
    yield win
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(30_000)  # no task left running
