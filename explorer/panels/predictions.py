"""The predictions panel: masked-token top-k as you type (two models side by side), a BERT training
example drawn as the engine trains, next-token predictions and continuations, sentence probability
under every model that can score, and next-sentence prediction."""

from __future__ import annotations

import html
import random
from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.session import Session
from explorer.tasks import TaskRunner
from explorer.widgets.export import add_csv_export, table_rows
from explorer.widgets.model_picker import ModelPicker

DEBOUNCE_MS = 150
MASK = "[MASK]"
BAR = "#4c78a8"


def bars(rows: list[tuple[str, float]], link: str = "") -> str:
    """Tokens with probability bars, as an HTML table (``link``: each token links to it)."""
    out = ["<table cellspacing='1'>"]
    for token, p in rows:
        label = html.escape(token)
        if link:
            label = f"<a href='{link}'>{label}</a>"
        out.append(f"<tr><td>{label}&nbsp;</td><td><table cellspacing='0'><tr><td bgcolor='{BAR}' "
                   f"width='{max(1, int(180 * p))}'>&nbsp;</td></tr></table></td><td>&nbsp;{p:.1%}</td></tr>")
    out.append("</table>")
    return "".join(out)


def whole_word(token: str, text_before: str) -> str:
    """A sub-word continuation shown with the word it completes ("##ing" after "runn" -> "runn·ing")."""
    if token.startswith("##"):
        stem = text_before.rstrip().rsplit(" ", 1)[-1]
        return f"{stem}·{token[2:]}" if stem else token[2:]
    return token


