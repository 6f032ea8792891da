"""The attention's layer box counts as the lens counts (layer k: the k-th block's output, 0: the embeddings)."""

from explorer.widgets.block_spin import BlockSpin, block_label


def test_the_first_block_is_shown_and_typed_as_layer_1(qtbot):
    spin = BlockSpin()
    qtbot.addWidget(spin)
    spin.setMaximum(5)  # six blocks
    assert spin.text() == "1" and spin.value() == 0
    spin.setValue(5)
    assert spin.text() == "6"
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "3")
    spin.interpretText()
    assert spin.value() == 2 and spin.text() == "3"
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "0")  # there is no block before the first: typing 0 does not take
    spin.interpretText()
    assert spin.value() == 2
    assert [block_label(i) for i in range(3)] == ["layer 1", "layer 2", "layer 3"]
