"""A narrow choice: its box as narrow as a short name, its list as wide as its longest name."""


def test_a_narrow_choice_stays_narrow_and_opens_a_list_that_shows_its_longest_name_whole(qtbot):
    from PySide6.QtWidgets import QComboBox

    from explorer.widgets.choices import narrow_choice

    long_name = "compared: difference of the averages over every head (A − B)"
    wide, narrow = QComboBox(), narrow_choice(QComboBox())
    for combo in (wide, narrow):
        qtbot.addWidget(combo)
        combo.addItems(["steps", long_name])
    assert narrow.minimumSizeHint().width() < wide.minimumSizeHint().width() / 2  # the box stays narrow
    narrow.resize(narrow.minimumSizeHint())
    narrow.show()
    qtbot.waitExposed(narrow)
    narrow.showPopup()
    qtbot.wait(50)
    view = narrow.view()
    assert view.width() >= view.fontMetrics().horizontalAdvance(long_name)  # the list shows the long name whole
    narrow.hidePopup()
