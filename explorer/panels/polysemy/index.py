"""The lens's whole-corpus indexes: for each contextual model, every frequent word's occurrences encoded at
every layer (engine.api.build_corpus_index; kept on disk by the engine), built in a background job with
progress, one model at a time — the others wait in a queue — and cancellable. An option: a clicked word's
occurrences are fetched on demand without one (polysemy_occurrences.py)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from explorer.session import Session
from explorer.tasks import BackgroundJob
from explorer.widgets.progress_bar import ProgressBar


class CorpusIndexer(QWidget):
    built = Signal(str)  # the model whose index is ready
    status = Signal(str)  # a line for the lens's message: what is being indexed, or why it failed

    def __init__(self, session: Session, corpus: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session, self.corpus = session, corpus
        self.chosen = ""  # the lens's model (show_model)
        self.usable: list[str] = []  # every loaded contextual model ("Index all models")
        self.settings: dict[str, Any] = {"per_word": 20, "max_words": 3000, "max_sentences": 20_000}
        self.indexes: dict[str, Any] = {}  # model name -> CorpusIndex
        self.job: BackgroundJob | None = None
        self.queue: list[str] = []  # models waiting for their index (one build at a time)
        self.building = ""  # the model whose index is being built
        # the model being indexed was forgotten while its build ran (unloaded, or answered by another checkpoint:
        # ``forget`` runs at every model change): its index would be stale
        self._dropped = False

        self.build = QPushButton("Build corpus index")
        self.build_all = QPushButton("Index all models")
        self.build_all.setToolTip("build the corpus index of every loaded contextual model, one after another, "
                                  "to compare them side by side in 'All models'")
        self.cancel = QPushButton("Cancel")
        self.cancel.setEnabled(False)
        self.progress = ProgressBar(maximum=1000, textVisible=True)  # the lens's fetches report here too
        self.progress.setFormat("%p%")
        # the buttons, and the progress bar under them as wide as the column: in one row, at a talk's zoom in a
        # laptop's window, they were wider than the lens's column, and the whole lens scrolled sideways, its right
        # edge cut. (A flowing row, a layout of Python's, was tried first: it lays itself out in Python, on the
        # window's thread, whenever the lens's messages change, and a zoom of the lens made twice the Python calls.)
        buttons = QHBoxLayout()
        for button in (self.build, self.build_all, self.cancel):
            buttons.addWidget(button)
        buttons.addStretch(1)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(buttons)
        column.addWidget(self.progress)
        self.build.clicked.connect(lambda: self.build_index())
        self.build_all.clicked.connect(self.index_all)
        self.cancel.clicked.connect(self.cancel_index)

    @property
    def running(self) -> bool:
        return self.job is not None and self.job.running

    def get(self, name: str) -> Any:
        return self.indexes.get(name)

    def forget(self, name: str) -> None:
        """A model's index, dropped (the model was unloaded, or another checkpoint now answers under its name); a
        build of it under way stops (it held the unloaded model for minutes, and its index would have been stored
        for a checkpoint it was not built with), and one waiting leaves the queue."""
        self.indexes.pop(name, None)
        if name in self.queue:
            self.queue.remove(name)
        if self.running and self.building == name and self.job is not None:
            self._dropped = True
            self.job.cancel()

    def show_model(self, handle: Any, reason: str, usable: list[str]) -> None:
        """The buttons for the lens's model: off, with the reason as a tooltip, when there is none."""
        self.chosen, self.usable = (handle.name if handle is not None else ""), list(usable)
        self.build_all.setEnabled(handle is not None)
        self.build.setEnabled(handle is not None and not self.running)
        self.build.setToolTip("" if handle is not None else reason)

    def index_all(self) -> None:
        for name in self.usable:
            self.build_index(name)

    def build_index(self, name: str | None = None) -> None:
        """Build (or open from the disk cache) the corpus index of a model (default: the lens's model);
        while another build runs, it waits in the queue."""
        handle = self.session.models.get(name or self.chosen)
        if handle is None or handle.name in self.indexes:
            return
        if self.running:
            if handle.name not in self.queue and handle.name != self.building:
                self.queue.append(handle.name)
            return
        settings, corpus, name = dict(self.settings), self.corpus, handle.name
        self.building, self._dropped = name, False

        def work(progress: Any, stop: Any) -> tuple[str, Any]:
            from engine.api import build_corpus_index

            return name, build_corpus_index(handle, corpus, stop=stop, progress=progress, **settings)

        self.job = BackgroundJob(work, self)
        self.job.progress.connect(self._progress)
        self.job.finished.connect(self._built)
        self.job.failed.connect(self._failed)
        self.build.setEnabled(False)
        self.cancel.setEnabled(True)
        self.status.emit(f"indexing the corpus with {name}…")

    def cancel_index(self) -> None:
        self.queue.clear()
        if self.job is not None:
            self.job.cancel()

    def _next(self) -> None:
        while self.queue:
            name = self.queue.pop(0)
            if name in self.session.models and name not in self.indexes:
                self.build_index(name)
                return

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        waiting = f" ({len(self.queue)} more waiting)" if self.queue else ""
        self.status.emit(f"indexing the corpus with {self.building}: {message}{waiting}")

    def _built(self, result: tuple[str, Any]) -> None:
        if self._dropped:  # (finished just before the cancel arrived: stale all the same)
            self._failed("")
            return
        name, index = result
        self.indexes[name] = index
        info = index.info
        self.progress.setFormat(f"{info['occurrences']:,} indexed, {info['memory_mb']:.0f} MB")
        self.progress.setToolTip(f"corpus index of {name}: {info['occurrences']:,} occurrences of {info['words']:,} "
                                 f"words, every layer, float16, {info['memory_mb']} MB")
        self.build.setEnabled(True)
        self.cancel.setEnabled(False)
        self.progress.setValue(1000)
        self._next()
        self.built.emit(name)

    def _failed(self, message: str) -> None:
        if self._dropped:  # (cancelled by ``forget``: said, nothing stored)
            message = "the model was unloaded or changed, so its corpus index was not finished"
        self.build.setEnabled(True)
        self.cancel.setEnabled(False)
        self.progress.setValue(0)
        self.status.emit(f"{self.building}: {message}")
        self._next()
