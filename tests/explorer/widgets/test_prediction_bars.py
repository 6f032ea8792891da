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
