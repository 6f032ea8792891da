"""How predicted tokens read in the masked-LM view: a word piece never passes for a word."""

from explorer.panels.predictions.bars import whole_word


def test_a_piece_after_a_space_reads_as_a_piece_and_a_glued_one_completes_its_word():
    assert whole_word("bank", "She went to the ") == "bank"
    assert whole_word("##s", "She went to ") == "…s"  # not "to·s"
    assert whole_word("##ing", "She was runn") == "runn + ing"
    assert whole_word("##s", "") == "…s"
