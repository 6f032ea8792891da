"""explorer.widgets.descendants: the same objects in the same order as ``findChildren`` (a seeded monkey picks the
same ones), without the dead wrappers ``findChildren`` leaves for Qt's own widgets once Qt deletes them."""

import gc

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QScrollArea, QSpinBox, QWidget

from explorer.widgets.descendants import descendants


def _form(parent: QWidget) -> QWidget:
    form = QWidget(parent)
    rows = QFormLayout(form)
    for i in range(3):
        rows.addRow(f"choice {i}", QComboBox())
        rows.addRow(f"count {i}", QSpinBox())  # Qt makes its line edit
    rows.addRow(QScrollArea())  # Qt makes its viewport and bars
    return form


def _dead_wrappers() -> int:
    gc.collect()
    wrapper = shiboken6.Shiboken.Object  # (by the type itself: isinstance asks torch's deprecated objects, which warn)
    return sum(1 for o in gc.get_objects() if issubclass(type(o), wrapper) and not shiboken6.isValid(o))


def _rebuilt(window: QWidget, times: int, walk) -> int:
    """Dead wrappers made by walking ``window`` after each of ``times`` rebuilds of its form."""
    before = _dead_wrappers()
    form = _form(window)
    for _ in range(times):
        walk(window)
        form.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        form = _form(window)
    return _dead_wrappers() - before


def test_the_same_objects_in_the_same_order_as_find_children(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    _form(window)
    _form(window)
    assert descendants(window, QWidget) == window.findChildren(QWidget)
    assert descendants(window) == window.findChildren(QObject)  # layouts too
    edits = descendants(window, (QLineEdit, QComboBox))
    assert edits == [w for w in window.findChildren(QWidget) if isinstance(w, (QLineEdit, QComboBox))]
    assert len(edits) == 2 * (3 + 3) and window not in descendants(window)


def test_rebuilt_forms_leave_no_dead_wrappers(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    assert _rebuilt(window, 10, lambda w: descendants(w, QWidget)) == 0
    # the walk it replaces: a dead wrapper for each of Qt's own widgets in each form it passed
    assert _rebuilt(window, 10, lambda w: w.findChildren(QWidget)) >= 10 * 3
