"""What the Masked LM and Next token views share: one line of text asked of a model, and of a second one to
compare with (their pickers follow the loaded models; a scene sets the line)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explorer.widgets.model_picker import compared_preference


class OneLineCompared:
    """Mixed into a view that has ``text`` (a line edit), ``model`` and ``model2`` (pickers), ``compare`` (the
    check box that asks model2 too), ``wanted_compare`` (the model a scene asked to compare with), ``session``
    and ``query``; ``_models_seen`` is the pickers' state at the last ask."""

    text: Any
    model: Any
    model2: Any
    compare: Any
    session: Any
    wanted_compare: str
    _models_seen: tuple[Any, ...] | None
    query: Callable[[], None]

    def refresh_models(self, prefer: str, ask: bool = False) -> None:
        """The pickers list the models; asks again only if its models changed (or ``ask``: a scene)."""
        self.model.set_models(self.session.models, prefer=prefer)
        self.model2.set_models(self.session.models, prefer=compared_preference(self.model, self.model2,
                                                                               self.wanted_compare))
        seen = (self.model.state(), self.model2.state() if self.compare.isChecked() else None)  # (compared: B too)
        if ask or seen != self._models_seen:
            self._models_seen = seen
            self.query()

    def set_sentences(self, sentences: list[str]) -> None:
        if sentences:
            self.text.setText(sentences[0])

    def sentences(self) -> list[str]:
        return [self.text.text()]
