"""Static neighbours: type a word, see its nearest words in each loaded static model, with bars; or type an
analogy, "king - man + woman", and see the words nearest to that sum (word2vec's famous demo)."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.failures import explain
from explorer.scenes import Scene
from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export, table_rows
from explorer.widgets.model_picker import ModelPicker
from explorer.widgets.table_fill import fresh_rows
from explorer.widgets.word_similarity import agreement_sentence

DEBOUNCE_MS = 150
SEEN_HELP = ("Leave out the words the model saw fewer times than this in training: a word seen a handful of times "
             "has a vector that means little, and turns up near others by chance. Here and in the polysemy lens; "
             "models that kept no counts (GloVe 6B, a vectors file) show every word.")
ANALOGY_HELP = "An analogy is three words, two signs: king - man + woman (man is to king as woman is to …)."


def parse_analogy(text: str) -> tuple[str, str, str] | None:
    """"king - man + woman" (or "king + woman - man") as the engine's (a, b, c), "a is to b as c is to ?":
    ("man", "king", "woman"). None for a plain word (no "+", no spaced "-"); InputError (what the user typed,
    not a bug: said without a traceback in the log) for a sum that is not an analogy."""
    from engine.api import InputError

    if "+" not in text and not re.search(r"\s-|-\s", text):  # "well-known" is a word; "king - man" is not
        return None
    parts = re.findall(r"[+-]|[^\s+-]+", text.strip())
    signs, words = parts[1::2], parts[0::2]
    if len(parts) != 5 or any(w in "+-" for w in words) or sorted(signs) != ["+", "-"]:
        raise InputError(ANALOGY_HELP)
    first, second, third = words
    return (second, first, third) if signs[0] == "-" else (third, first, second)


def similarity_bar(similarity: float) -> QTableWidgetItem:
    """The bar column's cell of one neighbour: its share of the cell (0-1; a negative similarity: none) for
    ``SimilarityBars`` to fill."""
    item = QTableWidgetItem()
    item.setData(Qt.ItemDataRole.UserRole, max(0.0, min(1.0, similarity)))
    item.setToolTip(f"cosine similarity {similarity:.3f}")
    return item


class SimilarityBars(QStyledItemDelegate):
    """Paints each cell of the bar column filled from the left to its share, in the palette's highlight. One
    call a cell: a progress-bar widget per row made the table 30 widgets, each painted through PySide's
    wrappers (up to 17 ms a bar beside busy workers, 30 in one repaint: bench/robustness/RESULTS.md, chaos)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().paint(painter, option, index)  # the row's selection, if selected
        share = index.data(Qt.ItemDataRole.UserRole)
        if not share:
            return
        bar = option.rect.adjusted(2, 3, -2, -3)  # type: ignore[attr-defined]
        bar.setWidth(round(bar.width() * float(share)))
        selected = option.state & QStyle.StateFlag.State_Selected  # type: ignore[attr-defined]
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Highlight
        painter.fillRect(bar, option.palette.color(role))  # type: ignore[attr-defined]


