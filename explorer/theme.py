"""Light and dark themes (Fusion palettes, pyqtgraph backgrounds) and the presentation zoom."""

from __future__ import annotations

import contextlib
from typing import Any

from PySide6.QtGui import QColor, QFont, QPalette

from explorer.window_work import window_working

BASE_POINT_SIZE: dict[str, float] = {}


Role = QPalette.ColorRole
DARK = {Role.Window: "#2b2b2b", Role.WindowText: "#e6e6e6", Role.Base: "#1e1e1e", Role.AlternateBase: "#2b2b2b",
        Role.Text: "#e6e6e6", Role.Button: "#3a3a3a", Role.ButtonText: "#e6e6e6", Role.Highlight: "#2f65ca",
        Role.HighlightedText: "#ffffff", Role.ToolTipBase: "#3a3a3a", Role.ToolTipText: "#e6e6e6",
        Role.PlaceholderText: "#9a9a9a"}
HIGH_CONTRAST = {Role.Window: "#000000", Role.WindowText: "#ffffff", Role.Base: "#0b0b0b",  # a talk, on a projector
                 Role.AlternateBase: "#1a1a1a", Role.Text: "#ffffff", Role.Button: "#262626",
                 Role.ButtonText: "#ffffff", Role.Highlight: "#ffd400", Role.HighlightedText: "#000000",
                 Role.PlaceholderText: "#bbbbbb", Role.Link: "#7ab8ff"}
TALK_PLOTS = ("#000000", "#ffffff")  # a talk's plots: the slide's black, white axes and notes


# what a control that is off writes with, on the dark theme's and a talk's backgrounds: setting a role's colour sets
# it for every state, and a greyed-out "Cancel" read exactly as an active one on both
DISABLED_ON_DARK = "#7f7f7f"
_DISABLED_ROLES = (Role.WindowText, Role.Text, Role.ButtonText)


def palette_with(base: QPalette, colours: dict[QPalette.ColorRole, str]) -> QPalette:
    """``base`` with the given roles' colours replaced; on a dark background the text of a control that is off
    stays grey (``DISABLED_ON_DARK``)."""
    palette = QPalette(base)
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    if palette.color(Role.Window).lightness() < 128:
        for role in _DISABLED_ROLES:
            palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(DISABLED_ON_DARK))
    return palette


def apply_theme(app: Any, name: str) -> None:
    """The theme ``name`` ("light" or "dark") on every window but a talk's. Choosing the theme already shown does
    nothing: Qt ignores a palette equal to the application's, and the plots already in its colours are left alone
    (recolouring every plot's axes again took half as long as a change of theme)."""
    import pyqtgraph as pg

    from explorer.widgets.plot_view import LIGHT_PLOTS, set_theme_colours

    window_working()  # (the workers' models wait until it is painted: explorer.window_work)
    if app.style().name().lower() != "fusion":  # (setting it again polishes every widget anew: a change of theme
        app.setStyle("Fusion")  # took several times as long)
    if name == "dark":
        palette = palette_with(QPalette(), DARK)
        background, foreground = "#1e1e1e", "#d0d0d0"
    else:
        palette = app.style().standardPalette()
        background, foreground = LIGHT_PLOTS["background"], LIGHT_PLOTS["foreground"]
    app.setPalette(palette)
    pg.setConfigOptions(background=background, foreground=foreground)
    # plots, heat maps and grids: background, axes, legends (a talk's keep its black); those shown now at once,
    # the others as they are next shown
    set_theme_colours(background, foreground)


def apply_zoom(app: Any, level: int) -> None:
    """Presentation zoom: each level scales fonts by 15%. The zoom already shown does nothing (the plots' axes were
    given the same font again and the window's layouts settled: a third of a zoom's time, for no change)."""
    from explorer.widgets.plot_view import plot_font, set_plot_font

    font = app.font()
    base = BASE_POINT_SIZE.setdefault("size", font.pointSizeF() if font.pointSizeF() > 0 else 10.0)
    font = QFont(font)
    font.setPointSizeF(max(6.0, base * (1.15 ** level)))
    if font == app.font() and font == plot_font():
        return
    window_working()  # (the workers' models wait until it is painted: explorer.window_work)
    held = hold_paints(app)
    app.setFont(font)
    set_plot_font(font)
    settle_layouts(app)
    paint_after_a_turn(held)


LAYOUT_PASSES = 4  # a font change moves a widget, then its parent's layout, then the window's: 2-3 passes settle it


def settle_layouts(app: Any) -> None:
    """Give the windows the application's new font and lay out what it moved, now, before anything is painted.
    Qt posts the change of font to each window, and the layouts' requests and the repaints with it: the window was
    painted first with the old geometry, then again after each pass of the layouts, and each paint of a plot is a
    Python paint of its axes on the window's thread (bench/robustness/RESULTS.md, "Chaos in the window")."""
    from PySide6.QtCore import QEvent

    app.sendPostedEvents(None, QEvent.Type.ApplicationFontChange)
    for _ in range(LAYOUT_PASSES):
        app.sendPostedEvents(None, QEvent.Type.LayoutRequest)


_HELD: list[Any] = []  # the windows whose paints wait for the event loop's next turn (weak references)


def hold_paints(app: Any) -> list[Any]:
    """The shown windows that take the application's font, their paints held (``setUpdatesEnabled(False)``) until
    ``paint_after_a_turn`` lets them go: a zoom's relayout and the repaint of its new geometry were one freeze of
    the event loop (on the Fine-tune tab beside busy work, 50 ms of relayout and 43 of paint before a 10 ms timer
    could fire: bench/speed/RESULTS.md); as two, input and timers get a turn between them. A window that keeps a
    font of its own (a talk's) is left alone: the zoom changes nothing in it."""
    import weakref

    from PySide6.QtCore import Qt

    held = []
    for window in app.topLevelWidgets():
        if window.isVisible() and window.updatesEnabled() and not window.testAttribute(Qt.WidgetAttribute.WA_SetFont):
            window.setUpdatesEnabled(False)
            held.append(weakref.ref(window))
    return held


def paint_after_a_turn(held: list[Any]) -> None:
    """Let ``held`` windows paint again once the event loop has had a turn (the queued call runs in its next pass
    of posted events; the paint it asks for, in the pass after, with the timers and input between)."""
    from PySide6.QtCore import QTimer

    if not held:
        return
    pending = bool(_HELD)
    _HELD.extend(held)
    if not pending:  # (a second zoom before the first one's paints: one call lets both go)
        QTimer.singleShot(0, _let_paint)


def _let_paint() -> None:
    held, _HELD[:] = list(_HELD), []
    for ref in held:
        window = ref()
        if window is not None:
            with contextlib.suppress(RuntimeError):  # (its C++ side deleted while its paints were held)
                window.setUpdatesEnabled(True)
