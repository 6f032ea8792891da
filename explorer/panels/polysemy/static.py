"""The polysemy lens's static column: each static model's nearest words of the selected word — one list
whatever the sentence (GloVe, word2vec), the contrast the contextual column makes visible."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QGroupBox,
    QHeaderView,
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
from explorer.widgets.whole_entries import WholeEntries
from explorer.widgets.word_similarity import AGREEMENT_TIP, agreement_cell


def seen_prefix(word: str, count: int | None) -> str:
    """How often a model saw the word, before its neighbours, where it kept counts: "bat" seen 33 times in
    word2vec-sgns's corpus has neighbours that mean little beside "bank" seen 540 times, and the audience should know
    which they are looking at (first, so a talk's one-line row, cut at its end, still shows it)."""
    if count is None:
        return ""
    return f"(“{word}” never seen in training) " if count == 0 else f"(“{word}” seen {count:,}×) "


NEIGHBOURS = 8  # nearest words a model's row lists
ALONE_NEIGHBOURS = 16  # on a talk's slide with no contextual column: the slide is theirs
ALONE_SCALE = 1.3  # and their type that much larger


def scaled_font(widget: QWidget, scale: float) -> QFont:
    """``widget``'s font, ``scale`` times larger (in pixels where it was set in pixels, as a talk sets it)."""
    font = QFont(widget.font())
    if font.pixelSize() > 0:
        font.setPixelSize(round(font.pixelSize() * scale))
    else:
        font.setPointSizeF(font.pointSizeF() * scale)
    return font


def what(handle: Any) -> str:
    """What a model is, from the catalog (its name's tooltip; "" for one it does not list)."""
    return str(handle.info.get("what") or "")


class StaticNeighbours(QGroupBox):
    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__("Static vectors", parent)
        self.session = session
        self.compact = False
        self.alone = False  # a talk's static step: set_alone
        self.k = NEIGHBOURS
        self.hide_when_none = False  # a talk's step with a contextual column: no static model, no box on the slide
        self.only: list[str] | None = None  # a talk's step: only its own models (None: every static model loaded)
        self._ranking: list[str] | None = None
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["static model", "nearest words (one list whatever the sentence)"])
        agreement = QTableWidgetItem("WordSim-353 ρ")
        agreement.setToolTip(AGREEMENT_TIP)
        self.table.setHorizontalHeaderItem(2, agreement)
        self.table.verticalHeader().setVisible(False)
        # a header wider than its column (a talk's zoom) keeps its start and ends in "…", not cut at both ends
        self.table.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.table.horizontalHeader().setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setWordWrap(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        add_csv_export(self.table, lambda: table_rows(self.table), "static-neighbours")
        # rows as high as their text at the table's width now (a list wrapped while the window was still
        # narrow kept two lines and pushed GloVe's row out of a talk's view)
        self._fit_rows = QTimer(self, singleShot=True, interval=0)  # after the resize has taken effect
        self._fit_rows.timeout.connect(self._fit)
        self.table.horizontalHeader().sectionResized.connect(lambda *_: self._fit_rows.start())
        QVBoxLayout(self).addWidget(self.table)
        self._whole_entries = WholeEntries(self.table)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show)
        self.runner.failed.connect(self._message)
        self._word = ""
        session.seenAtLeastChanged.connect(self._seen_changed)  # (a method: let go when a lens panel is deleted)

    def _ranked(self) -> list[str]:
        if self._ranking is None:  # (the catalog, read once)
            from engine.api import preferred_models

            self._ranking = preferred_models("static")
        return self._ranking

    def _seen_changed(self, _: int) -> None:
        if self._word:
            self.query(self._word)

    def set_compact(self, on: bool) -> None:
        """A talk's layout: one line a model (a list too long for the screen ends in "…") and the box exactly
        as tall as its rows, so every static model is on the slide and the contextual column gets the rest."""
        self.compact = on
        self.table.setWordWrap(not on)
        # (a list ends ", …"; the lens's own tab wraps it with the table's own delegate)
        self.table.setItemDelegateForColumn(1, self._whole_entries if on else self.table.itemDelegate())
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setColumnHidden(2, on or self.alone)  # (a slide's room goes to the lists; the app's lens says how
        # far to trust them)
        self._fit()

    def set_alone(self, on: bool) -> None:
        """A talk's static step (no contextual column below): the lists whole, wrapped, longer and larger, so the
        slide shows what one vector per word mixes (it showed two cut lines above two thirds of empty screen). The
        rows are fitted by ``set_compact``, which follows."""
        self.alone = on
        k = ALONE_NEIGHBOURS if on else NEIGHBOURS
        self.table.setFont(scaled_font(self, ALONE_SCALE) if on else QFont())  # (QFont(): inherited again)
        if k != self.k:
            self.k = k
            if self._word:
                self.query(self._word)

    def _fit(self) -> None:
        """Rows as high as their text; in a talk, the box as high as its rows (no scroll bar on a slide)."""
        self.table.resizeRowsToContents()
        sized = self.compact or self.alone
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff if sized
                                              else Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.table.setSizeAdjustPolicy(QAbstractScrollArea.SizeAdjustPolicy.AdjustToContents if sized
                                       else QAbstractScrollArea.SizeAdjustPolicy.AdjustIgnored)
        if not sized:
            self.table.setMaximumHeight(16777215)  # QWIDGETSIZE_MAX
            self.setMaximumHeight(16777215)
            return
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setMaximumHeight(self.table.horizontalHeader().sizeHint().height() + rows
                                    + 2 * self.table.frameWidth())
        self.setMaximumHeight(self.sizeHint().height())

    def _message(self, message: str) -> None:
        fresh_rows(self.table, 1)
        self.table.setItem(0, 0, QTableWidgetItem(""))
        self.table.setItem(0, 1, QTableWidgetItem(message))
        self._fit()

    def query(self, word: str) -> None:
        from engine.api import Capability

        self._word = word
        handles = [h for name, h in self.session.models.items() if h.capabilities & Capability.STATIC
                   and (self.only is None or name in self.only)]
        ranked = self._ranked()  # the catalog's best static vectors first (GloVe, word2vec), then in load order
        handles.sort(key=lambda h: ranked.index(h.name) if h.name in ranked else len(ranked))
        seen = self.session.seen_at_least()
        k = self.k
        self.setVisible(bool(handles) or not self.hide_when_none)  # ("no static model loaded" is noise on a slide)
        if not word or not handles:
            self._message("click a word" if handles else "no static model loaded (GloVe, word2vec)")
            return

        def work() -> list[tuple[str, str, str, str, tuple[str, str]]]:
            from engine.api import Word2BertError

            rows = []
            for h in handles:
                why = (f"Words {h.name} saw fewer than {seen} times in training are left out (their vectors mean "
                       "little); change it in the Neighbours tab." if seen > 1 and h.word_counts_known() else "")
                agreement = agreement_cell(h.name, h.word_similarity())
                try:
                    near = h.static_neighbours(word, k, min_count=seen)
                    listed = ", ".join(f"{n.word} {n.similarity:.2f}" for n in near)
                    rows.append((h.name, seen_prefix(word, h.word_count(word)) + listed, why, what(h), agreement))
                except Word2BertError as e:
                    rows.append((h.name, explain(e), "", what(h), agreement))
            return rows

        self.runner.submit(work)

    def _show(self, rows: list[tuple[str, str, str, str, tuple[str, str]]]) -> None:
        fresh_rows(self.table, len(rows))
        for r, (name, text, why, about, (agreement, agreement_tip)) in enumerate(rows):
            for c, (value, tip) in enumerate(((name, about), (text, why), (agreement, agreement_tip))):
                item = QTableWidgetItem(value)
                item.setToolTip(tip)  # the model's name: what it is (nnlm-tiny's vectors are the input features of
                # a next-word model, not trained to be neighbours); its ρ: how far its lists go with people's
                if c == 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.table.setItem(r, c, item)
        self._fit()
