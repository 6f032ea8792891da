"""The recorded fine-tuning curves and their key are readable on the background they are drawn on, in either
theme: the frozen run's green was 3.4:1 as text on white, a fourth run's brown (#8c564b) 2.8:1 as a line on the
dark theme's grey."""

import re

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from engine import api
from explorer.widgets.readable import MARKS, TEXT, contrast


def test_the_curves_and_their_key_are_readable_in_either_theme(qtbot, tmp_path):
    from explorer.panels.curves import CurvesPanel
    from explorer.scenes import check_scene
    from explorer.session import Session
    from explorer.theme import apply_theme

    curves = api.FinetuneCurves("topics", "bert", "accuracy", [
        api.Curve("pretrained", "full", [32.0, 64.0], [0.5, 0.8]),
        api.Curve("frozen", "frozen", [32.0, 64.0], [0.4, 0.5]),
        api.Curve("scratch", "scratch", [32.0, 64.0], [0.3, 0.4]),
        api.Curve("a", "other", [32.0, 64.0], [0.2, 0.3]), api.Curve("b", "other", [32.0, 64.0], [0.2, 0.3]),
        api.Curve("c", "other", [32.0, 64.0], [0.1, 0.2])], made_by="a test")
    path = tmp_path / "c.json"
    path.write_text(curves.to_json(), encoding="utf-8")
    panel = CurvesPanel(Session())
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.waitSignal(panel.shown, timeout=10_000):
        panel.apply_scene(check_scene({"panel": "curves", "curves": str(path)}, "a test's scene"))

    def lowest():
        plot = panel.plot.backgroundBrush().color()
        lines = min(contrast(item.opts["pen"].color(), plot) for item in panel.plot.getPlotItem().listDataItems())
        key = re.findall(r"color:(#[0-9a-fA-F]{6})", panel.summary.text())
        assert len(key) == 6
        text = panel.summary.palette().color(QPalette.ColorRole.Window)
        return lines, min(contrast(c, text) for c in key)

    lines, key = lowest()
    assert lines >= MARKS and key >= TEXT
    app = QApplication.instance()
    try:
        apply_theme(app, "dark")
        # drawn again once the new palette has reached the widgets (with their events)
        qtbot.waitUntil(lambda: panel.summary.palette().color(QPalette.ColorRole.Window).lightness() < 60, timeout=2_000)
        assert panel.plot.backgroundBrush().color().lightness() < 60
        def readable_now():
            lines, key = lowest()
            return lines >= MARKS and key >= TEXT

        qtbot.waitUntil(readable_now, timeout=2_000)
    finally:
        apply_theme(app, "light")


def test_in_a_talk_the_axis_labels_keep_clear_of_the_numbers(qtbot, tmp_path):
    """The talk's last slide: "validation accuracy" lay over the y axis's "0.6" (pyqtgraph sized the axis for the
    numbers it drew before the talk's big font)."""
    from PySide6.QtGui import QFontMetrics

    from explorer.panels.curves import CurvesPanel
    from explorer.scenes import check_scene
    from explorer.session import Session

    curves = api.FinetuneCurves("topics", "bert", "accuracy", [
        api.Curve("pretrained", "full", [32.0, 64.0], [0.5, 0.98]),
        api.Curve("scratch", "scratch", [32.0, 64.0], [0.3, 0.4])], made_by="a test")
    path = tmp_path / "c.json"
    path.write_text(curves.to_json(), encoding="utf-8")
    panel = CurvesPanel(Session())
    qtbot.addWidget(panel)
    panel.resize(1600, 900)
    panel.show()
    with qtbot.waitSignal(panel.shown, timeout=10_000):
        panel.apply_scene(check_scene({"panel": "curves", "curves": str(path)}, "a test's scene"))
    left, bottom = (panel.plot.getPlotItem().getAxis(n) for n in ("left", "bottom"))
    narrow = left.width()
    panel.set_presenting(True)
    qtbot.wait(50)
    font = left.style["tickFont"]
    metrics = QFontMetrics(font)
    numbers, label = metrics.horizontalAdvance("0.00"), left.label.boundingRect().height()
    assert font.pixelSize() > 20 and left.width() >= numbers + label + left.style["tickTextOffset"][0] > narrow
    assert bottom.height() >= metrics.height() + bottom.label.boundingRect().height()
