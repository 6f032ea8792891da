"""Session: the app's model. Holds the loaded models; panels take it and react to its signals."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from explorer.tasks import TaskRunner


class Session(QObject):
    modelsChanged = Signal()
    status = Signal(str)
    error = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.models: dict[str, Any] = {}  # name -> engine.api.ModelHandle
        self._loader = TaskRunner(self)
        self._loader.finished.connect(self._on_loaded)
        self._loader.failed.connect(self._on_failed)

    def load(self, path_or_name: str) -> None:
        """Load a model in the background (a run folder, 'glove-6b-50d' or a vectors file)."""
        self.status.emit(f"loading {path_or_name}…")

        def work() -> tuple[str, Any]:
            from engine import api

            return path_or_name, api.load(path_or_name)

        self._loader.submit(work)

    def _on_loaded(self, result: tuple[str, Any]) -> None:
        key, handle = result
        self.models[handle.name] = handle
        self.status.emit(f"loaded {handle.name} ({handle.kind}, {handle.info.get('vocabulary_size', '?'):,} words)"
                         if isinstance(handle.info.get("vocabulary_size"), int) else f"loaded {handle.name}")
        self.modelsChanged.emit()

    def _on_failed(self, message: str) -> None:
        self.error.emit(message)
        self.status.emit(f"could not load the model: {message}")
