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
