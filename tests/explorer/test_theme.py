"""The presentation zoom lays the window out for its font before anything is painted."""


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
