"""The app's tab widgets, in document mode: no frame drawn around the pages.

Qt's Fusion style paints a tab widget's frame by filling the whole page area with the frame's colour before the
page paints over it, and the window repaints the tab widgets under every change in a page. Measured in the chaos
bench (bench/robustness/event_timer.py), the main tab widget's paint events were the GUI thread's largest single
cost in its stalls; without the frame the whole window repaints in half the time (7.7 → 3.4 ms at rest, 10.5 →
2.8 ms beside a busy worker; bench/robustness/RESULTS.md)."""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QWidget


def tab_widget(parent: QWidget | None = None) -> QTabWidget:
    """A tab widget whose pages sit on the window's background, with no frame painted around them."""
    tabs = QTabWidget(parent)
    tabs.setDocumentMode(True)
    return tabs
