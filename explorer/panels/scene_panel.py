"""What a panel that scenes and talk decks drive can do, declared once: a talk window or a scene asks
these of any panel it builds, never ``hasattr``."""

from __future__ import annotations

from typing import Any, Protocol

from explorer.scenes import Scene


class ScenePanel(Protocol):
    """A panel a scene or a talk step shows: it takes a scene, says when its results are on screen,
    gives back the scene it shows, and lays itself out for a projector."""

    shown: Any  # Signal(): the step's results are on screen
    failed: Any  # Signal(str): the step's results cannot be shown, and why (a screenshot or export stops waiting)

    def apply_scene(self, scene: Scene) -> None: ...

    def current_scene(self) -> Scene: ...

    def set_presenting(self, on: bool) -> None: ...
