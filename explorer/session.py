"""Session: the app's model. Holds the loaded models; panels take it and react to its signals."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from explorer.garbage import freeze_long_lived_objects, thaw_for
from explorer.tasks import TaskRunner

if TYPE_CHECKING:  # a name for types only: engine.api is imported lazily, off the start-up path
    from engine.api import ModelHandle


UNLOAD_SETTLE_MS = 1500  # after an unload, queries still under way for the model have ended


class Session(QObject):
    modelsChanged = Signal()
    loaded = Signal(str, str)  # (what a load was asked for: a name or a path, the name the model is under now)
    runsChanged = Signal()  # a run finished or stopped (the library lists it)
    status = Signal(str)
    error = Signal(str)
    seenAtLeastChanged = Signal(int)  # static neighbours: the words seen fewer times in training are left out

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._seen_at_least: int | None = None  # None: the engine's default (engine.api.SEEN_AT_LEAST)
        self.models: dict[str, ModelHandle] = {}  # name -> its loaded model
        self._loaders: list[TaskRunner] = []  # one per load: several models load side by side
        self._loading: set[str] = set()  # what those loads were asked for
        self.recent: list[str] = []  # paths opened by the user, newest first (kept in the settings)

    def seen_at_least(self) -> int:
        """How often a model must have seen a word in training for its static neighbours to show it (1: every
        word); models that kept no counts show every word whatever it is."""
        if self._seen_at_least is None:
            from engine.api import SEEN_AT_LEAST

            return SEEN_AT_LEAST
        return self._seen_at_least

    def set_seen_at_least(self, n: int) -> None:
        if n != self.seen_at_least():
            self._seen_at_least = n
            self.seenAtLeastChanged.emit(n)

    def load(self, path_or_name: str) -> bool:
        """Load a model in the background (a run folder, 'glove-6b-50d' or a vectors file). False where that
        one is on its way already: asked again (a second double-click, File → Open twice), it loads once."""
        if path_or_name in self._loading:
            self.status.emit(f"{path_or_name} is loading already…")
            return False
        self.status.emit(f"loading {path_or_name}…")
        self._loading.add(path_or_name)

        def work() -> tuple[str, Any]:
            from engine import api

            return path_or_name, api.load(path_or_name)

        loader = TaskRunner(self, QThreadPool.globalInstance())
        # off the list first (slots run in the order connected): what modelsChanged tells counts it as done
        def done(_: object) -> None:
            self._loaders.remove(loader)
            self._loading.discard(path_or_name)
            loader.deleteLater()  # (after the slots below) a runner per load, the session's child: let go

        loader.finished.connect(done)
        loader.failed.connect(done)
        loader.finished.connect(self._on_loaded)
        loader.failed.connect(self._on_failed)
        self._loaders.append(loader)
        loader.submit(work)
        return True

    def load_defaults(self) -> None:
        """Load the shipped default checkpoints (assets/checkpoints), found by the engine, in the background."""
        finder = TaskRunner(self, QThreadPool.globalInstance())

        def work() -> list[str]:
            from engine import api

            return api.default_checkpoints()

        def found(names: list[str]) -> None:
            self._loaders.remove(finder)
            finder.deleteLater()
            for name in names:
                self.load(name)

        finder.finished.connect(found)
        def failed(message: str) -> None:
            self._loaders.remove(finder)
            finder.deleteLater()
            self._on_failed(message)

        finder.failed.connect(failed)
        self._loaders.append(finder)
        finder.submit(work)

    def add_run(self, run_dir: str) -> None:
        """A run made in this session: listed first among the recent models, ready to explore."""
        self.recent = [run_dir, *[r for r in self.recent if r != run_dir]][:10]
        self.runsChanged.emit()

    def set_model(self, name: str, handle: Any) -> None:
        """Put ``handle`` under ``name`` (the run scrubber swaps checkpoints under one name): every panel
        showing ``name`` answers with it, and says ``name`` (a shallow copy is renamed; the model is shared)."""
        import copy

        if handle.name != name:
            handle = copy.copy(handle)
            handle.name = name
        self.models[name] = handle
        self.modelsChanged.emit()

    def unload(self, name: str) -> bool:
        """Let go of a loaded model: every panel drops it from its pickers, and its memory goes back once
        nothing shows a result of it. False where no model of that name is loaded."""
        handle = self.models.pop(name, None)
        if handle is None:
            return False
        gone = weakref.ref(handle)
        del handle
        self.status.emit(f"unloaded {name}")
        self.modelsChanged.emit()
        # most models go at once (their last reference dropped), or when a queued query that holds one ends; one
        # caught in a reference cycle frozen with the long-lived objects goes at the next quiet moment's collection
        # after the last look (thawed for it)
        QTimer.singleShot(UNLOAD_SETTLE_MS, lambda: thaw_for(gone, UNLOAD_SETTLE_MS))
        return True

    @property
    def loading(self) -> int:
        return len(self._loaders)

    def _on_loaded(self, result: tuple[str, Any]) -> None:
        key, handle = result
        if handle.path and key == handle.path:
            self.recent = [key, *[r for r in self.recent if r != key]][:10]
        self.models[handle.name] = handle
        freeze_long_lived_objects()  # a model (and torch) stays for the session: keep it out of GC scans
        self.status.emit(f"loaded {handle.name} ({handle.kind}, {handle.info.get('vocabulary_size', '?'):,} words)"
                         if isinstance(handle.info.get("vocabulary_size"), int) else f"loaded {handle.name}")
        self.modelsChanged.emit()
        self.loaded.emit(key, handle.name)

    def _on_failed(self, message: str) -> None:
        self.error.emit(message)
        self.status.emit(f"could not load the model: {message}")
