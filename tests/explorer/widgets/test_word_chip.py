"""A word of the user's text as a button: a pasted run of 3,000 letters makes a button of a few words' width that
says the whole word in its tooltip and acts on the whole word, and the panels that show such buttons stay inside
the window (the lens's panel was laid out 22,000 px wide, far past the window's edge)."""

from PySide6.QtWidgets import QToolButton, QWidget

from explorer.widgets.word_chip import CHIP_CHARS, chip_word, word_chip
from tests.conftest import settle_layout

LONG = "a" * 3000


def test_a_long_word_shows_its_start_and_keeps_the_whole_word(qtbot):
    short, long, amp = word_chip("bank"), word_chip(LONG), word_chip("AT&T")
    for chip in (short, long, amp):
        qtbot.addWidget(chip)
    assert short.text() == "bank" and short.toolTip() == "" and chip_word(short) == "bank"
    assert len(long.text()) == CHIP_CHARS and long.text().endswith("…") and long.toolTip() == LONG
    assert chip_word(long) == LONG
    assert long.sizeHint().width() < 20 * short.sizeHint().width()  # (the whole word: 250 times as wide)
    assert amp.text() == "AT&&T" and chip_word(amp) == "AT&T"  # shown with its ampersand, not as a shortcut
    assert chip_word(QToolButton()) is None and chip_word(None) is None


def descendants_wider_than(widget: QWidget, width: int) -> list[str]:
    return [type(w).__name__ for w in widget.findChildren(QWidget) if w.isVisible() and w.width() > width]


def test_the_lens_with_a_word_longer_than_a_line_stays_inside_the_window_and_selects_the_whole_word(qtbot):
    from explorer.main_window import MainWindow
    from explorer.session import Session

    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.resize(1200, 760)
    window.show()
    panel = window.polysemy
    panel.sentences.setPlainText(f"We sat on the bank {LONG} of the river.")

    def chips() -> dict[str | None, QToolButton]:
        return {chip_word(c): c for c in panel.findChildren(QToolButton)}

    qtbot.waitUntil(lambda: LONG in chips(), timeout=5_000)
    settle_layout()
    assert window.width() == 1200 and descendants_wider_than(panel, window.width()) == []
    chips()[LONG].click()
    assert panel.word == LONG and chips()[LONG].isChecked() and not chips()["bank"].isChecked()


def test_the_masked_views_word_buttons_mask_the_whole_long_word(qtbot):
    from explorer.main_window import MainWindow
    from explorer.session import Session

    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.resize(1200, 760)
    window.show()
    window.tabs.setCurrentWidget(window.predictions)
    masked = window.predictions.masked
    masked.text.setText(f"The {LONG} river.")
    qtbot.waitUntil(lambda: any(chip_word(c) == LONG for c in masked.findChildren(QToolButton)), timeout=5_000)
    settle_layout()
    chip = next(c for c in masked.findChildren(QToolButton) if chip_word(c) == LONG)
    assert chip.width() < window.width() // 2
    chip.click()
    assert masked.text.text() == "The [MASK] river."