class PredictionsPanel(QWidget):
    shown = Signal()  # results are on screen (scenes' screenshots wait for it)
    focus_token = Signal(str, int)  # (text, token position): show where it attends in the attention panel
    VIEWS = ("masked", "next", "probability", "nsp")

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        from engine.api import Capability

        super().__init__(parent)
        self.session = session
        self.wanted_model = ""
        self.best: dict[str, int] = {}  # the best-rated sentence of each model (sentence probability)
        self.last_masked: tuple[str, list[tuple[str, Any]]] | None = None
        self.views = QTabWidget()
        self._masked_page(Capability)
        self._next_page(Capability)
        self._probability_page()
        self._nsp_page(Capability)
        QVBoxLayout(self).addWidget(self.views)
        session.modelsChanged.connect(self._refresh_models)
        self._refresh_models()

    # ------------------------------------------------------------ masked LM

    def _masked_page(self, capability: Any) -> None:
        self.masked_text = QLineEdit("The man went to the [MASK] to buy a gallon of milk.")
        self.masked_model = ModelPicker(capability.MASKED_LM)
        self.compare = QCheckBox("compare with")
        self.masked_model2 = ModelPicker(capability.MASKED_LM)
        self.masked_model2.setEnabled(False)
        self.compare.toggled.connect(lambda on: (self.masked_model2.setEnabled(on), self.query_masked()))
        self.masked_hint = QLabel()
        self.masked_hint.setWordWrap(True)
        self.chips = QHBoxLayout()
        self.masked_results = [QTextBrowser(), QTextBrowser()]
        for browser in self.masked_results:
            browser.setOpenLinks(False)
            browser.anchorClicked.connect(self._prediction_clicked)
        self.learn = QPushButton("Learn how BERT was trained: draw a training example")
        self.learn.clicked.connect(self.draw_example)
        self.example = QTextBrowser()
        page = QWidget()
        layout = QVBoxLayout(page)
        row = QHBoxLayout()
        row.addWidget(QLabel("Text:"))
        row.addWidget(self.masked_text, 3)
        row.addWidget(self.masked_model, 1)
        row.addWidget(self.compare)
        row.addWidget(self.masked_model2, 1)
        layout.addLayout(row)
        chip_box = QWidget()
        chip_box.setLayout(self.chips)
        chip_scroll = QScrollArea()  # a long text's words scroll instead of widening the window
        chip_scroll.setWidget(chip_box)
        chip_scroll.setWidgetResizable(True)
        chip_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        chip_scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        chip_scroll.setFixedHeight(QToolButton(text="Wg").sizeHint().height() + 22)
        chip_row = QHBoxLayout()
        chip_row.addWidget(QLabel("Click a word to mask it:"))
        chip_row.addWidget(chip_scroll, 1)
        layout.addLayout(chip_row)
        layout.addWidget(self.masked_hint)
        results = QHBoxLayout()
        for browser in self.masked_results:
            results.addWidget(browser)
        layout.addLayout(results, 2)
        layout.addWidget(self.learn)
        layout.addWidget(self.example, 1)
        self.views.addTab(page, "Masked LM")
        self.masked_runner = TaskRunner(self)
        self.masked_runner.finished.connect(self._show_masked)
        self.masked_runner.failed.connect(lambda m: self._masked_message(m))
        self.example_runner = TaskRunner(self)
        self.example_runner.finished.connect(self._show_example)
        self.example_runner.failed.connect(lambda m: self.example.setPlainText(m))
        self._chip_debounce = QTimer(self, singleShot=True, interval=500)  # the word buttons follow more slowly
        self._chip_debounce.timeout.connect(lambda: self._make_chips(self.masked_text.text()))
        self._masked_debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._masked_debounce.timeout.connect(self.query_masked)
        self.masked_text.textChanged.connect(lambda _: self._masked_debounce.start())
        for picker in (self.masked_model, self.masked_model2):
            picker.currentIndexChanged.connect(lambda _: self.query_masked())

    def _masked_message(self, message: str) -> None:
        self.masked_hint.setText(message)
        for browser in self.masked_results:
            browser.clear()

    def _make_chips(self, text: str) -> None:
        from engine.api import word_spans

        spans = [(a, b) for a, b in word_spans(text)[:30]
                 if text[max(0, a - 1) : b + 1] != MASK and any(c.isalnum() for c in text[a:b])]
        if spans == getattr(self, "_chip_spans", None):
            return  # the same words: keep the buttons (rebuilding them on every key costs the GUI thread)
        self._chip_spans = spans
        while self.chips.count():
            widget = self.chips.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        for a, b in spans:
            chip = QToolButton(text=text[a:b])
            chip.clicked.connect(lambda _=False, span=(a, b), word=text[a:b]: self.mask_span(*span, word))
            self.chips.addWidget(chip)
        self.chips.addStretch(1)

    def mask_span(self, start: int, end: int, word: str = "") -> None:
        text = self.masked_text.text()
        if word and text[start:end] != word:  # the text changed since the buttons were made
            self._chip_spans = None
            self._make_chips(text)
            return
        self._chip_spans = None  # positions move: the buttons are rebuilt
        self.masked_text.setText(text[:start] + MASK + text[end:])

    def query_masked(self) -> None:
        text = self.masked_text.text()
        self._chip_debounce.start()
        handles = [self.session.models.get(self.masked_model.currentText())]
        if self.compare.isChecked():
            handles.append(self.session.models.get(self.masked_model2.currentText()))
        handles = [h for h in handles if h is not None]
        self.learn.setEnabled(bool(handles))
        self.learn.setToolTip("" if handles else self.masked_model.reason())
        if not handles:
            reason = self.masked_model.reason()
            self._masked_message(reason[:1].upper() + reason[1:] + ". Load BERT (or a BERT-style Hugging Face model).")
            return
        if not text.strip():
            self._masked_message("Type a sentence with [MASK] where a word should be predicted.")
            return
        if MASK not in text:  # a hint, not an error
            self._masked_message("No [MASK] yet: type [MASK] where a word should be, or click a word above to mask it.")
            return

        def work() -> tuple[str, list[tuple[str, Any]]]:
            from engine.api import Word2BertError

            out = []
            for h in handles:
                try:
                    out.append((h.name, h.fill_mask(text, k=8)))
                except Word2BertError as e:
                    out.append((h.name, str(e)))
            return text, out

        self.masked_runner.submit(work)

    def _show_masked(self, result: tuple[str, list[tuple[str, Any]]]) -> None:
        text, per_model = result
        self.last_masked = result
        before = text.split(MASK)
        notes = []
        for browser, (name, candidates) in zip(self.masked_results, per_model, strict=False):
            if isinstance(candidates, str):
                browser.setHtml(f"<p><b>{html.escape(name)}</b></p><p>{html.escape(candidates)}</p>")
                continue
            parts = [f"<p><b>{html.escape(name)}</b></p>"]
            for m, mask in enumerate(candidates):
                rows = [(whole_word(t, before[m] if m < len(before) else ""), p)
                        for t, p in zip(mask.tokens, mask.probs, strict=True)]
                parts.append(f"<p>[MASK] {m + 1} (token {mask.position}; click a word to see where it attends)</p>")
                parts.append(bars(rows, link=f"mask:{mask.position}"))
            browser.setHtml("".join(parts))
            if len(candidates) < text.count(MASK):
                notes.append(f"{name} reads only the first {len(candidates)} [MASK]s (the text is longer than it reads)")
        if len(per_model) < 2:
            self.masked_results[1].clear()
        self.masked_hint.setText("; ".join(notes) or f"{text.count(MASK)} [MASK]: the likeliest tokens for each")
        self._shown("masked")

    def _prediction_clicked(self, url: QUrl) -> None:
        kind, _, position = url.toString().partition(":")
        if kind == "mask" and position.isdigit():
            self.focus_token.emit(self.masked_text.text(), int(position))

    def draw_example(self) -> None:
        handle = self.session.models.get(self.masked_model.currentText())
        if handle is None:
            return
        seed = random.randrange(1 << 30)
        self.example.setPlainText("drawing a sentence pair from the corpus and masking it…")
        self.example_runner.submit(lambda: __import__("engine.api", fromlist=["api"]).bert_training_example(
            handle, "default", seed))

    def _show_example(self, ex: Any) -> None:
        colours = {"[MASK]": "#d62728", "random": "#ff7f0e", "kept": "#2ca02c"}
        chosen = dict(zip(ex.chosen, ex.how, strict=True))
        tokens = []
        for i, token in enumerate(ex.inputs):
            shown = html.escape(token)
            if i in chosen:
                shown = (f"<span style='color:{colours[chosen[i]]}'><b>{shown}</b></span>"
                         f"<sub>{html.escape(ex.original[i])}</sub>")
            elif ex.segments[i]:
                shown = f"<span style='background:#fdecea'>{shown}</span>"
            tokens.append(shown)
        nsp = (f"B {'really follows' if ex.is_next else 'is a random sentence, not the one after'} A; "
               + (f"the model says P(IsNext) = {ex.next_probability:.2f}" if ex.next_probability is not None else ""))
        parts = [f"<p>{' '.join(tokens)}</p><p>{len(ex.chosen)} of {len(ex.inputs)} tokens chosen (15%): "
                 "<span style='color:#d62728'>[MASK] (80%)</span>, <span style='color:#ff7f0e'>random token "
                 "(10%)</span>, <span style='color:#2ca02c'>kept (10%)</span>; the model must predict the "
                 f"original (small) at each. {html.escape(nsp)}</p><table>"]
        for position, how, preds in zip(ex.chosen, ex.how, ex.predictions, strict=True):
            guess = ", ".join(f"{html.escape(t)} {p:.0%}" for t, p in preds[:3])
            ok = "✓" if preds[0][0] == ex.original[position] else ""
            parts.append(f"<tr><td>{html.escape(ex.original[position])}</td><td>&nbsp;({how})&nbsp;</td>"
                         f"<td>→ {guess} {ok}</td></tr>")
        parts.append("</table>")
        self.example.setHtml("".join(parts))

    # ------------------------------------------------------------ next token

    def _next_page(self, capability: Any) -> None:
        self.next_text = QLineEdit("The river flows into the")
        self.next_model = ModelPicker(capability.NEXT_TOKEN)
        self.next_results = QTextBrowser()
        self.next_message = QLabel()
        self.temperature = QDoubleSpinBox(minimum=0.1, maximum=2.0, value=0.8, singleStep=0.1)
        self.greedy = QPushButton("Continue (greedy)")
        self.sample = QPushButton("Continue (sampled)")
        self.continuation = QLabel()
        self.continuation.setWordWrap(True)
        page = QWidget()
        layout = QVBoxLayout(page)
        row = QHBoxLayout()
        row.addWidget(QLabel("Text:"))
        row.addWidget(self.next_text, 3)
        row.addWidget(self.next_model, 1)
        layout.addLayout(row)
        layout.addWidget(self.next_message)
        layout.addWidget(self.next_results, 1)
        gen = QHBoxLayout()
        gen.addWidget(self.greedy)
        gen.addWidget(self.sample)
        gen.addWidget(QLabel("temperature"))
        gen.addWidget(self.temperature)
        gen.addStretch(1)
        layout.addLayout(gen)
        layout.addWidget(self.continuation)
        self.views.addTab(page, "Next token")
        self.next_runner = TaskRunner(self)
        self.next_runner.finished.connect(self._show_next)
        self.next_runner.failed.connect(self.next_message.setText)
        self.generate_runner = TaskRunner(self)
        self.generate_runner.finished.connect(self._show_continuation)
        self.generate_runner.failed.connect(self.continuation.setText)
        self._next_debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._next_debounce.timeout.connect(self.query_next)
        self.next_text.textChanged.connect(lambda _: self._next_debounce.start())
        self.next_model.currentIndexChanged.connect(lambda _: self.query_next())
        self.greedy.clicked.connect(lambda: self.continue_text(0.0))
        self.sample.clicked.connect(lambda: self.continue_text(self.temperature.value()))

    def query_next(self) -> None:
        handle = self.session.models.get(self.next_model.currentText())
        for control in (self.greedy, self.sample):
            control.setEnabled(handle is not None)
        if handle is None:
            reason = self.next_model.reason()
            self.next_message.setText(reason[:1].upper() + reason[1:] + ". Load GPT or ELMo.")
            self.next_results.clear()
            return
        text = self.next_text.text()
        if not text.strip():
            self.next_message.setText("Type the beginning of a sentence.")
            return
        self.next_runner.submit(lambda: (text, handle.name, handle.next_token(text, k=10)))

    def _show_next(self, result: tuple[str, str, Any]) -> None:
        text, name, candidates = result
        self.next_message.setText(f"{name}: the likeliest next tokens after “{text}”")
        self.next_results.setHtml(bars(list(zip(candidates.tokens, candidates.probs, strict=True))))
        self._shown("next")

    def continue_text(self, temperature: float) -> None:
        handle = self.session.models.get(self.next_model.currentText())
        text = self.next_text.text()
        if handle is None or not text.strip():
            return
        seed = random.randrange(1 << 30)
        self.continuation.setText("continuing…")
        self.generate_runner.submit(lambda: (text, handle.generate(text, 20, temperature, seed), temperature))

    def _show_continuation(self, result: tuple[str, str, float]) -> None:
        text, more, temperature = result
        how = "greedy" if temperature <= 0 else f"sampled at temperature {temperature:.1f}"
        self.continuation.setText(f"{html.escape(text)}<b>{html.escape(more)}</b> <i>({how})</i>")

    # ------------------------------------------------------------ sentence probability

    def _probability_page(self) -> None:
        self.prob_text = QPlainTextEdit("The president of the United States lives in Washington.\n"
                                        "The States president of the United lives in Washington.\n"
                                        "Washington the of president lives States United in the.")
        self.shuffle = QPushButton("Add a shuffle of the first sentence")
        self.shuffle.clicked.connect(self.add_shuffle)
        self.prob_table = QTableWidget(0, 0)
        self.prob_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.prob_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.prob_table.setWordWrap(True)
        add_csv_export(self.prob_table, lambda: table_rows(self.prob_table), "sentence-probability")
        self.prob_message = QLabel()
        self.prob_message.setWordWrap(True)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(QLabel("Sentences, one per line — which is the more reasonable one?"))
        layout.addWidget(self.prob_text, 1)
        layout.addWidget(self.shuffle)
        layout.addWidget(self.prob_message)
        layout.addWidget(self.prob_table, 2)
        self.views.addTab(page, "Sentence probability")
        self.prob_runner = TaskRunner(self)
        self.prob_runner.finished.connect(self._show_probabilities)
        self.prob_runner.failed.connect(self.prob_message.setText)
        self._prob_debounce = QTimer(self, singleShot=True, interval=400)
        self._prob_debounce.timeout.connect(self.query_probabilities)
        self.prob_text.textChanged.connect(self._prob_debounce.start)

    def add_shuffle(self) -> None:
        lines = [s for s in self.prob_text.toPlainText().splitlines() if s.strip()]
        if not lines:
            return
        words = lines[0].rstrip(".").split()
        random.shuffle(words)
        self.prob_text.appendPlainText(" ".join(words) + ".")

    def query_probabilities(self) -> None:
        from engine.api import Capability

        sentences = [s.strip() for s in self.prob_text.toPlainText().splitlines() if s.strip()][:12]
        handles = [h for h in self.session.models.values() if Capability.SENTENCE_SCORE in h.capabilities]
        if not handles:
            self.prob_message.setText("No loaded model can score sentences: load an n-gram, NNLM, ELMo, GPT or BERT model.")
            self.prob_table.setRowCount(0)
            return
        if not sentences:
            self.prob_message.setText("Type a sentence and a few shuffles of it.")
            return

        def work() -> tuple[list[str], list[tuple[str, list[Any]]]]:
            from engine.api import Word2BertError

            columns = []
            for h in handles:
                scores: list[Any] = []
                for s in sentences:
                    try:
                        scores.append(h.score(s))
                    except Word2BertError as e:
                        scores.append(str(e))
                columns.append((f"{h.name} ({'pseudo-' if Capability.MASKED_LM in h.capabilities else ''}log p)", scores))
            return sentences, columns

        self.prob_message.setText(f"scoring {len(sentences)} sentences with {len(handles)} models…")
        self.prob_runner.submit(work)

    def _show_probabilities(self, result: tuple[list[str], list[tuple[str, list[Any]]]]) -> None:
        sentences, columns = result
        self.prob_table.clear()
        self.prob_table.setRowCount(len(sentences))
        self.prob_table.setColumnCount(1 + len(columns))
        self.prob_table.setHorizontalHeaderLabels(["sentence", *[name for name, _ in columns]])
        for r, s in enumerate(sentences):
            self.prob_table.setItem(r, 0, QTableWidgetItem(s))
        self.best: dict[str, int] = {}
        for c, (name, scores) in enumerate(columns, start=1):
            numbers = [x.logprob if not isinstance(x, str) else float("-inf") for x in scores]
            best = max(range(len(numbers)), key=numbers.__getitem__)
            self.best[name] = best
            for r, x in enumerate(scores):
                if isinstance(x, str):
                    item = QTableWidgetItem("—")
                    item.setToolTip(x)
                else:
                    item = QTableWidgetItem(f"{'★ ' if r == best else ''}{x.logprob:.1f}  (ppl {x.perplexity:,.0f})")
                    item.setToolTip(" ".join(f"{t}:{lp:.1f}" for t, lp in zip(x.tokens, x.token_logprobs, strict=True)))
                    if r == best:
                        font = item.font()
                        font.setBold(True)
                        item.setFont(font)
                self.prob_table.setItem(r, c, item)
        self.prob_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.prob_table.resizeRowsToContents()
        self.prob_message.setText("Log-probability (natural log; higher is more likely) and perplexity per model; "
                                  "★ marks each model's best-rated sentence. Hover a cell for each token's log-prob.")
        self._shown("probability")

    # ------------------------------------------------------------ next sentence

    def _nsp_page(self, capability: Any) -> None:
        self.nsp_a = QLineEdit("The man went to the store.")
        self.nsp_b = QLineEdit("He bought a gallon of milk.")
        self.nsp_model = ModelPicker(capability.NEXT_SENTENCE)
        self.nsp_result = QTextBrowser()
        page = QWidget()
        layout = QVBoxLayout(page)
        for label, widget in (("Sentence A:", self.nsp_a), ("Sentence B:", self.nsp_b)):
            row = QHBoxLayout()
            row.addWidget(QLabel(label))
            row.addWidget(widget, 1)
            layout.addLayout(row)
        layout.addWidget(self.nsp_model)
        layout.addWidget(self.nsp_result, 1)
        self.views.addTab(page, "Next sentence")
        self.nsp_runner = TaskRunner(self)
        self.nsp_runner.finished.connect(self._show_nsp)
        self.nsp_runner.failed.connect(self.nsp_result.setPlainText)
        self._nsp_debounce = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._nsp_debounce.timeout.connect(self.query_nsp)
        for edit in (self.nsp_a, self.nsp_b):
            edit.textChanged.connect(lambda _: self._nsp_debounce.start())
        self.nsp_model.currentIndexChanged.connect(lambda _: self.query_nsp())

    def query_nsp(self) -> None:
        handle = self.session.models.get(self.nsp_model.currentText())
        if handle is None:
            reason = self.nsp_model.reason()
            self.nsp_result.setPlainText(reason[:1].upper() + reason[1:] + ". Load a BERT pre-trained with NSP.")
            return
        a, b = self.nsp_a.text(), self.nsp_b.text()
        self.nsp_runner.submit(lambda: (handle.name, handle.next_sentence(a, b)))

    def _show_nsp(self, result: tuple[str, float]) -> None:
        name, p = result
        self.nsp_result.setHtml(f"<p>{html.escape(name)}: probability that B follows A</p>"
                                + bars([("IsNext", p), ("NotNext", 1 - p)]))
        self._shown("nsp")

    def _shown(self, view: str) -> None:
        if self.VIEWS[self.views.currentIndex()] == view:  # only the view on screen counts as shown
            self.shown.emit()

    # ------------------------------------------------------------ models and scenes

    def _refresh_models(self) -> None:
        for picker in (self.masked_model, self.next_model, self.nsp_model):
            picker.set_models(self.session.models, prefer=self.wanted_model)
        usable = self.masked_model.usable()
        self.masked_model2.set_models(self.session.models,
                                      prefer=next((n for n in usable if n != self.masked_model.currentText()), ""))
        self.query_masked()
        self.query_next()
        self.query_nsp()
        self._prob_debounce.start()

    def apply_scene(self, scene: dict[str, Any]) -> None:
        view = str(scene.get("view") or "masked")
        self.wanted_model = str(scene.get("contextual_model") or "")
        sentences = [str(s) for s in scene.get("sentences", [])]
        self.views.setCurrentIndex(self.VIEWS.index(view) if view in self.VIEWS else 0)
        if view == "probability":
            self.prob_text.setPlainText("\n".join(sentences))
        elif view == "next" and sentences:
            self.next_text.setText(sentences[0])
        elif view == "nsp" and len(sentences) >= 2:
            self.nsp_a.setText(sentences[0])
            self.nsp_b.setText(sentences[1])
        elif sentences:
            self.masked_text.setText(sentences[0])
        self._refresh_models()

    def current_scene(self) -> dict[str, Any]:
        view = self.VIEWS[self.views.currentIndex()]
        sentences = {"masked": [self.masked_text.text()], "next": [self.next_text.text()],
                     "probability": [s for s in self.prob_text.toPlainText().splitlines() if s.strip()],
                     "nsp": [self.nsp_a.text(), self.nsp_b.text()]}[view]
        return {"panel": "predictions", "sentences": sentences, "selection": "", "models": list(self.session.models),
                "contextual_model": self.masked_model.currentText(), "layer": None, "view": view}
