"""Under the direct table, for an MLP's cell clicked: what that layer's MLP writes straight into the logits, neuron by
neuron (engine.api.mlp_neurons) — the neurons that write the most either way, a cell each, red for the word and blue
against it, and the note says how the MLP's cell adds up."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.failures import Outcome, attempt
from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export
from explorer.widgets.lens_grid import LayerTokenTable, fit_one_row

SHOWN = 12  # the neurons given a cell


def neurons_text(name: str, result: Any) -> str:
    strongest = result.strongest(3)
    most = ", ".join(f"#{n} {result.effect[n]:+.2f}" for n in strongest)
    return (f"What {name}'s layer {result.layer + 1} MLP writes straight into the logits, neuron by neuron: "
            f"{result.total:+.2f} of {result.explained} from its {result.effect.shape[0]:,} neurons and its bias "
            f"({result.bias:+.2f}); most {most}.")


class NeuronStrip(QWidget):
    """One row of cells, a neuron each: the ``SHOWN`` that write the most, for the word or against it."""

    shown = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self.asked: tuple[str, str, int, str, str] | None = None  # (model, text, layer, target, foil)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.table = LayerTokenTable()
        self.table.setToolTip("Each neuron: its output here times its column of the MLP's output projection, read "
                              "through the final norm and the head as a head's output is. Click a head above to see "
                              "it token by token again.")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table)
        add_csv_export(self.table, self.table.export_rows, "mlp-neurons", png=True)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._failed)

    def ask(self, handle: Any, text: str, layer: int, target: str, foil: str) -> None:
        """Layer ``layer``'s MLP (from 0) of ``handle``, neuron by neuron; a newer question supersedes."""
        asked = (handle.name, text, layer, target, foil)
        if asked == self.asked and self.result is not None:
            return
        self.asked = asked
        self.note.setText(f"reading {handle.name}'s layer {layer + 1} MLP neuron by neuron…")
        work = functools.partial(attempt, functools.partial(handle.mlp_neurons, text, layer, target or None,
                                                            foil or None))
        self.runner.submit(lambda: (asked, work()))

    def _failed(self, message: str) -> None:
        self.result = None
        self.table.setRowCount(0)
        self.note.setText(message)

    def _show(self, answer: tuple[tuple[str, str, int, str, str], Outcome[Any]]) -> None:
        asked, outcome = answer
        if asked != self.asked:
            return  # another MLP clicked since: its answer follows
        if outcome.failed:
            self._failed(outcome.message)
            return
        result: Any = outcome.value
        self.result = result
        chosen = sorted(result.strongest(SHOWN), key=lambda n: -float(result.effect[n]))
        effect = np.array([[float(result.effect[n]) for n in chosen]])
        span = float(np.abs(effect).max()) or 1.0
        tips = [[f"{asked[0]}, layer {result.layer + 1}'s MLP, neuron {n}: its output here {result.activation[n]:+.3f}, "
                 f"writes {result.effect[n]:+.3f} of {result.explained} straight into the logits" for n in chosen]]
        self.table.show_cells([[f"{v:+.2f}" for v in effect[0]]], effect / span, tuple(f"#{n}" for n in chosen), tips,
                              signed=True, labels=[f"layer {result.layer + 1} MLP"])
        self.table.values = effect  # the export gives the effects
        fit_one_row(self.table)
        self.note.setText(neurons_text(asked[0], result))
        self.shown.emit()
