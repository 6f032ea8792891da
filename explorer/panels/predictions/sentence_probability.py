"""Sentence probability: a sentence and its shuffles scored by every loaded model that can score
(n-gram, NNLM, ELMo, GPT; BERT by pseudo-log-likelihood), one column per model."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.failures import explain
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export, table_rows
from explorer.widgets.table_fill import fresh_rows


@dataclass(frozen=True)
class Unscored:
    """A sentence one model could not score (the rest of its column, and the other models', still show)."""

    reason: str


@dataclass(frozen=True)
class ScoreColumn:
    name: str  # the model, and how it scores ("log p" or "pseudo-log p")
    scores: list[Any]  # per sentence: an engine.api.SentenceScore, or Unscored


@dataclass(frozen=True)
class ScoreTable:
    """What the worker answers: every sentence scored by every model that can score."""

    sentences: list[str]
    columns: list[ScoreColumn]


class SentenceProbabilityView(QWidget):
    shown = Signal()

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.best: dict[str, int] = {}  # the best-rated sentence of each model
        self.only: list[str] | None = None  # a talk step's models (None: every loaded model that can score)
        self._asked: tuple[Any, ...] | None = None  # the sentences and models of the latest scoring
        self.text = QPlainTextEdit("The president of the United States lives in Washington.\n"
                                        "The States president of the United lives in Washington.\n"
                                        "Washington the of president lives States United in the.")
        self.shuffle = QPushButton("Add a shuffle of the first sentence")
        self.shuffle.clicked.connect(self.add_shuffle)
        self.difference = QComboBox()  # "B − A": a column of the log-probability differences of two models
        self.difference.setToolTip("add a column: one model's log-probability minus another's, per sentence "
                                   "(e.g. a checkpoint against an earlier step of the same run)")
        self.difference.currentIndexChanged.connect(lambda _: self._redraw())
        self._last: ScoreTable | None = None
        self._pairs: list[tuple[int, int]] = []
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setWordWrap(True)
        add_csv_export(self.table, lambda: table_rows(self.table), "sentence-probability")
        self.message = QLabel()
        self.message.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Sentences, one per line — which is the more reasonable one?"))
        layout.addWidget(self.text, 1)
        row = QHBoxLayout()
        row.addWidget(self.shuffle, 1)
        row.addWidget(QLabel("Difference:"))
        row.addWidget(self.difference, 1)
        self.stop = QPushButton("Stop")
        self.stop.setEnabled(False)
        self.stop.setToolTip("stop scoring (BERT scores a sentence once per token: long ones take a while)")
        self.stop.clicked.connect(self.stop_scoring)
        row.addWidget(self.stop)
        layout.addLayout(row)
        layout.addWidget(self.message)
        layout.addWidget(self.table, 2)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self.message.setText)
        self.runner.failed.connect(lambda _: setattr(self, "_asked", None))  # asking again tries again
        for signal in (self.runner.finished, self.runner.failed):
            signal.connect(lambda _: self.stop.setEnabled(False))
        self._debounce = QTimer(self, singleShot=True, interval=400)
        self._debounce.timeout.connect(self.query)
        self.text.textChanged.connect(self._debounce.start)

    def add_shuffle(self) -> None:
        lines = [s for s in self.text.toPlainText().splitlines() if s.strip()]
        if not lines:
            return
        words = lines[0].rstrip(".").split()
        random.shuffle(words)
        self.text.appendPlainText(" ".join(words) + ".")

    def query(self) -> None:
        from engine.api import Capability, model_kinds

        self._debounce.stop()  # asked now: a query the typing scheduled would only ask the same again
        sentences = [s.strip() for s in self.text.toPlainText().splitlines() if s.strip()][:12]
        scoring = [(name, h) for name, h in self.session.models.items() if Capability.SENTENCE_SCORE in h.capabilities
                   and (self.only is None or name in self.only)]
        # columns in a talk step's order, else the lineage's (n-gram, ELMo, GPT, BERT), not the order models loaded in
        lineage = model_kinds()
        only = self.only
        scoring.sort(key=lambda item: only.index(item[0]) if only is not None
                     else lineage.index(item[1].kind) if item[1].kind in lineage else len(lineage))
        handles = [h for _, h in scoring]
        if not handles:
            self.message.setText("No loaded model can score sentences: load an n-gram, NNLM, ELMo, GPT or BERT model.")
            self.table.setRowCount(0)
            self._asked = None
            return
        if not sentences:
            self.message.setText("Type a sentence and a few shuffles of it.")
            self._asked = None
            return

        def work() -> ScoreTable:
            from engine.api import Cancelled, Word2BertError

            columns = []
            for h in handles:
                scores: list[Any] = []
                for s in sentences:
                    try:
                        scores.append(h.score(s))
                    except Cancelled:
                        raise
                    except Word2BertError as e:  # this sentence only: the rest of the table still shows
                        scores.append(Unscored(explain(e)))
                name = f"{h.name} ({'pseudo-' if Capability.MASKED_LM in h.capabilities else ''}log p)"
                columns.append(ScoreColumn(name, scores))
            return ScoreTable(sentences, columns)

        key = (tuple(sentences), tuple((h.name, id(h)) for h in handles))
        if key == self._asked:  # the same sentences and models (another model loaded elsewhere): nothing new
            return
        self._asked = key
        self.message.setText(f"scoring {len(sentences)} sentences with {len(handles)} models…")
        self.runner.submit(work)
        self.stop.setEnabled(True)

    def stop_scoring(self) -> None:
        """Stop a long scoring (a masked LM scores a long sentence once per token): nothing is lost."""
        self.runner.cancel()
        self._asked = None  # asking again scores again
        self.stop.setEnabled(False)
        self.message.setText("stopped: the scoring was cancelled (edit the sentences to score them again)")

    def _show(self, result: ScoreTable) -> None:
        self._last = result
        names = [column.name.rsplit(" (", 1)[0] for column in result.columns]
        pairs = [(j, i) for i in range(len(names)) for j in range(len(names)) if i != j]
        labels = ["none"] + [f"{names[b]} − {names[a]}" for b, a in pairs]
        if labels != [self.difference.itemText(i) for i in range(self.difference.count())]:
            chosen = self.difference.currentText()
            self.difference.blockSignals(True)
            self.difference.clear()
            self.difference.addItems(labels)
            self.difference.setCurrentIndex(max(0, labels.index(chosen) if chosen in labels else 0))
            self.difference.blockSignals(False)
        self._pairs = pairs
        self._redraw()
        self.shown.emit()

    def difference_column(self) -> tuple[str, list[float | None]] | None:
        """The chosen "B − A" column: (header, B's log p minus A's per sentence; None where one failed)."""
        index = self.difference.currentIndex()
        if self._last is None or index <= 0 or index - 1 >= len(self._pairs):
            return None
        b, a = self._pairs[index - 1]
        columns = self._last.columns
        values = [None if isinstance(x, Unscored) or isinstance(y, Unscored) else x.logprob - y.logprob
                  for x, y in zip(columns[b].scores, columns[a].scores, strict=True)]
        return f"Δ {self.difference.currentText()}", values

    def _redraw(self) -> None:
        if self._last is None:
            return
        sentences, columns = self._last.sentences, [(c.name, c.scores) for c in self._last.columns]
        extra = self.difference_column()
        self.table.clear()
        fresh_rows(self.table, len(sentences), 1 + len(columns) + (extra is not None))
        # a model's name above how it scores, a score above its perplexity: two narrow lines each, so that the
        # sentences keep the width (one line each squeezed them to a word per line in an 800-pixel window)
        self.table.setHorizontalHeaderLabels(["sentence", *["\n(".join(name.rsplit(" (", 1)) for name, _ in columns],
                                              *([extra[0]] if extra else [])])
        for r, s in enumerate(sentences):
            self.table.setItem(r, 0, QTableWidgetItem(s))
        self.best = {}
        for c, (name, scores) in enumerate(columns, start=1):
            numbers = [float("-inf") if isinstance(x, Unscored) else x.logprob for x in scores]
            best = max(range(len(numbers)), key=numbers.__getitem__)
            self.best[name] = best
            for r, x in enumerate(scores):
                if isinstance(x, Unscored):
                    item = QTableWidgetItem("—")
                    item.setToolTip(x.reason)
                else:
                    unknown = sum(x.unknown)
                    item = QTableWidgetItem(f"{'★ ' if r == best else ''}{x.logprob:.1f}\n(ppl {x.perplexity:,.0f})"
                                            + (f"\n· {unknown} unknown" if unknown else ""))
                    flags = x.unknown or (False,) * len(x.tokens)
                    item.setToolTip(" ".join(f"{t}{' (<unk>)' if u else ''}:{lp:.1f}"
                                             for t, lp, u in zip(x.tokens, x.token_logprobs, flags, strict=True)))
                    if r == best:
                        font = item.font()
                        font.setBold(True)
                        item.setFont(font)
                self.table.setItem(r, c, item)
        if extra is not None:
            for r, value in enumerate(extra[1]):
                self.table.setItem(r, 1 + len(columns), QTableWidgetItem("—" if value is None else f"{value:+.1f}"))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.resizeRowsToContents()
        notices = list(dict.fromkeys(x.notice for _, scores in columns for x in scores
                                     if not isinstance(x, Unscored) and x.notice))
        if any(not isinstance(x, Unscored) and any(x.unknown) for _, scores in columns for x in scores):
            notices.insert(0, "“unknown”: words a word-level model does not know; it scores each as its one "
                              "<unk> class, cheaper than spelling the word out as GPT must, so compare with care")
        self.message.setText("Log-probability (natural log; higher is more likely) and perplexity per model; "
                             "★ marks each model's best-rated sentence. Hover a cell for each token's log-prob."
                             + "".join(f"\nNote: {n}." for n in notices[:2]))

    def refresh_models(self, prefer: str, ask: bool = False) -> None:
        self._debounce.start()  # (the scoring asks again only if its sentences or models changed: ``_asked``)

    def set_sentences(self, sentences: list[str]) -> None:
        self.text.setPlainText("\n".join(sentences))

    def sentences(self) -> list[str]:
        return [s for s in self.text.toPlainText().splitlines() if s.strip()]
