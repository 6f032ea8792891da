"""The talk window: a deck's steps full screen, one panel per step, each prepared once after the deck opens (one
progress bar for all; the first step at once, the others in the pauses of the user's input), so stepping only
switches pages.

Keys: → Space PageDown next; ← PageUp back; Home/End; a number jumps to that step; Esc leaves. While
the speaker types in a sentence field, only PageUp/PageDown (a clicker) and Esc are taken from it.
Big type (28 px body at 1920×1080) and a high-contrast palette; nothing pops up."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import QEvent, QObject, QSize, QSizeF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QFont,
    QImage,
    QKeyEvent,
    QPageSize,
    QPainter,
    QPdfWriter,
)
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSizePolicy,
    QStackedWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from explorer.panels.scene_panel import ScenePanel
from explorer.scenes import Scene
from explorer.session import Session
from explorer.talk.deck import Deck
from explorer.theme import HIGH_CONTRAST, TALK_PLOTS, palette_with
from explorer.user_input import until_a_pause
from explorer.widgets.plot_view import PLOT_COLOURS, colour_views, plot_views
from explorer.widgets.progress_bar import ProgressBar
from explorer.widgets.running_app import running_app
from explorer.window_work import window_working

BODY_PX = 28
TITLE_PX = 46
EXPORT_SIZE = QSize(1920, 1080)
DIGIT_WAIT_MS = 700
BUILD_TURN_MS = 1  # the preparation's turns: by a timer (see TalkWindow._build_next)
NEXT = {Qt.Key.Key_Right, Qt.Key.Key_Space, Qt.Key.Key_PageDown, Qt.Key.Key_Down}
BACK = {Qt.Key.Key_Left, Qt.Key.Key_PageUp, Qt.Key.Key_Up, Qt.Key.Key_Backspace}
CLICKER = {Qt.Key.Key_PageDown, Qt.Key.Key_PageUp, Qt.Key.Key_Escape}


def release_legends(window: QWidget) -> None:
    """Unhook every plot legend's anchor before ``window`` is deleted: pyqtgraph's anchor handler read a
    plot already deleted when the legend's geometry changed during the teardown (bench/robustness/chaos.py,
    once in 7,000 actions)."""
    import contextlib

    import pyqtgraph as pg

    for view in plot_views(window):
        for item in view.items():
            if not isinstance(item, pg.LegendItem):
                continue
            handler = item._GraphicsWidgetAnchor__geometryChanged  # pyqtgraph's private name for it
            for source in (item, getattr(item, "_GraphicsWidgetAnchor__parent", None)):
                if source is not None:
                    with contextlib.suppress(RuntimeError, TypeError):
                        source.geometryChanged.disconnect(handler)


def make_panel(name: str, session: Session) -> ScenePanel:
    """A fresh panel for one step (imported here: the panels pull in pyqtgraph)."""
    if name == "attention":
        from explorer.panels.attention import AttentionPanel

        return AttentionPanel(session)
    if name == "predictions":
        from explorer.panels.predictions.panel import PredictionsPanel

        return PredictionsPanel(session)
    if name == "neighbours":
        from explorer.panels.neighbours import NeighboursPanel

        return NeighboursPanel(session)
    if name == "curves":
        from explorer.panels.curves import CurvesPanel

        return CurvesPanel(session)
    if name == "history":
        from explorer.panels.history import HistoryPanel

        return HistoryPanel(session)
    if name == "layers":
        from explorer.panels.layers import LayersPanel

        return LayersPanel(session)
    from explorer.panels.polysemy.panel import PolysemyPanel

    return PolysemyPanel(session)


def is_text_input(widget: QWidget | None) -> bool:
    if isinstance(widget, QTextEdit):
        return not widget.isReadOnly()
    return isinstance(widget, QLineEdit | QPlainTextEdit | QAbstractSpinBox | QAbstractSlider | QComboBox)


class TalkWindow(QWidget):
    stepped = Signal(int)  # the step now on screen (0-based)
    ready = Signal()  # every step has its results
    left = Signal()  # Esc: the speaker left the talk

    def __init__(self, session: Session, deck: Deck, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session, self.deck = session, deck
        self.steps: list[Scene] = deck.steps
        self.setWindowTitle(deck.title or "word2bert talk")
        self.setAutoFillBackground(True)
        self.setPalette(palette_with(self.palette(), HIGH_CONTRAST))
        setattr(self, PLOT_COLOURS, TALK_PLOTS)  # its plots on the slide's black, whatever the window's theme
        font = QFont(self.font())
        font.setPixelSize(BODY_PX)
        self.setFont(font)

        self.title = QLabel()
        title_font = QFont(font)
        title_font.setPixelSize(TITLE_PX)
        title_font.setBold(True)
        self.title.setFont(title_font)
        self.title.setWordWrap(True)
        # a title wraps at the window's width and never widens it: a word too long for a line (a pasted run of
        # letters) is cut at the edge (it laid the window out 93,000 px wide: bench/robustness/chaos.py)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.counter = QLabel()
        self.counter.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.progress = ProgressBar(maximum=len(self.steps), textVisible=True)
        self.progress.setFormat("preparing the talk: %v of %m steps ready")
        self.stack = QStackedWidget()
        self.stack.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        header.addWidget(self.counter)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 16, 24, 16)
        layout.addLayout(header)
        layout.addWidget(self.progress)
        layout.addWidget(self.stack, 1)

        self.done: set[int] = set()
        self.failures: dict[int, str] = {}  # steps whose results cannot be shown: why (their message is on screen)
        # QWidgets that are ScenePanels (make_panel checks each kind), built over turns of the event loop
        # (a ten-step deck took 0.3-0.7 s to build at once: the window froze as it opened); None: not yet
        self.panels: list[Any] = [None] * len(self.steps)
        self._applied: set[int] = set()  # steps whose panel has been given its scene (asked for its results)
        for _ in self.steps:
            self.stack.addWidget(QWidget())  # each step's place, until its panel is built
        self._next_to_build = 0
        self._closed = False  # closed (and deleted): late signals and the build's next turn do nothing
        self._teardown: list[Any] = []  # a closed window's panels, deleted one per turn of the event loop
        self._digits = ""
        self._digit_timer = QTimer(self, singleShot=True, interval=DIGIT_WAIT_MS)
        self._digit_timer.timeout.connect(self._jump_to_digits)
        self._turn = QTimer(self, singleShot=True, interval=BUILD_TURN_MS)  # the preparation's next turn
        self._turn.timeout.connect(self._build_next)
        # the speaker's keys are read where they arrive: at the widget with the focus (a filter on it, moved
        # with the focus) and here, where a key that widget leaves alone comes up to. A filter on the whole
        # application saw every event of every window (paint, timers, queued signals) in Python: a tenth of
        # the GUI thread's time while a talk was open (bench/robustness/chaos.py, py-spy)
        self.installEventFilter(self)
        self.stack.installEventFilter(self)
        self._filtered: QWidget | None = None
        running_app().focusChanged.connect(self._focus_moved)
        self._reading_keys = True
        self._watch = QTimer(self, interval=500)  # steps that cannot show anything also count as prepared
        self._watch.timeout.connect(self._check_unanswerable)
        self._watch.start()
        self.prepare()
        self.go(0)

    # ------------------------------------------------------------ preparing

    def models_needed(self) -> list[str]:
        return list(dict.fromkeys(m for scene in self.steps for m in scene.models))

    def prepare(self) -> None:
        """Load what the steps need (once for all) and let every step compute its results now: the first
        step's panel at once, the others one per turn of the event loop."""
        from explorer.scenes import model_name

        for name in self.models_needed():
            if model_name(name) not in self.session.models:  # (the user's folder by its path: loaded by its name)
                self.session.load(name)
        self._build_next()

    def _build_next(self) -> None:
        """One turn of the preparation: the next step's panel made, or (the turn after) given its scene. Each turn is
        a timer's, not a posted event's: Qt's glib event loop runs its timers once per pass of posted events, so a
        chain of posted turns ran two turns between two of the window's timers (a timer's gap of two panels). The
        turns run in the pauses of the user's input (explorer/user_input.py): a step the speaker goes to is built
        at once; the steps after it wait while the user clicks and types (the chaos bench's monkey, acting every
        80 ms, found a talk's preparation a tenth of the window's time, in turns of up to 230 ms beside busy
        cores)."""
        if self._closed:
            return
        i = self._next_to_build
        while i < len(self.steps) and i in self._applied:
            i += 1  # built already (a step the speaker jumped to)
        self._next_to_build = i
        if i == len(self.steps):
            return
        if self.panels[i] is not None:
            window_working()  # (the workers wait while a step is built and painted: explorer.window_work)
            self.panel(i)  # (a step begun is finished: its panel's own first answer would be wasted work)
        elif wait := until_a_pause():  # the user is acting (in this window or the main one): the next step waits
            self._turn.start(max(BUILD_TURN_MS, math.ceil(wait * 1000)))
            return
        else:
            window_working()
            self._make(i)
        self._turn.start(BUILD_TURN_MS)

    def panel(self, i: int) -> Any:
        """Step ``i``'s panel, built and asked for its results the first time it is needed."""
        if self.panels[i] is None:
            self._make(i)
        if i not in self._applied:
            self._applied.add(i)
            self.panels[i].apply_scene(self.steps[i])
        return self.panels[i]

    def _make(self, i: int) -> None:
        """Step ``i``'s panel made and put in its place, not yet given its scene (called only while it has none)."""
        scene = self.steps[i]
        panel = make_panel(scene.panel, self.session)
        panel.set_presenting(True)
        panel.shown.connect(lambda i=i: self._step_shown(i))
        panel.failed.connect(lambda why, i=i: self._step_failed(i, why))
        self.panels[i] = panel
        current = self.stack.currentIndex()
        placeholder = self.stack.widget(i)
        self.stack.insertWidget(i, cast(QWidget, panel))  # every panel is a QWidget as well as a ScenePanel
        if placeholder is not None:
            self.stack.removeWidget(placeholder)
            placeholder.deleteLater()
        self.stack.setCurrentIndex(current)
        colour_views(plot_views(within=cast(QWidget, panel)), *TALK_PLOTS)  # (a view made later: as it is shown)

    def _step_shown(self, i: int) -> None:
        if self._closed or i not in self._applied:
            return  # (a panel made but not yet given its scene: what it shows is not the step's)
        missing = [m for m in self.steps[i].models if m not in self.session.models]
        if missing and self.session.loading:  # its models still loading: the results will be redone
            return
        if i in self.done:
            return
        self.done.add(i)
        self.progress.setValue(len(self.done))
        if len(self.done) == len(self.steps):
            self.progress.hide()
            self.ready.emit()

    def _step_failed(self, i: int, why: str) -> None:
        """A step that cannot show its results is as prepared as it will be (an export says why)."""
        if self._closed or i not in self._applied:
            return
        from explorer.scenes import model_name

        if self.session.loading and any(model_name(m) not in self.session.models for m in self.steps[i].models):
            return  # a stand-in model's failure: the step is asked again when its own model arrives
        self.failures[i] = why
        self._step_shown(i)

    def _check_unanswerable(self) -> None:
        """Once every model has loaded (or failed to), a step whose panel has no model that can answer
        (its message says why) is as prepared as it will be."""
        from explorer.widgets.model_picker import pickers_within

        if self.session.loading:
            return
        for i, panel in enumerate(self.panels):
            if i not in self._applied:
                continue  # not built yet: it says when it is shown
            every = pickers_within(panel)
            if not every:
                continue  # a view of no model (fine-tuning curves): ready when it shows what it read
            pickers = [p for p in every if p.isVisibleTo(panel) and p.isEnabled()]
            if i not in self.done and not any(p.usable() for p in pickers):
                self._step_shown(i)
        if self.all_ready:
            self._watch.stop()

    @property
    def all_ready(self) -> bool:
        return len(self.done) == len(self.steps)

    # ------------------------------------------------------------ stepping

    @property
    def current(self) -> int:
        return self.stack.currentIndex()

    def go(self, i: int) -> None:
        i = max(0, min(len(self.steps) - 1, i))
        self.panel(i)
        self.stack.setCurrentIndex(i)
        scene = self.steps[i]
        self.title.setText(scene.title or "")
        self.counter.setText(f"{i + 1} / {len(self.steps)}")
        focus = QApplication.focusWidget()
        if focus is None or not is_text_input(focus) or not self.isAncestorOf(focus):
            self.stack.setFocus()
        self.stepped.emit(i)

    def _focus_moved(self, _old: QWidget | None, new: QWidget | None) -> None:
        if self._filtered is not None:
            with contextlib.suppress(RuntimeError):  # (deleted already)
                self._filtered.removeEventFilter(self)
            self._filtered = None
        if new is not None and new is not self.stack and self.isAncestorOf(new):
            new.installEventFilter(self)
            self._filtered = new

    def _stop_reading_keys(self) -> None:
        if self._reading_keys:  # (leaving closes the window: both stop it)
            self._reading_keys = False
            with contextlib.suppress(RuntimeError, TypeError):
                running_app().focusChanged.disconnect(self._focus_moved)
        self._focus_moved(None, None)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() != QEvent.Type.KeyPress or not isinstance(watched, QWidget):
            return False
        if watched is not self and not self.isAncestorOf(watched):
            return False
        return self.handle_key(event)  # type: ignore[arg-type]

    def handle_key(self, event: QKeyEvent) -> bool:
        key = Qt.Key(event.key())
        focus = QApplication.focusWidget()
        if focus is not None and is_text_input(focus) and self.isAncestorOf(focus) and key not in CLICKER:
            return False  # typing in a sentence: the keys are the speaker's
        if key == Qt.Key.Key_Escape:
            self.leave()
        elif key in NEXT:
            self.go(self.current + 1)
        elif key in BACK:
            self.go(self.current - 1)
        elif key == Qt.Key.Key_Home:
            self.go(0)
        elif key == Qt.Key.Key_End:
            self.go(len(self.steps) - 1)
        elif event.text().isdigit():
            self._digits += event.text()
            self._digit_timer.start()
        else:
            return False
        return True

    def _jump_to_digits(self) -> None:
        if self._digits:
            self.go(int(self._digits) - 1)
        self._digits = ""

    def leave(self) -> None:
        self._stop_reading_keys()
        self.close()  # closeEvent says the speaker left

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        first = not self._closed
        self._closed = True
        self._watch.stop()
        release_legends(self)
        self._stop_reading_keys()
        super().closeEvent(event)
        if first:  # however it was closed (Esc, the title bar, the app): the main window lets go of it, and
            # of its panels with their answers and models (a talk window closed from its title bar stayed
            # the main window's, with a panel and a copy of the session's models per step:
            # bench/robustness/chaos.py's census)
            built = [p for p in self.panels if p is not None]
            self.panels = [None] * len(self.steps)
            if self.testAttribute(Qt.WidgetAttribute.WA_DeleteOnClose):
                # deleted a panel per turn of the event loop, then the window (Qt deletes a window closed with
                # this attribute after its closeEvent, unless the attribute is gone by then): a ten-step window
                # deleted at once held the GUI thread up to 0.6 s beside two busy cores (chaos.py --events)
                self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
                self._teardown = built
                self._turn.stop()
                QTimer.singleShot(0, self, self._delete_next)
            self.left.emit()

    def _delete_next(self) -> None:
        if self._teardown:
            self._teardown.pop().deleteLater()  # (its deletion is this turn's; the next panel's, the next turn's)
            QTimer.singleShot(0, self, self._delete_next)
        else:
            self.deleteLater()

    # ------------------------------------------------------------ export

    def export(self, folder: str | Path) -> list[Path]:
        """Every step as a 1920×1080 PNG (step-01.png, …) and all of them in one PDF (talk.pdf)."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        self.resize(EXPORT_SIZE)
        paths: list[Path] = []
        for i in range(len(self.steps)):
            self.go(i)
            QApplication.sendPostedEvents()  # the page's layout requests: laid out at its size, then grabbed
            # and the 0 ms timers that layout starts (a stretched column's width, then a table's rows fitted to
            # it: a static slide's wrapped lists were grabbed at the height of the narrow window's layout); the
            # export runs once every step is prepared, so no query's answer is waiting here
            QApplication.processEvents()
            QApplication.sendPostedEvents()
            image = self.grab().toImage()
            path = out / f"step-{i + 1:02d}.png"
            if not image.save(str(path)):
                raise OSError(f"could not write {path}")
            paths.append(path)
        write_pdf(out / "talk.pdf", paths)
        return paths


def write_pdf(path: Path, images: list[Path]) -> None:
    """The slides in one PDF, a landscape 16:9 page each (a backup deck for the speaker)."""
    writer = QPdfWriter(str(path))
    writer.setPageSize(QPageSize(QSizeF(338.0, 190.0), QPageSize.Unit.Millimeter))  # 16:9
    writer.setResolution(144)
    painter = QPainter(writer)
    try:
        for n, file in enumerate(images):
            if n:
                writer.newPage()
            image = QImage(str(file))
            target = painter.viewport()
            scaled = image.size().scaled(target.size(), Qt.AspectRatioMode.KeepAspectRatio)
            painter.drawImage(target.x(), target.y(), image.scaled(scaled, Qt.AspectRatioMode.KeepAspectRatio,
                                                                   Qt.TransformationMode.SmoothTransformation))
    finally:
        painter.end()
