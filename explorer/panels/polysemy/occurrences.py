"""The lens's occurrences on demand: when a word is clicked, each model encodes only that word's
occurrences in the corpus (up to ``limit``, sampled across it; engine.api.word_occurrences), in a
background job with progress per model; the results are kept (in memory here, on disk by the engine).
A new click cancels the fetch under way; a cancelled or superseded fetch reports nothing."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QObject, Signal

from explorer.tasks import BackgroundJob

KEPT = 48  # (model, word) answers kept in memory: each holds its vectors mapped from the cache folder (an open
# file and its pages); older ones are read again from disk when clicked (bench/robustness/chaos.py: 1,042
# files open and RSS 2.6 -> 6.7 GB after two minutes of clicking words when every answer was kept)


class OccurrenceFetcher(QObject):
    ready = Signal(str)  # the word whose occurrences arrived (for every model asked)
    progress = Signal(float, str)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None, limit: int = 300) -> None:
        super().__init__(parent)
        self.limit = limit
        self.found: OrderedDict[tuple[str, str], Any] = OrderedDict()  # (model name, word) -> WordOccurrences
        self.job: BackgroundJob | None = None
        self.asked: tuple[str, tuple[str, ...]] | None = None  # (word, model names) of the fetch under way

    def get(self, name: str, word: str) -> Any:
        found = self.found.get((name, word))
        if found is not None:
            self.found.move_to_end((name, word))  # the latest clicked stay longest
        return found

    def forget(self, name: str) -> None:
        """A model's occurrences, dropped (unloaded, or another checkpoint now answers under its name); a fetch
        under way for it stops (its work held the model: an unloaded one's memory waited for the corpus's word
        index to be built)."""
        self.found = OrderedDict((key, value) for key, value in self.found.items() if key[0] != name)
        if self.running and self.asked is not None and name in self.asked[1]:
            self.cancel()
            self.asked = None

    def missing(self, names: list[str], word: str) -> list[str]:
        return [n for n in names if (n, word) not in self.found]

    @property
    def running(self) -> bool:
        return self.job is not None and self.job.running

    def fetch(self, handles: dict[str, Any], word: str, corpus: str) -> None:
        """Encode ``word``'s occurrences with each of ``handles`` (name -> handle) not fetched yet."""
        names = tuple(self.missing(list(handles), word))
        if not names or (self.running and self.asked == (word, names)):
            return
        if self.job is not None and self.job.running:
            self.job.cancel()  # the old click's fetch stops at its next batch
        self.asked = (word, names)
        limit, chosen = self.limit, [(n, handles[n]) for n in names]

        def work(progress: Any, stop: Any) -> tuple[str, dict[str, Any]]:
            from engine.api import word_index, word_occurrences

            progress(0.0, f"finding “{word}” in the corpus")
            index = word_index(corpus)
            out = {}
            for i, (name, handle) in enumerate(chosen):
                def step(fraction: float, message: str, i: int = i) -> None:
                    progress((i + fraction) / len(chosen), message)

                out[name] = word_occurrences(handle, word, corpus, limit=limit, stop=stop, progress=step, index=index)
            return word, out

        job = BackgroundJob(work, self)
        job.progress.connect(lambda f, m, j=job: self._progress(j, f, m))
        job.finished.connect(lambda result, j=job: self._finished(j, result))
        job.failed.connect(lambda message, j=job: self._failed(j, message))
        self.job = job

    def cancel(self) -> None:
        if self.job is not None and self.job.running:
            self.job.cancel()

    def _progress(self, job: BackgroundJob, fraction: float, message: str) -> None:
        if job is self.job:
            self.progress.emit(fraction, message)

    def _finished(self, job: BackgroundJob, result: tuple[str, dict[str, Any]]) -> None:
        word, found = result
        for name, occurrences in found.items():
            self.found[(name, word)] = occurrences
            while len(self.found) > KEPT:
                self.found.popitem(last=False)
        if job is self.job:
            self.asked = None
            self.ready.emit(word)

    def _failed(self, job: BackgroundJob, message: str) -> None:
        if job is self.job and "cancelled" not in message:
            self.asked = None
            self.failed.emit(message)
