"""How predicted tokens read in the masked-LM view: a word piece never passes for a word."""

from explorer.panels.predictions.bars import whole_word


def test_a_piece_after_a_space_reads_as_a_piece_and_a_glued_one_completes_its_word():
    assert whole_word("bank", "She went to the ") == "bank"
    assert whole_word("##s", "She went to ") == "…s"  # not "to·s"
    assert whole_word("##ing", "She was runn") == "runn + ing"
    assert whole_word("##s", "") == "…s"


def test_small_probabilities_keep_two_digits_so_a_flat_prediction_does_not_read_as_zeros(qtbot):
    """A model that has not learned (a fresh or foreign checkpoint: 1/4,000 each) showed "0.0%" on every row."""
    from explorer.widgets.probability_bars import ProbabilityBars, percent

    assert [percent(p) for p in (0.153, 0.001, 0.00025, 3.3e-5, 1e-9, 0.0)] == \
        ["15.3%", "0.1%", "0.025%", "0.0033%", "<0.0001%", "0.0%"]
    bars = ProbabilityBars()
    qtbot.addWidget(bars)
    bars.set_results("flat", [("", [("cells", 0.00026), (" crit", 0.00025)])])
    assert bars.toPlainText().splitlines()[-2:] == ["cells\t0.026%", " crit\t0.025%"]


def test_a_box_shorter_than_its_bars_ends_at_a_whole_row_and_follows_the_type(qtbot):
    """Above the lab the predictions' box is shorter than its eight rows: its last row showed cut in half (a talk's
    slide 8, "london 0.5%" as half letters). The view ends at a whole row, at any height and after a zoom."""
    from PySide6.QtGui import QFont

    from explorer.widgets.probability_bars import ProbabilityBars, scrolling

    bars = ProbabilityBars()
    area = scrolling(bars)
    qtbot.addWidget(area)
    bars.set_results("minilm-mlm", [("", [(f"word{i}", 0.4 / (i + 1)) for i in range(8)])])
    area.resize(500, 600)
    area.show()
    qtbot.waitExposed(area)
    assert area.viewport().height() >= bars.minimumHeight()  # all of it fits: nothing cut
    assert bars.minimumHeight() > 170
    for height in (100, 113, 127, 140, 155, 170):
        area.resize(500, height)
        qtbot.wait(10)
        ends = bars.row_ends()
        shown = area.viewport().height()
        room = height - 2 * area.frameWidth()
        assert any(abs(shown - end) < 1 for end in ends), (height, shown, ends)  # the view ends where a row does
        assert room - shown < ends[1] - ends[0] + 1  # and no more than a row short of the box
    big = QFont(bars.font())
    big.setPixelSize(28)  # a talk's type: taller rows
    bars.setFont(big)
    qtbot.waitUntil(lambda: bars.minimumHeight() > 300, timeout=2_000)
    area.resize(500, 260)
    qtbot.wait(10)
    assert any(abs(area.viewport().height() - end) < 1 for end in bars.row_ends())
