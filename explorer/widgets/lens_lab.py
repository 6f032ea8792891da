"""The lab under a prediction view (Masked LM, Next token): what every layer predicts at every position
(the lens grid: model A, the compared model B, or A − B, in a chosen measure; click a cell for its top
words), why the prediction happens (causal tracing: explorer/widgets/trace_page.py) and which words it rests
on (attribution: explorer/widgets/attribution_page.py), and which attention heads it needs (knock-outs:
explorer/widgets/heads_page.py). The lab asks its pages with the view's text and models,
and waits for what a scene asked of it (a model standing in while the scene's own loads does not end the wait)."""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from explorer.failures import Outcome, attempt
from explorer.tasks import TaskRunner
from explorer.widgets.attribution_page import AttributionPage
from explorer.widgets.export import add_csv_export
from explorer.widgets.heads_page import HeadsPage
from explorer.widgets.lens_grid import REVERSED, LayerTokenTable, layer_label, value_text
from explorer.widgets.tabs import PageSizedTabs
from explorer.widgets.trace_page import TracePage

SHOW = ("A", "B", "A − B")
PAGES = ("grid", "trace", "attribution", "heads")  # the lab's tabs, as scenes name them
WEIGHED_WORDS = ("elmo", "nnlm")  # models with no layers to read through a head, whose words attribution weighs
LENSES = {"logit lens": "logit", "tuned lens": "tuned", "logit and tuned": "both"}  # both: the tuned rows below


@dataclass(frozen=True)
class GridAnswer:
    text: str
    grids: list[tuple[str, Outcome[Any]]]  # (model name, its LensGrid)
    stacked: bool = False  # model A's logit lens, then its tuned lens (the second row set)


def _tip(grid: Any, layer: int, t: int) -> str:
    words = ", ".join(f"{w.strip() or '␣'} {p:.0%}" for w, p in zip(grid.top_tokens[layer][t], grid.top_probs[layer, t],
                                                                   strict=False))
    target = grid.targets[t]
    rank = f"; the actual token '{target.strip()}' ranks #{grid.rank[layer, t]:.0f}" if target is not None else ""
    return (f"{layer_label(layer, grid.layers - 1)}, token '{grid.tokens[t].strip()}': {words}; entropy "
            f"{grid.entropy[layer, t]:.2f}, KL to the output {grid.kl[layer, t]:.2f}{rank}")


