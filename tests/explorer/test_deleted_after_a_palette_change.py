"""A panel deleted right after a change of palette is freed, with the models it holds. The panels recolour what
they show at the next turn of the event loop; ``QTimer.singleShot(0, panel, panel.method)`` did that, and PySide
6.11 keeps that callable for good when its context is deleted before it fires: a closed talk window's lens panels
stayed alive with every model they had seen (the chaos bench's census: 25 models, 2.5 GB, after a warm-up)."""

import gc
import weakref

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QWidget


def made(kind: str, parent: QWidget) -> QWidget:
    from explorer.session import Session

    if kind == "polysemy":
        from explorer.panels.polysemy.panel import PolysemyPanel

        return PolysemyPanel(Session(), parent=parent)
    if kind == "curves":
        from explorer.panels.curves import CurvesPanel

        return CurvesPanel(Session(), parent=parent)
    from explorer.widgets.settings_form import SettingsForm

    form = SettingsForm(parent)
    form.set_kind("gpt", "tiny")
    return form


@pytest.mark.parametrize("kind", ["polysemy", "curves", "settings"])
def test_a_panel_deleted_right_after_a_palette_change_is_freed(qtbot, kind):
    from explorer.theme import HIGH_CONTRAST, palette_with

    window = QWidget()
    panel = made(kind, window)
    window.show()
    qtbot.waitExposed(window)
    gone = weakref.ref(panel)
    del panel
    window.setPalette(palette_with(window.palette(), HIGH_CONTRAST))  # (a talk's black: the panel recolours soon)
    window.deleteLater()  # ... but it goes first
    del window
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.wait(50)
    gc.collect()
    assert gone() is None
