"""An attention head's toggle takes the font of the window around it (a talk's 28 px type, the zoom) and, while
its head is shown, the colour its lines have on that background. With a style sheet of its own it kept the
application's 9-point font in a talk, beside 28-pixel text."""

from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QHBoxLayout, QWidget

from explorer.widgets.head_chip import HeadChip
from explorer.widgets.readable import MARKS, contrast


def test_a_head_chip_takes_the_font_around_it_and_follows_a_zoom(qtbot):
    window = QWidget()
    big = QFont(window.font())
    big.setPixelSize(28)  # a talk's body type (explorer/talk/window.py BODY_PX)
    window.setFont(big)
    row = QHBoxLayout(window)
    qtbot.addWidget(window)
    window.show()
    chips = [HeadChip(head, colour) for head, colour in enumerate(["#1f77b4", "#393b79"])]
    for chip in chips:
        chip.setChecked(True)
        row.addWidget(chip)
    assert all(chip.font().pixelSize() == 28 and chip.sizeHint().height() >= 28 for chip in chips)
    bigger = QFont(big)
    bigger.setPixelSize(40)
    window.setFont(bigger)
    assert all(chip.font().pixelSize() == 40 for chip in chips)


def test_a_shown_heads_chip_has_its_lines_colour_and_a_number_that_reads_on_it(qtbot):
    from explorer.theme import HIGH_CONTRAST, palette_with

    window = QWidget()
    window.setPalette(palette_with(window.palette(), HIGH_CONTRAST))  # a talk's black
    row = QHBoxLayout(window)
    navy, olive = HeadChip(10, "#393b79"), HeadChip(8, "#bcbd22")
    for chip in (navy, olive):
        chip.setChecked(True)
        row.addWidget(chip)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    for chip in (navy, olive):
        image = chip.grab().toImage()
        fill = image.pixelColor(3, image.height() // 2)
        assert fill.name() == chip.shown_colour()
        assert contrast(fill, "#0b0b0b") >= MARKS  # (the navy itself is 2.0:1 on a talk's black)
        pixels = {image.pixelColor(x, y).name() for x in range(image.width()) for y in range(image.height())}
        number = max(pixels, key=lambda c: contrast(QColor(c), fill))  # the number's darkest or lightest pixel
        assert contrast(number, fill) >= 4.5
    assert navy.shown_colour() != "#393b79"
    navy.setChecked(False)  # a hidden head: the plain button, not the colour
    image = navy.grab().toImage()
    assert image.pixelColor(3, image.height() // 2).name() != navy.shown_colour()
