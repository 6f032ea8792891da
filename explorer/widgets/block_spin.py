"""Attention layers counted the way the rest of the app counts layers. The lens, the layer similarity and the
polysemy view number hidden states: 0 is the input (the embeddings) and layer k is the output of the k-th
block. A block's attention is what makes that block's output, so the first block's attention is shown as
"layer 1", the same number its output has in the lens. Inside, layers stay indexed from 0 (the models'
tensors, the engine's head tables, a scene's ``layer``); only what is shown is counted from 1."""

from __future__ import annotations

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QSpinBox


def block_label(index: int) -> str:
    """The name shown for the attention of block ``index`` (counted from 0): "layer 1" for the first."""
    return f"layer {index + 1}"


class BlockSpin(QSpinBox):
    """A spin box over block indices (from 0) that shows and takes the layer numbers the app shows (from 1)."""

    def __init__(self) -> None:
        super().__init__()
        self.setRange(0, 0)
        self.lineEdit().setText(self.textFromValue(self.value()))  # (the text Qt made before this class's own)
        self.setToolTip("layer k: the attention of the k-th block, whose output is layer k in the lens "
                        "(layer 0 there: the embeddings)")

    def textFromValue(self, value: int) -> str:  # noqa: N802 (Qt's name)
        return str(value + 1)

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        digits = text.strip()
        if not digits:
            return QValidator.State.Intermediate, text, pos
        if not digits.isdigit():
            return QValidator.State.Invalid, text, pos
        inside = self.minimum() <= int(digits) - 1 <= self.maximum()
        return (QValidator.State.Acceptable if inside else QValidator.State.Intermediate), text, pos

    def valueFromText(self, text: str) -> int:  # noqa: N802 (Qt's name)
        digits = text.strip()
        return int(digits) - 1 if digits.isdigit() else self.value()  # (what ``validate`` lets through)
