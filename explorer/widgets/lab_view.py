"""What a prediction view (Masked LM, Next token) does to host the lab (explorer/widgets/lens_lab.py): the switch
that opens it, a scene's wait for it, and the scene fields it opens and keeps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QWidget

from explorer.widgets.lens_lab import LensLab


class LabView:
    """What a prediction view (Masked LM, Next token) does to host the lab: its switch and the lab (made by
    ``make_lab``), a scene's wait for it (``shown`` once the lab shows what the scene asked), the scene
    fields it opens and keeps. The view has ``compare``, ``model2``, ``session``, ``query`` and ``shown``."""

    shown: Any
    compare: Any
    model2: Any
    session: Any
    query: Callable[[], None]

    def make_lab(self) -> None:
        self.lens_switch = QCheckBox("The lab:")
        about = QLabel("what every layer predicts at every token, and why (lens, causal tracing, attribution, heads)")
        about.setWordWrap(True)  # (a check box's text cannot wrap: at a talk's zoom it set the view's width)
        self.lab_row = QWidget()  # the switch and what it opens, for the view's layout
        row = QHBoxLayout(self.lab_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.lens_switch)
        row.addWidget(about, 1)
        self.lens = LensLab()
        self.lens.setVisible(False)
        self.lab_scene = False  # a scene asked for the lab: shown waits for it (lens.ready)
        self.wanted_compare = ""  # a scene's compared model, chosen as it loads (until B is picked by hand)
        self.model2.activated.connect(self._compare_picked)
        self.lens.ready.connect(self._lab_ready)
        self.lens_switch.toggled.connect(self._lens_toggled)

    def _compare_picked(self, _index: int) -> None:
        """B picked by hand: a scene's compared model let go (the view's and the lab's wait)."""
        self.wanted_compare = self.lens.scene_compare = ""

    def _lens_toggled(self, on: bool) -> None:
        self.lens.setVisible(on)
        self.query()

    def _lab_ready(self) -> None:
        if self.lab_scene:
            self.lab_scene = bool(self.lens.wanted)  # a stand-in's answer: the scene's model is still awaited
            self.shown.emit()

    def open_lab(self, scene: Any) -> None:
        """A scene's lab: the compared model, then the lab open on what the scene asks."""
        self.wanted_compare = scene.compare or ""
        self.lab_scene = bool(scene.lab)
        if scene.compare:
            self.model2.set_models(self.session.models, prefer=scene.compare)
        self.compare.setChecked(bool(scene.compare))
        if scene.lab:
            self.lens.apply(scene.lab, scene.measure, scene.show, scene.subject, scene.lens,
                            model=scene.contextual_model or "", contrast=scene.contrast, target=scene.target,
                            foil=scene.foil, compare=scene.compare or "", by_words=bool(scene.by_words),
                            head=scene.head, mean_over=scene.mean_over, effect=scene.effect)
        self.lens_switch.setChecked(bool(scene.lab))

    def lab_fields(self) -> dict[str, Any]:
        """A saved scene's lab fields (none while the lab is closed)."""
        fields: dict[str, Any] = {"compare": self.model2.currentText() if self.compare.isChecked() else None}
        if self.lens_switch.isChecked():
            fields.update(self.lens.state())
        return fields
