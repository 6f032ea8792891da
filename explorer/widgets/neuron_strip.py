"""Under the direct table, for an MLP's cell clicked: what that layer's MLP writes straight into the logits, neuron by
neuron (engine.api.mlp_neurons) — the neurons that write the most either way, a cell each, red for the word and blue
against it, and the note says how the MLP's cell adds up."""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from explorer.widgets.row_strip import RowStrip

SHOWN = 12  # the neurons given a cell


def neurons_text(name: str, result: Any) -> str:
    strongest = result.strongest(3)
    most = ", ".join(f"#{n} {result.effect[n]:+.2f}" for n in strongest)
    return (f"What {name}'s layer {result.layer + 1} MLP writes straight into the logits, neuron by neuron: "
            f"{result.total:+.2f} of {result.explained} from its {result.effect.shape[0]:,} neurons and its bias "
            f"({result.bias:+.2f}); most {most}.")


class NeuronStrip(RowStrip):
    """One row of cells, a neuron each: the ``SHOWN`` that write the most, for the word or against it."""

    neuron_chosen = Signal(object, int, int)  # (the model, layer from 0, neuron): a neuron's cell clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("", "Each neuron: its output here times its column of the MLP's output projection, read "
                         "through the final norm and the head as a head's output is. Click a neuron to see the "
                         "sentences where it fires most; click a head above to see it token by token again.",
                         "mlp-neurons", parent)
        self._handle: Any = None  # (weakly: an unloaded model goes)
        self.chosen: list[int] = []  # the neuron of each cell
        self.table.cell_clicked.connect(self._clicked)

    def _clicked(self, _row: int, column: int) -> None:
        handle = self._handle() if self._handle is not None else None
        if self.result is not None and handle is not None and 0 <= column < len(self.chosen):
            self.neuron_chosen.emit(handle, self.result.layer, self.chosen[column])

    def ask(self, handle: Any, text: str, layer: int, target: str, foil: str) -> None:  # type: ignore[override]
        """Layer ``layer``'s MLP (from 0) of ``handle``, neuron by neuron; a newer question supersedes."""
        self._handle = weakref.ref(handle)
        super().ask((handle.name, text, layer, target, foil),
                    f"reading {handle.name}'s layer {layer + 1} MLP neuron by neuron…",
                    functools.partial(handle.mlp_neurons, text, layer, target or None, foil or None))

    def show_answer(self, asked: tuple[Any, ...], result: Any) -> None:
        chosen = self.chosen = sorted(result.strongest(SHOWN), key=lambda n: -float(result.effect[n]))
        tips = [f"{asked[0]}, layer {result.layer + 1}'s MLP, neuron {n}: its output here {result.activation[n]:+.3f}, "
                f"writes {result.effect[n]:+.3f} of {result.explained} straight into the logits" for n in chosen]
        self.fill(np.array([float(result.effect[n]) for n in chosen]), tuple(f"#{n}" for n in chosen), tips,
                  f"layer {result.layer + 1} MLP")
        self.note.setText(neurons_text(asked[0], result))
