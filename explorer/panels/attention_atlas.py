"""The attention panel's "Head atlas" view: what each head attends to (sortable statistics), over the sentence
above or over a corpus sample (a background job); a double-click opens a head in the head view."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from explorer.tasks import BackgroundJob
from explorer.widgets.head_atlas import HeadAtlas

CORPUS_SENTENCES = 200


class AtlasPage(QWidget):
    head_chosen = Signal(int, int)  # (layer, head) double-clicked

    def __init__(self, model: Callable[[], Any], parent: QWidget | None = None) -> None:
        """``model``: the handle the panel shows (None while none is loaded), read when the corpus is asked."""
        super().__init__(parent)
        self.model = model
        self.atlas_job: BackgroundJob | None = None
        self.atlas = HeadAtlas()
        self.atlas.head_chosen.connect(self.head_chosen)
        self.atlas_scope = QLabel("over the sentence above")
        self.atlas_scope.setWordWrap(True)
        self.atlas_corpus = QPushButton(f"Over a corpus sample ({CORPUS_SENTENCES} sentences)")
        self.atlas_corpus.clicked.connect(self.over_corpus)
        self.atlas_corpus.setEnabled(model() is not None)
        row = QHBoxLayout()
        row.addWidget(self.atlas_scope, 1)
        row.addWidget(self.atlas_corpus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.atlas, 1)
        hint = QLabel("Click a column to sort; double-click a head to open it in the head view.")
        hint.setWordWrap(True)  # (one line at the normal zoom; it wraps at a talk's instead of widening the tab)
        layout.addWidget(hint)

    def fill(self, stats: list[Any], scope: str) -> None:
        self.atlas_scope.setText(f"Head statistics {scope} (share of each token's attention; entropy in bits)")
        self.atlas.fill(stats)

    def over_corpus(self) -> None:
        handle = self.model()
        if handle is None or (self.atlas_job is not None and self.atlas_job.running):
            return

        def work(progress: Any, stop: Any) -> list[Any]:
            from engine.api import corpus_head_table, corpus_sample

            sentences = corpus_sample("default", CORPUS_SENTENCES)
            progress(0.1, f"{len(sentences)} sentences")
            return corpus_head_table(handle, sentences, stop)

        self.atlas_job = BackgroundJob(work, self)
        self.atlas_job.finished.connect(lambda stats: self.fill(
            stats, f"over {stats[0].sentences} held-out sentences of the default corpus"))
        self.atlas_job.failed.connect(lambda m: self.atlas_scope.setText(f"the corpus statistics failed: {m}"))
        self.atlas_scope.setText(f"computing the head statistics over {CORPUS_SENTENCES} corpus sentences…")