class LensLab(QWidget):
    shown = Signal()  # a grid or a trace is on screen
    ready = Signal()  # what a scene asked for (``wanted``: the grid, or the trace after it) is on screen
    failed = Signal(str)  # what a scene asked for cannot be shown: why
    focus_head = Signal(str, int, str, int, int)  # (text, position, model, layer, head): where that head attends

    def __init__(self, parent: QWidget | None = None) -> None:
        from engine.api import LENS_MEASURES

        super().__init__(parent)
        self.text = ""
        self._handles: list[weakref.ref] = []  # weakly: a model unloaded from the session goes (its memory with it)
        self.wanted = ""  # a scene's "grid" or "trace": ``ready`` fires once it is on screen
        # the model the scene asked for: another standing in while it loads answers, but does not end the wait
        # (the scene's own model is asked again once it is model A)
        self.scene_model = ""
        self.scene_compare = ""  # and the model it compares with (B): another standing in for it neither ends it
        self.rows: list[tuple[Any, int, str]] = []  # the grid's rows as drawn, bottom first: (grid, layer, name)
        self.answer: GridAnswer | None = None
        self.trace_result: Any = None
        self.tabs = PageSizedTabs()  # (sized by the page on show: the heads page is the tallest)
        # ---- the grid
        self.lens = QComboBox()
        self.lens.addItems(list(LENSES))
        self.measure = QComboBox()
        for name, what in LENS_MEASURES.items():
            self.measure.addItem(name, name)
            self.measure.setItemData(self.measure.count() - 1, what, 3)  # Qt.ToolTipRole
        self.show_which = QComboBox()
        self.show_which.addItems(list(SHOW))
        self.grid_note = QLabel()
        self.grid_note.setWordWrap(True)
        self.grid = LayerTokenTable()
        self.detail = QLabel("click a cell for the words that layer predicts there")
        self.detail.setWordWrap(True)
        grid_page = QWidget()
        g = QVBoxLayout(grid_page)
        controls = QHBoxLayout()
        for label, widget in (("lens", self.lens), ("colour by", self.measure), ("show", self.show_which)):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget)
        controls.addStretch(1)
        g.addLayout(controls)
        g.addWidget(self.grid_note)
        g.addWidget(self.grid, 1)
        g.addWidget(self.detail)
        add_csv_export(self.grid, self.grid.export_rows, "lens-grid", png=True)
        self.tracing = TracePage()
        self.attribution = AttributionPage()
        self.heads = HeadsPage()
        # short names, the method in the tip: four names with their methods did not fit a talk's 1920 pixels at
        # its zoom (the tab bar scrolled, the other three tabs out of sight)
        for page, name, tip in ((grid_page, "Every layer", "every layer's prediction at every token: the logit lens "
                                 "(or a tuned lens)"),
                                (self.tracing, "Why this prediction", "causal tracing (Meng et al. 2022), or "
                                 "activation patching from a contrast sentence"),
                                (self.attribution, "Which words matter", "attribution: integrated gradients, gradient × "
                                 "input, the gradient's norm (LIT's salience maps)"),
                                (self.heads, "Which heads matter", "each attention head knocked out in turn (mean "
                                 "ablation, as TransformerLens's head ablations), or what it writes straight into "
                                 "the logits (direct logit attribution)")):
            self.tabs.setTabToolTip(self.tabs.addTab(page, name), tip)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.runner = TaskRunner(self)
        self.runner.finished.connect(self._show_grids)
        self.runner.failed.connect(self.grid_note.setText)
        self.tracing.answered.connect(self._show_trace)
        self.tracing.failed.connect(self._trace_failed)
        self.tracing.asked.connect(self.trace)
        self.lens.currentIndexChanged.connect(lambda _: self.query())
        self.measure.currentIndexChanged.connect(lambda _: self._render())
        self.show_which.currentIndexChanged.connect(lambda _: self._render())
        self.grid.cell_clicked.connect(self._cell_clicked)
        self.tabs.tabBarClicked.connect(self._user_took_over)
        self.tabs.currentChanged.connect(lambda _: self._ask_open_page())
        self.attribution.button.clicked.connect(self.attribute)
        self.attribution.target.returnPressed.connect(self.attribute)
        self.attribution.foil.returnPressed.connect(self.attribute)
        self.attribution.shown.connect(self._attribution_shown)
        self.attribution.failed.connect(self._attribution_failed)
        self.heads.button.clicked.connect(self.knock_out)
        self.heads.over.currentIndexChanged.connect(lambda _: self.knock_out())
        self.heads.target.returnPressed.connect(self.knock_out)
        self.heads.foil.returnPressed.connect(self.knock_out)
        self.heads.contrast.returnPressed.connect(self.knock_out)
        self.heads.shown.connect(self._heads_shown)
        self.heads.failed.connect(self._heads_failed)
        self.heads.head_chosen.connect(self._head_chosen)

    # ------------------------------------------------------------ scenes

    def apply(self, lab: str, measure: str | None, show: str | None, subject: str | None,
              lens: str | None = None, model: str = "", contrast: str | None = None, target: str | None = None,
              foil: str | None = None, compare: str = "", by_words: bool = False,
              head: list[int] | None = None, mean_over: str | None = None,
              effect: str | None = None) -> None:
        """A scene's lab: the tab (``PAGES``), the measure, A/B/A − B, the subject to trace, the lens, the word
        to explain and its foil; ``model``: the scene's model A, ``compare`` its B (until they are, the lab's
        answers are a stand-in's)."""
        self.wanted, self.scene_model, self.scene_compare = lab, model, compare
        for page in (self.attribution, self.heads):  # (one word and foil, whichever page the scene opens)
            page.target.setText(target or "")
            page.foil.setText(foil or "")
        self.attribution.set_by_words(by_words)
        self.heads.set_scene_head(head)
        self.heads.over.blockSignals(True)  # (the scene's query follows)
        self.heads.set_mean_over(mean_over, contrast)
        self.heads.over.blockSignals(False)
        self.heads.set_effect(effect)  # (drawn from the answer the scene's query brings)
        self.tabs.blockSignals(True)  # the scene's query follows; the page's own question waits for it
        self.tabs.setCurrentIndex(PAGES.index(lab) if lab in PAGES else 0)
        self.tabs.blockSignals(False)
        if lens is not None and lens in LENSES.values():
            self.lens.blockSignals(True)  # the view's query follows; no second one from here
            self.lens.setCurrentIndex(list(LENSES.values()).index(lens))
            self.lens.blockSignals(False)
        if measure:
            self.measure.setCurrentIndex(max(0, self.measure.findData(measure)))
        if show in SHOW:
            self.show_which.setCurrentIndex(SHOW.index(show))
        self.heads.set_show(show)
        if subject:
            self.tracing.subject.setText(subject)
        self.tracing.contrast.setText(contrast or "")

    def _user_took_over(self, _index: int) -> None:
        """A click on the lab's tabs: the user's lab from now on, no scene's wait."""
        self.wanted = self.scene_model = self.scene_compare = ""

    def _stand_in(self, name: str, b: str | None = None) -> bool:
        """Whether an answer of model ``name`` (with ``b``: model B's, "" where B is missing; None where the answer
        shows no B) is a stand-in's for the models a scene asked for."""
        if self.scene_model and name != self.scene_model:
            return True
        return b is not None and bool(self.scene_compare) and b != self.scene_compare

    def state(self) -> dict[str, Any]:
        """What a saved scene keeps of the lab (the fields ``apply`` takes)."""
        page = self.heads if self.tabs.currentIndex() == PAGES.index("heads") else self.attribution
        fields = (("target", page.target), ("foil", page.foil))
        words: dict[str, Any] = {key: field.text().strip() for key, field in fields if field.text().strip()}
        if self.attribution.by_words_wanted and self.tabs.currentIndex() == PAGES.index("attribution"):
            words["by_words"] = True
        if page is self.heads and self.heads.chosen is not None and self.tabs.currentIndex() == PAGES.index("heads"):
            words["head"] = list(self.heads.chosen)
        if page is self.heads and self.heads.mean_over != "text" and self.tabs.currentIndex() == PAGES.index("heads"):
            words["mean_over"] = self.heads.mean_over
            if self.heads.mean_over == "contrast":  # (the heads' contrast, not the trace's)
                words["contrast"] = self.heads.contrast.text().strip()
        if page is self.heads and self.heads.effect_shown != "knockout" and self.tabs.currentIndex() == PAGES.index("heads"):
            words["effect"] = self.heads.effect_shown
        return {"lab": PAGES[self.tabs.currentIndex()], "lens": LENSES[self.lens.currentText()],
                "measure": self.measure.currentData(),
                "show": (self.heads.show_which if page is self.heads else self.show_which).currentText(),
                "subject": self.tracing.subject.text(),
                **({"contrast": self.tracing.contrast.text()} if self.tracing.contrast.text().strip() else {}),
                **words}

    @property
    def handles(self) -> list[Any]:
        """The view's models that are still loaded (A first)."""
        return [h for h in (ref() for ref in self._handles) if h is not None]

    # ------------------------------------------------------------ asking

    def set_query(self, text: str, handles: list[Any]) -> None:
        """The view's text and models (the first is A, a second is the compared B); the grid follows."""
        if text != self.text or [h.name for h in handles] != [h.name for h in self.handles]:
            self.trace_result = None  # a trace of another text or model no longer answers
        self.text, self._handles = text, [weakref.ref(h) for h in handles]
        self.show_which.setEnabled(len(handles) > 1)
        if len(handles) < 2:
            self.show_which.setCurrentIndex(0)
        if not self.tracing.subject.text().strip():
            self.tracing.subject.setText(guess_subject(text))
        self.query()
        if not self.wanted:  # (a scene's question waits for its grid)
            self._ask_open_page()

    def query(self) -> None:
        if not self.handles or not self.text.strip():
            return
        text, handles, lens = self.text, list(self.handles), LENSES[self.lens.currentText()]

        def work() -> GridAnswer:
            if lens == "both":  # model A read both ways, one grid above the other
                a = handles[0]
                return GridAnswer(text, [(a.name, attempt(functools.partial(a.lens_grid, text, 5, "logit"))),
                                         (a.name, attempt(functools.partial(a.lens_grid, text, 5, "tuned")))], True)
            return GridAnswer(text, [(h.name, attempt(functools.partial(h.lens_grid, text, 5, lens))) for h in handles])

        self.runner.submit(work)

    def trace(self) -> None:
        if self.handles and self.text.strip():
            self.tracing.ask(self.handles[0], self.text)

    def attribute(self) -> None:
        """Which words model A's prediction on the text rests on (the attribution page), and B's beside it."""
        if self.handles and self.text.strip():
            self.attribution.explain(self.handles, self.text)

    def _attribute_if_open(self) -> None:
        """The attribution page on screen answers for the text and model as they are (it takes a fraction of a
        second: no button needed)."""
        handles = self.handles
        if (self.tabs.currentIndex() == PAGES.index("attribution") and handles
                and not self.attribution.answers(tuple(h.name for h in handles), self.text)):
            self.attribute()

    def set_brief(self, on: bool) -> None:
        """A talk's step (on) or the app's: the attribution and heads pages' notes short or whole."""
        self.attribution.set_brief(on)
        self.heads.set_brief(on)

    def knock_out(self) -> None:
        """Which of model A's attention heads its prediction on the text needs (the heads page), and B's."""
        if self.handles and self.text.strip():
            self.heads.ask(self.handles, self.text)

    def _ask_open_page(self) -> None:
        """The attribution or heads page on screen answers for the text and model as they are."""
        self._attribute_if_open()
        handles = self.handles
        if (self.tabs.currentIndex() == PAGES.index("heads") and handles
                and not self.heads.answers(tuple(h.name for h in handles), self.text)):
            self.knock_out()

    def _head_chosen(self, layer: int, head: int) -> None:
        result = self.heads.shown_result  # (B's own tokens where B's table is shown)
        if result is not None:
            self.focus_head.emit(result.text, result.position, self.heads.name, layer, head)

    def _heads_shown(self) -> None:
        self.shown.emit()
        if self.wanted == "heads":
            names = self.heads.names
            if not self._stand_in(names[0], names[1] if len(names) > 1 else ""):
                self.wanted = ""
            self.ready.emit()

    def _heads_failed(self, message: str) -> None:
        names = self.heads.asked[0] if self.heads.asked else ("",)
        if not (self.wanted == "heads" and self._stand_in(names[0])):  # (as a trace's)
            self._scene_failed(message)

    def _attribution_shown(self) -> None:
        self.shown.emit()
        names = self.attribution.asked[0] if self.attribution.asked else ("",)
        if self.wanted == "attribution":
            if not self._stand_in(names[0], names[1] if len(names) > 1 else ""):
                self.wanted = ""
            self.ready.emit()

    # ------------------------------------------------------------ showing

    def _show_grids(self, answer: GridAnswer) -> None:
        self.answer = answer
        self._render()
        self.shown.emit()
        refused = [f"{name}: {outcome.message}" for name, outcome in answer.grids[:1] if outcome.failed]
        if refused and self.wanted not in ("attribution", "heads"):  # model A's lens cannot be read: a scene of its grid or its
            if not self._stand_in(answer.grids[0][0]):  # trace cannot be shown (an LSTM's or NNLM's words still can be
                self._scene_failed(refused[0])  # weighed); a stand-in's refusal: the scene's own model is awaited
            return
        if self.wanted == "trace" and self.trace_result is None:
            self.trace()  # a tracing scene: the heatmap of the text on screen
        elif self.wanted in ("attribution", "heads"):
            self._ask_open_page()  # an attribution or heads scene: the table of the text on screen
        elif self.wanted == "grid":
            b = None if answer.stacked else answer.grids[1][0] if len(answer.grids) > 1 else ""
            if not self._stand_in(answer.grids[0][0], b):
                self.wanted = ""
            self.ready.emit()

    def _trace_failed(self, message: str) -> None:
        if not (self.wanted == "trace" and self._stand_in(self.tracing.traced)):  # (a stand-in's: its own model is awaited)
            self._scene_failed(message)

    def _attribution_failed(self, message: str) -> None:
        names = self.attribution.asked[0] if self.attribution.asked else ("",)
        if not (self.wanted == "attribution" and self._stand_in(names[0])):  # (as a trace's)
            self._scene_failed(message)

    def _scene_failed(self, message: str) -> None:
        if self.wanted:  # a scene waits for this: it will not come
            self.wanted = ""
            self.failed.emit(message)

    def _grid_of(self, index: int) -> tuple[str, Any]:
        assert self.answer is not None
        name, outcome = self.answer.grids[min(index, len(self.answer.grids) - 1)]
        return name, (None if outcome.failed else outcome.value)

    def _render(self) -> None:
        if self.answer is None or not self.answer.grids:
            return
        measure = self.measure.currentData() or "probability"
        which = SHOW[self.show_which.currentIndex()] if len(self.answer.grids) > 1 and not self.answer.stacked else "A"
        name_a, a = self._grid_of(0)
        if which == "B":
            name_a, a = self._grid_of(1)
        if a is None:
            failed = next(o for n, o in self.answer.grids if n == name_a)
            self.grid.setRowCount(0)
            weighed = any(h.name == name_a and h.kind in WEIGHED_WORDS for h in self.handles)
            self.grid_note.setText(f"{name_a}: {failed.message}" + (". Which words its next word rests on: the "
                                                                    "third tab" if weighed else ""))
            return
        legend = "yellow = low (decided)" if measure in REVERSED else "yellow = high"
        note = (f"{name_a}, the {a.lens} lens: what each layer (rows, the output on top) predicts at each token "
                f"({'the word there' if a.objective == 'masked' else 'the next word'}), coloured by "
                f"{measure} ({legend}). Only the output was trained to be read this way.")
        if which == "A − B":
            name_b, b = self._grid_of(1)
            if b is None or b.tokens != a.tokens or b.layers != a.layers:
                why = "failed" if b is None else (f"reads {len(b.tokens)} tokens in {b.layers} layers, {name_a} "
                                                  f"{len(a.tokens)} in {a.layers}")
                self.grid_note.setText(f"A − B needs the same tokens and layers: {name_b} {why}. Showing A.")
                self._draw(a, measure, note)
                return
            diff = a.measure(measure) - b.measure(measure)
            texts = [[f"{a.top_tokens[layer][t][0].strip()}/{b.top_tokens[layer][t][0].strip()}"
                      for t in range(len(a.tokens))] for layer in range(a.layers)]
            tips = [[f"{name_a}: {_tip(a, layer, t)}\n{name_b}: {_tip(b, layer, t)}" for t in range(len(a.tokens))]
                    for layer in range(a.layers)]
            self.grid.show_cells(texts, diff, a.tokens, tips, signed=True, words=texts)
            self.grid_note.setText(f"{name_a} − {name_b}, {measure}: red where {name_a}'s is higher, blue where "
                                   f"{name_b}'s is; each cell names A's top word / B's.")
            return
        if self.answer.stacked:
            _, tuned = self._grid_of(1)
            if tuned is None:
                self._draw(a, measure, f"{self.answer.grids[1][1].message}. Showing the logit lens alone.")
                return
            rows = [(tuned, layer, f"tuned · {layer_label(layer, tuned.layers - 1)}") for layer in range(tuned.layers - 1)]
            rows += [(a, layer, layer_label(layer, a.layers - 1)) for layer in range(a.layers)]
            self._draw_rows(rows, measure, note.replace("the logit lens", "the logit lens above, the tuned lens "
                                                        "below (each layer through its trained translator)"))
            return
        missing = ""  # a compared model with no grid is named, not left out in silence
        if len(self.answer.grids) > 1 and which == "A" and self.answer.grids[1][1].failed:
            name_b, failed_b = self.answer.grids[1]
            missing = f" No grid for {name_b}: {failed_b.message}."
        self._draw(a, measure, note + (f" {a.notice}." if a.notice else "") + missing)

    def _draw(self, grid: Any, measure: str, note: str) -> None:
        self._draw_rows([(grid, layer, layer_label(layer, grid.layers - 1)) for layer in range(grid.layers)],
                        measure, note)

    def _draw_rows(self, rows: list[tuple[Any, int, str]], measure: str, note: str) -> None:
        """Rows bottom first: (grid, its layer, the row's name)."""
        self.rows = rows
        values = np.stack([grid.measure(measure)[layer] for grid, layer, _ in rows])
        tokens = rows[0][0].tokens
        n = len(tokens)
        texts = [[f"{grid.top_tokens[layer][t][0].strip() or '␣'}"
                  + ("" if measure == "probability" else f" {value_text(float(values[r, t]), measure)}")
                  for t in range(n)] for r, (grid, layer, _) in enumerate(rows)]
        tips = [[_tip(grid, layer, t) for t in range(n)] for grid, layer, _ in rows]
        words = [[grid.top_tokens[layer][t][0].strip() for t in range(n)] for grid, layer, _ in rows]
        self.grid.show_cells(texts, values, tokens, tips, reverse=measure in REVERSED, log=measure == "rank",
                             value_range=(0.0, 1.0) if measure == "probability" else None, words=words,
                             labels=[label for _, _, label in rows])
        self.grid_note.setText(note)

    def _cell_clicked(self, layer: int, position: int) -> None:
        if self.answer is None:
            return
        if self.answer.stacked and 0 <= layer < len(self.rows):  # a row of one grid or the other
            grid, row_layer, label = self.rows[layer]
            self.detail.setText(f"{self.answer.grids[0][0]}, {'tuned' if label.startswith('tuned') else 'logit'} "
                                f"lens: {_tip(grid, row_layer, position)}")
            return
        lines = []
        for name, outcome in self.answer.grids:
            grid = outcome.value
            if grid is not None and layer < grid.layers and position < len(grid.tokens):
                lines.append(f"{name}: {_tip(grid, layer, position)}")
        self.detail.setText("\n".join(lines))

    def _show_trace(self, result: tuple[str, str, Any]) -> None:
        name, text, trace = result
        if not self.handles or name != self.handles[0].name or text != self.text:
            if self.wanted == "trace":  # the model or the text changed while it traced: a stale answer
                self.trace()
            return
        self.trace_result = trace
        self.tracing.draw(name, trace)
        self.shown.emit()
        if self.wanted == "trace":
            if not self._stand_in(name):
                self.wanted = ""
            self.ready.emit()


def guess_subject(text: str) -> str:
    """A first subject to trace: the text's last capitalised word after its first (a name: 'France'), else
    its longest word."""
    words = [w.strip(".,;:!?\"'()") for w in text.replace("[MASK]", " ").split()]
    words = [w for w in words if w]
    names = [w for w in words[1:] if w[0].isupper()]
    if names:
        return names[-1]
    return max(words, key=len) if words else ""
