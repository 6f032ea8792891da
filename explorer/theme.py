"""Light and dark themes (Fusion palettes, pyqtgraph backgrounds) and the presentation zoom."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor, QFont, QPalette

BASE_POINT_SIZE: dict[str, float] = {}


def apply_theme(app: Any, name: str) -> None:
    import pyqtgraph as pg

    app.setStyle("Fusion")
    palette = QPalette()
    if name == "dark":
        colours = {QPalette.ColorRole.Window: "#2b2b2b", QPalette.ColorRole.WindowText: "#e6e6e6",
                   QPalette.ColorRole.Base: "#1e1e1e", QPalette.ColorRole.AlternateBase: "#2b2b2b",
                   QPalette.ColorRole.Text: "#e6e6e6", QPalette.ColorRole.Button: "#3a3a3a",
                   QPalette.ColorRole.ButtonText: "#e6e6e6", QPalette.ColorRole.Highlight: "#2f65ca",
                   QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.ToolTipBase: "#3a3a3a",
                   QPalette.ColorRole.ToolTipText: "#e6e6e6"}
        for role, colour in colours.items():
            palette.setColor(role, QColor(colour))
        background, foreground = "#1e1e1e", "#d0d0d0"
    else:
        palette = app.style().standardPalette()
        background, foreground = "w", "#333333"
    app.setPalette(palette)
    pg.setConfigOptions(background=background, foreground=foreground)
    for widget in app.allWidgets():
        if isinstance(widget, pg.GraphicsView):  # plots, heat maps and grids: background, axes, legends
            widget.setBackground(background)
            for item in widget.items():
                if isinstance(item, pg.AxisItem):
                    item.setTextPen(foreground)
                    item.setPen(foreground)
                elif isinstance(item, pg.LegendItem):
                    item.setLabelTextColor(foreground)
                    for _, label in item.items:
                        label.setText(label.text, color=foreground)


def apply_zoom(app: Any, level: int) -> None:
    """Presentation zoom: each level scales fonts by 15%."""
    font = app.font()
    base = BASE_POINT_SIZE.setdefault("size", font.pointSizeF() if font.pointSizeF() > 0 else 10.0)
    font = QFont(font)
    font.setPointSizeF(max(6.0, base * (1.15 ** level)))
    app.setFont(font)
    import pyqtgraph as pg

    for widget in app.allWidgets():  # plot axes keep their own fonts: give them the zoomed one
        if isinstance(widget, pg.GraphicsView):
            for item in widget.items():
                if isinstance(item, pg.AxisItem):
                    item.setStyle(tickFont=font)
                    item.label.setFont(font)
