"""The window's slowest housekeeping waits for a pause in the user's input: a thaw's full collection of every object
(explorer/garbage.py) runs once the user has stopped clicking and typing, never while they act."""

from __future__ import annotations

import gc

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit

from explorer import garbage, user_input
from tests.explorer.test_unload_thaw import a_model_in_a_frozen_cycle


@pytest.fixture(autouse=True)
def no_input_yet(monkeypatch):
    """The user's last input, this test's own (the app's freezer after it does not wait for its clicks)."""
    monkeypatch.setattr(user_input, "_LAST", [float("-inf")])


@pytest.fixture
def watched(qtbot):
    user_input.watch_input(QApplication.instance())
    field = QLineEdit()
    qtbot.addWidget(field)
    field.show()
    field.activateWindow()
    qtbot.waitUntil(lambda: QApplication.focusWindow() is field.windowHandle(), timeout=2000)
    return field


def test_a_click_or_a_key_in_a_window_is_noted_and_a_mouse_passing_over_it_is_not(watched):
    window = watched.windowHandle()
    QTest.mouseMove(window, QPoint(5, 5))
    assert user_input.user_is_idle()  # the mouse only passed over it
    QTest.mouseClick(window, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(5, 5))
    assert user_input.idle_for() < 1.0 and not user_input.user_is_idle()
    user_input._LAST[0] = float("-inf")
    QTest.keyClick(window, Qt.Key.Key_A)
    assert not user_input.user_is_idle() and watched.text() == "a"  # noted, and passed on to the field


def test_a_thaw_waits_while_the_user_acts_and_frees_a_frozen_cycle_once_they_pause(qtbot, monkeypatch):
    """Asked for while the user clicks, the thaw (and the collection of every object it brings) waits; once they
    stop for ``USER_IDLE_S``, the frozen cycle is collected and the window's objects are frozen again."""
    monkeypatch.setattr(user_input, "USER_IDLE_S", 0.3)
    freezer = garbage._freezer()
    freezer.timer.setInterval(20)
    gone = a_model_in_a_frozen_cycle()  # only a collection after a thaw frees it
    try:
        user_input.note_input()
        garbage.thaw()
        for _ in range(10):  # the user goes on clicking, every 100 ms, for a second
            qtbot.wait(100)
            user_input.note_input()
            assert gone() is not None and garbage.anything_frozen()  # not thawed: nothing scanned
        qtbot.waitUntil(lambda: gone() is None, timeout=5000)  # they paused: thawed, collected
        assert garbage.anything_frozen() and not freezer.thaw_asked  # and frozen again
    finally:
        freezer.timer.setInterval(garbage.FREEZE_AFTER_MS)
        freezer.timer.stop()
        freezer.thaw_asked = False
        garbage.unfreeze()
        gc.collect()