class NeighboursPanel(QWidget):
    shown = Signal()  # neighbours are on screen (talk decks and screenshots wait for it)
    failed = Signal(str)  # they cannot be shown: why

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.wanted_model = ""
        self.word = QLineEdit(placeholderText="type a word (bank) or an analogy (king - man + woman)")
        from engine.api import Capability

        self.model = ModelPicker(Capability.STATIC, role="static")  # opens on the best (GloVe)
        self.model.activated.connect(lambda _: setattr(self, "wanted_model", ""))  # by hand: a scene's let go
        self.k = 15
        self.seen = QSpinBox(minimum=1, maximum=1_000_000, value=session.seen_at_least())
        self.seen.setSpecialValueText("every word")  # (at 1)
        self.seen.setPrefix("words seen ≥ ")
        self.seen.setSuffix("×")
        self.seen.setToolTip(SEEN_HELP)
        self.message = QLabel("Load a model with static vectors to see neighbours.")
        self.message.setWordWrap(True)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["neighbour", "similarity", ""])
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setItemDelegateForColumn(2, SimilarityBars(self.table))
        add_csv_export(self.table, lambda: table_rows(self.table), "neighbours")
        top = QHBoxLayout()
        top.addWidget(QLabel("Word:"))
        top.addWidget(self.word, 2)
        top.addWidget(QLabel("Model:"))
        top.addWidget(self.model, 1)
        top.addWidget(self.seen)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.message)
        layout.addWidget(self.table, 1)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._fail)
        self._debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._debounce.timeout.connect(self.query)
        self.word.textChanged.connect(lambda _: self._debounce.start())
        self.model.currentIndexChanged.connect(lambda _: self.query())
        self.seen.valueChanged.connect(session.set_seen_at_least)
        session.seenAtLeastChanged.connect(self._seen_changed)
        self._models_seen: tuple[Any, ...] | None = None  # the picker's state at the last ask (ModelPicker.state)
        session.modelsChanged.connect(self._refresh_models)
        self._refresh_models()

    def _refresh_models(self, ask: bool = False) -> None:
        """The picker lists the models; asks again only if its models changed (or ``ask``: a scene)."""
        self.model.set_models(self.session.models, prefer=self.wanted_model)
        seen = self.model.state()
        if ask or seen != self._models_seen:
            self._models_seen = seen
            self.query()

    def _seen_changed(self, n: int) -> None:
        if self.seen.value() != n:
            self.seen.setValue(n)  # (set elsewhere: the box follows)
        self.query()

    def set_presenting(self, on: bool) -> None:
        """A talk's step: the word or analogy the step asks stays as it is (keys step the talk)."""
        self.word.setReadOnly(on)

    def apply_scene(self, scene: Scene) -> None:
        self.wanted_model = scene.contextual_model or ""
        self.word.setText(scene.selection or "")
        self._refresh_models(ask=True)

    def current_scene(self) -> Scene:
        return Scene("neighbours", [], list(self.session.models), selection=self.word.text().strip(),
                     contextual_model=self.model.currentText(), view="neighbours")

    def query(self) -> None:
        self._debounce.stop()  # asked now: a query the typing scheduled would only ask the same again
        word, name = self.word.text().strip(), self.model.currentText()
        handle = self.session.models.get(name)
        self.word.setEnabled(handle is not None)
        if handle is None:
            reason = self.model.reason()
            self.message.setText(reason[:1].upper() + reason[1:] + ". Load GloVe, word2vec or a vectors file.")
            self.table.setRowCount(0)
            return
        if not word:
            self.runner.cancel()
            self.message.setText(f"Type a word to see its neighbours in {name}.")
            self.table.setRowCount(0)
            return
        from engine.api import InputError

        try:
            analogy = parse_analogy(word)
        except InputError as e:
            self.runner.cancel()  # an answer still coming for the text before is stale
            self._fail(explain(e))
            return
        self.message.setText(f"searching {name}…")
        k, seen = self.k, self.seen.value()
        counted = handle.word_counts_known()
        self.seen.setEnabled(counted)
        self.seen.setToolTip(SEEN_HELP if counted else f"{name} kept no counts of its words: every word is shown.")
        among = f"; words it saw {seen} times or more in training" if counted and seen > 1 else ""
        if analogy is None:
            def nearest() -> tuple[str, Any]:
                near = handle.static_neighbours(word, k, min_count=seen)  # (first: an unknown word says so)
                count = handle.word_count(word) if counted else None
                itself = "" if count is None else f"; “{word}” itself seen {count:,} times"
                agrees = agreement_sentence(name, handle.word_similarity())
                return f"Nearest words to “{word}” in {name} (cosine similarity{among}{itself}{agrees})", near

            self.runner.submit(nearest)
        else:
            a, b, c = analogy
            what = (f"{b} − {a} + {c} in {name}: the nearest words to that sum (cosine; the three words left out"
                    f"{among}) — {a} is to {b} as {c} is to …")
            self.runner.submit(lambda: (what, handle.analogy(a, b, c, k, min_count=seen)))

    def _show(self, result) -> None:
        what, neighbours = result
        self.message.setText(what)
        fresh_rows(self.table, len(neighbours))
        for row, n in enumerate(neighbours):
            self.table.setItem(row, 0, QTableWidgetItem(n.word))
            sim = QTableWidgetItem(f"{n.similarity:.3f}")
            sim.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, 1, sim)
            self.table.setItem(row, 2, similarity_bar(n.similarity))
        self.shown.emit()

    def _fail(self, message: str) -> None:
        self.table.setRowCount(0)
        self.message.setText(message)
        self.failed.emit(message)
