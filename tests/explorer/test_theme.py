"""The presentation zoom and the themes: laid out before anything is painted, nothing redone when nothing changes,
the plots of pages not shown recoloured as they are shown."""


def test_a_zoom_lays_the_window_out_for_its_font_before_anything_is_painted(qtbot):
    from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

    from explorer.theme import apply_zoom

    window = QWidget()
    layout = QVBoxLayout(window)
    label = QLabel("bank by the river")
    layout.addWidget(label)
    layout.addStretch()
    qtbot.addWidget(window)
    window.resize(400, 300)
    window.show()
    qtbot.waitExposed(window)
    before = label.height()
    try:
        apply_zoom(QApplication.instance(), 6)
        # no event delivered since: the label already has the height of its new font, so the first paint is the
        # right one (Qt alone painted the old geometry first and again after each pass of the layouts)
        assert label.height() == label.sizeHint().height() > before
    finally:
        apply_zoom(QApplication.instance(), 0)



def test_a_zoom_lets_timers_and_input_run_between_its_relayout_and_its_repaint(qtbot):
    """A zoom's font change, relayout and the paint of the new geometry were one freeze of the event loop (on two
    busy cores, up to 340 ms in the chaos bench). A timer due as the zoom's call ends now runs before the window is
    painted; the window is then painted once, in the new font and the new geometry; a window deleted before its
    paint costs nothing, and one with a font of its own (a talk's) is not held."""
    import time

    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

    from explorer.theme import apply_zoom

    app = QApplication.instance()
    order: list[tuple[str, float, int]] = []

    class Paints(QObject):
        def eventFilter(self, watched, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Paint:
                order.append(("paint", watched.font().pointSizeF(), watched.height()))
            return False

    windows = []
    for _ in range(2):
        window = QWidget()
        layout = QVBoxLayout(window)
        label = QLabel("bank by the river")
        layout.addWidget(label)
        layout.addStretch()
        if not windows:  # (the second is deleted by the test)
            qtbot.addWidget(window)
        window.resize(300, 200)
        window.show()
        qtbot.waitExposed(window)
        windows.append((window, label))
    own = QLabel("a talk keeps its own font")
    own.setFont(QFont(own.font().family(), 30))
    qtbot.addWidget(own)
    own.show()
    qtbot.waitExposed(own)
    label = windows[0][1]
    paints = Paints()
    label.installEventFilter(paints)
    qtbot.wait(50)
    order.clear()  # (the paints of their showing)
    before, height = label.font().pointSizeF(), label.height()
    timer = QTimer(singleShot=True, interval=1)
    timer.timeout.connect(lambda: order.append(("timer", label.font().pointSizeF(), label.height())))
    try:
        timer.start()
        apply_zoom(app, 3)
        assert not windows[0][0].updatesEnabled() and own.updatesEnabled()
        assert label.font().pointSizeF() > before * 1.4  # the font delivered within the call
        assert label.height() > height  # and the layout settled: nothing painted yet
        time.sleep(0.01)  # (the timer is due before the event loop runs again)
        windows[1][0].deleteLater()  # gone before its paints are let go
        qtbot.waitUntil(lambda: any(kind == "paint" for kind, _, _ in order), timeout=5000)
        assert order[0][0] == "timer"
        assert all(size > before * 1.4 and h == label.sizeHint().height() > height
                   for kind, size, h in order if kind == "paint")  # only the new font and geometry painted
        assert windows[0][0].updatesEnabled() and label.updatesEnabled()
    finally:
        apply_zoom(app, 0)
        app.processEvents()
    assert windows[0][0].updatesEnabled()


def brightest_text(button) -> int:
    image = button.grab().toImage()
    return max(image.pixelColor(x, y).lightness() for x in range(image.width() // 4, 3 * image.width() // 4)
               for y in range(image.height() // 4, 3 * image.height() // 4))


def test_a_control_that_is_off_looks_off_on_the_dark_theme_and_in_a_talk(qtbot):
    """Setting a role's colour sets it for every state: on the dark theme a greyed-out Cancel was drawn in the
    same light grey as an active one, and on a talk's black in the same white."""
    from PySide6.QtWidgets import QApplication, QHBoxLayout, QPushButton, QWidget

    from explorer.theme import HIGH_CONTRAST, apply_theme, palette_with

    window = QWidget()
    row = QHBoxLayout(window)
    on, off = QPushButton("Cancel"), QPushButton("Cancel")
    off.setEnabled(False)
    row.addWidget(on)
    row.addWidget(off)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    app = QApplication.instance()
    try:
        apply_theme(app, "dark")
        app.processEvents()  # (the application's palette reaches the widgets with its events)
        assert brightest_text(off) < brightest_text(on) - 60
    finally:
        apply_theme(app, "light")
    window.setPalette(palette_with(window.palette(), HIGH_CONTRAST))
    assert brightest_text(off) < brightest_text(on) - 60


def _changes_seen(widget):
    """An event filter on ``widget`` counting the changes of palette and font Qt delivers to it."""
    from PySide6.QtCore import QEvent, QObject

    class Count(QObject):
        def __init__(self) -> None:
            super().__init__(widget)
            self.seen = {"palette": 0, "font": 0}

        def eventFilter(self, watched, event):  # noqa: N802 - Qt's name
            if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
                self.seen["palette"] += 1
            elif event.type() in (QEvent.Type.FontChange, QEvent.Type.ApplicationFontChange):
                self.seen["font"] += 1
            return False

    count = Count()
    widget.installEventFilter(count)
    return count.seen


def test_the_theme_or_zoom_already_shown_redoes_nothing_and_a_new_one_reaches_every_widget(qtbot):
    """The chaos bench's monkey chose the theme shown as often as the other, and the zoom at its limits: each plot's
    axes were recoloured or given the font again (its panel redrew its curves for the "new" background), and the
    window's layouts settled, for no change."""
    from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

    from explorer.theme import apply_theme, apply_zoom
    from explorer.widgets.plot_view import RecolouredPlot, without_background_cache

    window = QWidget()
    column = QVBoxLayout(window)
    label, plot = QLabel("bank by the river"), without_background_cache(RecolouredPlot())
    column.addWidget(label)
    column.addWidget(plot)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    app = QApplication.instance()
    apply_theme(app, "light")
    apply_zoom(app, 0)
    app.processEvents()
    seen, recoloured = _changes_seen(label), []
    plot.background_changed.connect(lambda: recoloured.append(1))
    font = getattr(plot, "zoom_font_given", None)
    try:
        apply_theme(app, "light")
        apply_zoom(app, 0)
        app.processEvents()
        assert seen == {"palette": 0, "font": 0} and not recoloured
        assert getattr(plot, "zoom_font_given", None) is font  # its axes not given the font again
        apply_theme(app, "dark")
        apply_zoom(app, 2)
        app.processEvents()
        assert seen["palette"] >= 1 and seen["font"] >= 1 and recoloured
        assert label.palette().window().color().lightness() < 80
        assert plot.zoom_font_given.pointSizeF() > font.pointSizeF() * 1.25
    finally:
        apply_theme(app, "light")
        apply_zoom(app, 0)
    app.processEvents()  # (the application's palette reaches the widgets with its events)
    assert label.palette().window().color().lightness() > 200


def test_a_plot_on_a_page_not_shown_takes_the_theme_as_it_is_shown(qtbot):
    from PySide6.QtWidgets import QApplication, QTabWidget

    from explorer.theme import apply_theme
    from explorer.widgets.loss_plot import LossPlot

    tabs = QTabWidget()
    shown, hidden = LossPlot(y_label="loss", empty_text="nothing yet"), LossPlot(y_label="loss", empty_text="nothing")
    tabs.addTab(shown, "shown")
    tabs.addTab(hidden, "hidden")
    qtbot.addWidget(tabs)
    tabs.show()
    qtbot.waitExposed(tabs)
    app = QApplication.instance()

    def background(view) -> int:
        return view.backgroundBrush().color().lightness()

    def axis_text(view) -> int:
        return view.getPlotItem().getAxis("left").textPen().color().lightness()

    try:
        apply_theme(app, "dark")
        assert background(shown) < 80 and axis_text(shown) > 150  # at once
        assert background(hidden) > 200  # not yet: nobody sees it
        tabs.setCurrentIndex(1)
        assert background(hidden) < 80 and axis_text(hidden) > 150  # as it is shown, before it is painted
        apply_theme(app, "light")
        assert background(hidden) > 200 and axis_text(hidden) < 100
        tabs.setCurrentIndex(0)
        assert background(shown) > 200 and axis_text(shown) < 100
    finally:
        apply_theme(app, "light")
