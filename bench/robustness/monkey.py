"""A seeded, replayable monkey for the main window (issue 37): random user actions on every tab — typing
(hostile text included), clicking word buttons, switching models, layers, views and tabs, opening
scenes, zooming, adding views to the talk deck, opening the talk window and stepping through it with a
speaker's keys, closing it and dialogs,
starting and stopping small trainings, moving the checkpoint scrubber — while a 10 ms timer measures
how long the event loop was kept from it (a stall: a tick later than 250 ms) and every uncaught
exception is counted.

The same seed replays the same choices: each action picks its target among the widgets shown at that
moment, in a stable order (their place in the widget tree), with the seeded ``random.Random``; the log
says what was done, step by step (``Monkey.log``), so that a failure can be walked through again.

Used by tests/explorer/test_chaos.py (a short run in the suite) and bench/robustness/chaos.py (30 minutes,
RSS and the stall histogram into bench/robustness/RESULTS.md).
"""

from __future__ import annotations

import contextlib
import logging
import random
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QObject, QTimer
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSlider,
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QToolButton,
    QWidget,
)

from bench.robustness.core_use import CoreLedger, schedstat_ms
from bench.robustness.line_log import LineLog
from explorer.user_input import note_input
from explorer.widgets.descendants import descendants

STALL_MS = 250
DECK_MAX = 12  # a talk's steps: past this the monkey drops the first step as it adds one, as a speaker edits
TICK_MS = 10

HOSTILE = [
    "",
    " ",
    "[MASK]",
    "[MASK] [MASK] [MASK] [MASK] [MASK] [MASK] [MASK] [MASK]",
    "bank " * 400,
    "The river [MASK] was muddy 🌊🏦 after the rain.",
    "‮ reversed text ‬ with bidi controls",
    "e\u0301\u0301\u0301 combining accents and \u200b zero widths",
    "<b>html</b> &amp; <script>alert(1)</script>",
    "tab\tand\nnewline\r\nand \x00 nul and \x1b[31m escape",
    "日本語のテキストと中文和한국어",
    "a" * 3000,
    "- + - + king - man + woman",
    "The man went to the [MASK] to buy a gallon of milk.",
    "She deposited the money at the bank on Monday.",
    "We sat on the bank of the river and watched the boats.",
    "He hit the ball with a bat. A bat flew out of the cave at night.",
    "The children play in the park. We saw a play at the theatre.",
]

WORDS = ["bank", "play", "bat", "star", "spring", "king", "queen", "river", "money", "match", "the", "zzqx", ""]

# buttons that open a modal file dialog (their own event loop; a person answers them) or leave the app
NOT_PRESSED = ("…", "...", "Quit", "Clear the cache", "Export", "Save")


@dataclass
class Stalls:
    """Gaps between ticks of a timer that should fire every TICK_MS: how long the window could not answer."""

    worst_ms: float = 0.0
    over: list[float] = field(default_factory=list)  # the gaps over STALL_MS
    histogram: dict[str, int] = field(default_factory=lambda: {"<50": 0, "50-100": 0, "100-250": 0, "250-1000": 0,
                                                                ">1000": 0})

    def add(self, gap_ms: float) -> None:
        self.worst_ms = max(self.worst_ms, gap_ms)
        bucket = ("<50" if gap_ms < 50 else "50-100" if gap_ms < 100 else "100-250" if gap_ms < STALL_MS
                  else "250-1000" if gap_ms < 1000 else ">1000")
        self.histogram[bucket] += 1
        if gap_ms >= STALL_MS:
            self.over.append(gap_ms)


def gui_state(stat_path: str) -> str:
    """One thread's scheduler state from its /proc stat line ("R" running or runnable, "S" asleep, "D" in the
    kernel), "?" where there is no /proc."""
    try:
        with open(stat_path, encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


class _Collect(logging.Handler):
    """Keeps the "unexpected failure" records the app logs (from any thread), and writes each with its traceback
    to stderr as it comes: a report names only its last line, and run Z34's one failure had no other trace."""

    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.ERROR)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "unexpected failure" in message:
            self.into.append(message)
            print(message, file=sys.stderr, flush=True)


class Monkey(QObject):
    """Drive ``window`` (explorer.main_window.MainWindow) with seeded random actions, one every ``pace_ms``."""

    def __init__(self, window: Any, seed: int, pace_ms: int = 60, train: bool = False,
                 history_run: str | None = None) -> None:
        super().__init__(window)
        self.window, self.rng, self.pace_ms = window, random.Random(seed), pace_ms
        self.train, self.history_run = train, history_run
        self.log = LineLog()  # (one buffer, not a str per action among the memory the bench measures)
        self.exceptions: list[str] = []
        # failures the app caught and showed, but logged as unexpected (explorer.failures.explain: not an
        # engine refusal, so a bug) — a traceback each
        self.unexpected: list[str] = []
        self._failures = _Collect(self.unexpected)
        self.stalls = Stalls()
        self.stalls_with_collection = 0  # stalls in which a garbage collection of 100 ms or more ran
        self._logged_at_tick = 0
        self.steps = 0
        self._talk: Any = None
        self._clock = QElapsedTimer()
        self._ticker = QTimer(self, interval=TICK_MS)
        self._ticker.timeout.connect(self._tick)
        self._actor = QTimer(self, interval=pace_ms)
        self._actor.timeout.connect(self._act)
        self._measuring = False
        self._previous_hook: Callable[..., Any] | None = None
        self.culprits: dict[str, int] = {}  # where the GUI thread was while it stalled: frame -> samples
        # each kind of action: how many were done, and how many of the stalls came after one (the last action before
        # the stall: its own work, or what it set off on the GUI thread — a relayout, a reply drawn)
        self.done_by_kind: dict[str, int] = {}
        self.stalls_after: dict[str, int] = {}
        # each stall's window on CLOCK_MONOTONIC (seconds; perf's ``-k mono`` clock) and the action before it: a
        # profile of the GUI thread's C stacks cut to the stalls (bench/robustness/perf_stalls.py)
        self.stall_windows: list[tuple[float, float, str]] = []
        self._last_kind = ""
        self._last_tick = time.monotonic()
        self._gui_thread = threading.get_ident()
        # the GUI thread's scheduler state while it stalls (Linux: /proc/self/task/TID/stat): "R" it was working
        # or ready to (painting, layout, our code, or waiting for a core), "S" it slept (waiting for the GIL or a
        # lock): which of the two a stall was
        self._gui_stat = f"/proc/self/task/{threading.get_native_id()}/stat"
        self.gui_states: dict[str, int] = {}
        # and, between two samples of one stall, how its time split (schedstat): on a core, waiting for one
        # (runnable: the workers had the cores), or neither (asleep: the GIL, a lock, I/O)
        self._gui_schedstat = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        self.gui_time_ms = {"on a core": 0.0, "waiting for a core": 0.0, "asleep": 0.0}
        self._last_sched: tuple[float, float, float] | None = None  # (when, on a core, waiting) at the last sample
        # and, stall by stall, who had the cores (bench/robustness/core_use.py)
        self.ledger = CoreLedger(threading.get_native_id())
        self._sampling = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True, name="monkey-stall-sampler")
        self.start_theme = str(window.kept.store.value("theme", "light"))  # (a quiet moment puts it back)
        self.start_width = window.width()  # (``sprawling`` measures against it)
        self.actions: list[tuple[str, Callable[[], str]]] = [
            ("tab", self.switch_tab), ("type", self.type_text), ("type", self.type_text), ("click", self.click),
            ("click", self.click), ("choose", self.choose), ("slide", self.slide), ("spin", self.spin),
            ("tick", self.tick_box), ("view", self.switch_view), ("scene", self.open_scene), ("zoom", self.zoom),
            ("deck", self.add_to_deck), ("talk", self.talk), ("present", self.present), ("dialogs", self.close_dialogs),
            ("unload", self.unload), ("theme", self.theme), ("neurons", self.neurons),
        ]
        if train:
            self.actions += [("train", self.training)]
        if history_run:
            self.actions += [("scrub", self.scrub)]

    # ---------------------------------------------------------------- running

    def start(self) -> None:
        self._previous_hook = sys.excepthook
        sys.excepthook = self._excepthook
        logging.getLogger("word2bert.explorer").addHandler(self._failures)
        self._clock.start()
        self._ticker.start()
        self._actor.start()
        self._sampler.start()

    def measure(self, on: bool = True) -> None:
        """Count stalls from now on (after the warm-up: loading the models at start is not the monkey's)."""
        self._measuring = on
        self._clock.restart()

    def pause(self, on: bool = True) -> None:
        """No more actions (and no stalls counted) until ``pause(False)``: a quiet moment to measure in."""
        if on:
            self._actor.stop()
            self._measuring_before_pause, self._measuring = self._measuring, False
        else:
            self._measuring = getattr(self, "_measuring_before_pause", self._measuring)
            self._clock.restart()
            self._actor.start()

    def stop(self) -> None:
        self._sampling.set()
        self._actor.stop()
        self._ticker.stop()
        self.close_dialogs()
        self.close_talk()
        self.window.stop_jobs(wait_ms=60_000)  # an index build, a corpus atlas, a training: stopped as Stop does
        logging.getLogger("word2bert.explorer").removeHandler(self._failures)
        if self._previous_hook is not None:
            sys.excepthook = self._previous_hook

    def _excepthook(self, kind: type[BaseException], value: BaseException, tb: Any) -> None:
        """Count it, and say it on stderr: one that ends the bench's own script reaches this hook too, and
        kept silent it ended the chaos bench with exit status 1 and nothing said (the runs' "silent rc=1")."""
        text = "".join(traceback.format_exception(kind, value, tb))
        self.exceptions.append(text)
        self.log.append(f"!! exception: {kind.__name__}: {value}")
        with contextlib.suppress(OSError, ValueError, AttributeError):  # (stderr closed or gone: nothing to tell)
            sys.__stderr__.write(f"monkey: uncaught exception (counted):\n{text}")  # type: ignore[union-attr]
            sys.__stderr__.flush()  # type: ignore[union-attr]

    def _sample(self) -> None:
        """While the GUI thread has not ticked for 200 ms, note where it is (our code's innermost frame and
        the library frame under it) every 50 ms: what a stall was spent on."""
        while not self._sampling.wait(0.05):
            stalling = self._measuring and time.monotonic() - self._last_tick >= 0.2
            self.ledger.sample(in_stall=stalling)
            if not stalling:
                self._last_sched = None
                continue
            frame = sys._current_frames().get(self._gui_thread)
            ours, below = "", ""
            while frame is not None:
                where = f"{frame.f_code.co_filename.rsplit('/', 2)[-1]}:{frame.f_code.co_name}"
                if "/word2bert/" in frame.f_code.co_filename or "/explorer/" in frame.f_code.co_filename \
                        or "/engine/" in frame.f_code.co_filename:
                    ours = ours or where
                elif not ours:
                    below = below or where
                frame = frame.f_back
            key = f"{ours or '?'} > {below or '-'}"
            self.culprits[key] = self.culprits.get(key, 0) + 1
            state = gui_state(self._gui_stat)
            self.gui_states[state] = self.gui_states.get(state, 0) + 1
            now, sched = time.monotonic(), schedstat_ms(self._gui_schedstat)
            if sched is not None:
                last = self._last_sched
                if last is not None and now - last[0] < 0.2:  # the same stall as the last sample
                    wall = (now - last[0]) * 1000
                    on, waiting = sched[0] - last[1], sched[1] - last[2]
                    self.gui_time_ms["on a core"] += on
                    self.gui_time_ms["waiting for a core"] += waiting
                    self.gui_time_ms["asleep"] += max(0.0, wall - on - waiting)
                self._last_sched = (now, *sched)

    def _tick(self) -> None:
        self._last_tick = time.monotonic()
        gap = self._clock.restart()
        since, self._logged_at_tick = self.log[self._logged_at_tick:], len(self.log)
        if self._measuring:
            self.stalls.add(max(0.0, float(gap)))
            if gap >= STALL_MS:
                self.stalls_after[self._last_kind] = self.stalls_after.get(self._last_kind, 0) + 1
                self.stall_windows.append((self._last_tick - gap / 1000, self._last_tick, self._last_kind))
                self.ledger.stall(self._last_tick - gap / 1000, self._last_tick, float(gap), self._last_kind)
                # a slow garbage collection inside the gap (bench/robustness/gc_timer.py logs them)
                self.stalls_with_collection += any(line.startswith("~~ garbage") for line in since)
                self.log.append(f"!! stall {gap} ms (tab {self.window.tabs.tabText(self.window.tabs.currentIndex())})")

    def _act(self) -> None:
        name, action = self.rng.choice(self.actions)
        self.steps += 1
        self._last_kind = name
        if self._measuring:
            self.done_by_kind[name] = self.done_by_kind.get(name, 0) + 1
        began = time.perf_counter()
        note_input()  # (its actions call the widgets' slots, not the window's input events: it says it acted)
        try:
            done = action()
        except Exception as e:  # a monkey action's own slip is not the app's: logged, counted apart
            done = f"(could not: {type(e).__name__}: {e})"
        took = (time.perf_counter() - began) * 1000
        self.log.append(f"{self.steps:5d} {name}: {done}" + (f"  [{took:.0f} ms]" if took >= 50 else ""))

    # ---------------------------------------------------------------- what is on screen

    def panel(self) -> QWidget:
        return self.window.tabs.currentWidget()

    def shown(self, kind: type | tuple[type, ...], within: QWidget | None = None) -> list[Any]:
        """The widgets of ``kind`` a person could use now, in the widget tree's order (stable: replayable)."""
        root = within or self.panel()
        # (not ``findChildren``: it leaves a dead wrapper for each of Qt's own widgets it passed, once Qt deletes it)
        return [w for w in descendants(root, kind) if w.isVisible() and w.isEnabled()]

    def sprawling(self, times: float = 3.0) -> list[str]:
        """Widgets shown (the windows themselves and the talk window's too) more than ``times`` as wide as the main
        window was when the monkey began: the user's text laying a view out past the window's edge, where it is cut
        off, and every repaint draws controls that long (3,000 letters typed into the learning rate made the
        Pretrain tab 22,000 px wide, a step's title the talk window 93,000: the chaos bench's longest paints).
        Content a scroll area scrolls counts too."""
        limit = times * self.start_width
        found: list[str] = []
        for top in (self.window, self._talk):
            if top is None:
                continue
            with contextlib.suppress(RuntimeError):  # (a talk window closed and deleted)
                for widget in (top, *descendants(top, QWidget)):  # (``shown`` says why not ``findChildren``)
                    if widget.isVisible() and widget.width() > limit:
                        found.append(f"{type(widget).__name__} {widget.width()} px wide in {type(top).__name__}")
        return found

    def pick(self, items: list[Any]) -> Any:
        return items[self.rng.randrange(len(items))] if items else None

    # ---------------------------------------------------------------- the actions

    def switch_tab(self) -> str:
        index = self.rng.randrange(self.window.tabs.count())
        self.window.tabs.setCurrentIndex(index)
        return self.window.tabs.tabText(index)

    def type_text(self) -> str:
        target = self.pick([w for w in self.shown((QLineEdit, QPlainTextEdit)) if not w.isReadOnly()
                            and not isinstance(w.parent(), (QComboBox, QSpinBox))])
        if target is None:
            return "nothing to type in"
        text = self.pick(HOSTILE) if self.rng.random() < 0.7 else self.pick(WORDS)
        if isinstance(target, QPlainTextEdit):
            target.setPlainText(text)
        elif self.rng.random() < 0.5:  # keystroke by keystroke, as typed (each one a new query, the old dropped)
            target.clear()
            for ch in text[:40]:
                target.insert(ch)
        else:
            target.setText(text)
        return f"{type(target).__name__} {target.objectName() or ''} <- {text[:40]!r}"

    def click(self) -> str:
        buttons = [b for b in self.shown(QAbstractButton)
                   if isinstance(b, (QPushButton, QToolButton)) and not isinstance(b, QCheckBox)
                   and not any(mark in b.text() for mark in NOT_PRESSED) and b.text()
                   and (self.train or b.text() not in ("Start", "Resume", "Ablation", "Build corpus index",
                                                       "Index all models", "Run all", "Senses emerging: score every checkpoint"))]
        button = self.pick(buttons)
        if button is None:
            return "nothing to click"
        button.click()
        return f"button {button.text()!r}"

    def choose(self) -> str:
        box = self.pick([b for b in self.shown(QComboBox) if b.count() > 1])
        if box is None:
            return "no choice"
        box.setCurrentIndex(self.rng.randrange(box.count()))
        return f"combo -> {box.currentText()!r}"

    def slide(self) -> str:
        slider = self.pick([s for s in self.shown(QAbstractSlider) if s.maximum() > s.minimum()])
        if slider is None:
            return "no slider"
        slider.setValue(self.rng.randint(slider.minimum(), slider.maximum()))
        return f"slider -> {slider.value()}"

    def spin(self) -> str:
        box = self.pick(self.shown(QSpinBox))
        if box is None:
            return "no spin box"
        box.setValue(self.rng.randint(box.minimum(), min(box.maximum(), box.minimum() + 20)))
        return f"spin -> {box.value()}"

    def tick_box(self) -> str:
        box = self.pick(self.shown(QCheckBox))
        if box is None:
            return "no check box"
        box.click()
        return f"check {box.text()!r} -> {box.isChecked()}"

    def switch_view(self) -> str:
        tabs = self.pick([t for t in self.shown(QTabWidget) if t.count() > 1])
        if tabs is None:
            return "no inner views"
        index = self.rng.randrange(tabs.count())
        tabs.setCurrentIndex(index)
        return f"view {tabs.tabText(index)!r}"

    def open_scene(self) -> str:
        from explorer.scenes import builtin_scenes

        name = self.pick(builtin_scenes() + ["no-such-scene"])
        self.window.open_scene(name)
        return name

    def zoom(self) -> str:
        step = self.pick([1, -1, 0, 1, -1])
        self.window.zoom(step)
        return str(self.window.kept.store.value("zoom"))

    def theme(self) -> str:
        """View → Light or Dark theme: every plot, list and mark takes the new colours (a talk keeps its black)."""
        name = self.pick(["light", "dark"])
        self.window.set_theme(name)
        return f"theme {name}"

    def add_to_deck(self) -> str:
        before = len(self.window.talk_mode.deck.steps)
        dropped = ""
        if before >= DECK_MAX:  # a deck of a talk's length: without a cap it grew to 200 steps in 12 minutes
            del self.window.talk_mode.deck.steps[0]
            dropped = ", the first dropped"
        self.window.talk_mode.add_view()
        return f"deck {before} -> {len(self.window.talk_mode.deck.steps)} steps{dropped}"

    def close_talk(self) -> bool:
        """Close the talk window if the monkey opened one (Esc); whether there was one."""
        if self._talk is None:
            return False
        with contextlib.suppress(RuntimeError):  # (gone already: a closed talk window is deleted)
            self._talk.close()
        self._talk = None
        return True

    def talk(self) -> str:
        if self.close_talk():
            return "talk closed"
        if not self.window.talk_mode.deck.steps:
            return "no deck yet"
        self._talk = self.window.talk_mode.present(self.window.talk_mode.deck, full_screen=False)
        return "talk opened"

    def present(self) -> str:
        """A speaker's key in the talk window (opened first if none is): next, back, first, last, a step's number,
        now and then Esc — each step's panel built as it is reached, while the others are prepared."""
        if self._talk is None:
            return self.talk()
        from PySide6.QtCore import QEvent, Qt
        from PySide6.QtGui import QKeyEvent

        key, text = self.pick([(Qt.Key.Key_Right, ""), (Qt.Key.Key_Right, ""), (Qt.Key.Key_Space, " "),
                               (Qt.Key.Key_PageDown, ""), (Qt.Key.Key_Left, ""), (Qt.Key.Key_PageUp, ""),
                               (Qt.Key.Key_Home, ""), (Qt.Key.Key_End, ""), (Qt.Key.Key_3, "3"),
                               (Qt.Key.Key_Escape, "")])
        try:  # to what has the talk window's keys (a step's text box lets only the clicker's through)
            target = QApplication.focusWidget()
            if target is None or not self._talk.isAncestorOf(target):
                target = self._talk.stack
            QApplication.sendEvent(target, QKeyEvent(QEvent.Type.KeyPress, key, Qt.KeyboardModifier.NoModifier, text))
            if key == Qt.Key.Key_Escape:
                self._talk = None
                return "talk left (Esc)"
            return f"talk key {key.name}: step {self._talk.current + 1} of {len(self._talk.steps)}"
        except RuntimeError:  # (closed and deleted already)
            self._talk = None
            return "talk gone"

    def unload(self) -> str:
        """Unload a model from the library as a user would (Delete on its row): a checkpoint the scrubber
        pinned if there is one, else any model — loaded again at once, as a user reopens it."""
        session, library = self.window.session, self.window.library
        names = list(session.models)
        if not names:
            return "nothing loaded"
        pinned = [n for n in names if " @ step " in n]
        name = self.pick(pinned or names)
        rows = [library.loaded.child(i) for i in range(library.loaded.childCount())]
        row = next((r for r in rows if r.text(0) == name), None)
        if row is None:
            return f"{name}: not listed"
        again = self.window.talk_mode.load_key(name)  # how it loads again: by name, or its folder's path
        if not library.unload(row):
            return f"{name}: not unloaded"
        if pinned:
            return f"unloaded {name}"
        session.load(again)
        return f"unloaded {name}, loading {again} again"

    def neurons(self) -> str:
        """What makes a neuron fire: the neuron window opened for a loaded Transformer (the library's menu), or, while
        it is open, another neuron asked from its boxes, a word's neurons (some not words) or Cancel."""
        from engine.api import Capability

        window = self.window.neuron_window
        if window is None or not window.isVisible() or self.rng.random() < 0.25:
            names = [n for n, h in self.window.session.models.items() if Capability.ATTENTION in h.capabilities]
            if not names:
                return "no Transformer loaded"
            name = self.pick(names)
            self.window.show_neurons(name)
            return f"opened {name}'s"
        what = self.rng.random()
        if what < 0.4:
            window.layer.setValue(self.rng.randint(1, 12))
            window.neuron.setValue(self.rng.randint(0, 4000))
            window.show_button.click()
            return f"layer {window.layer.value()} neuron {window.neuron.value()}"
        if what < 0.85:
            word = self.pick(["bank", "play", "my", "river bank", "", "qzxq", "the"])
            window.by_word.word.setText(word)
            window.by_word.find_button.click()
            return f"the neurons for {word!r}"
        window.cancel.click()
        return "cancel"

    def close_dialogs(self) -> str:
        closed = 0
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, (QDialog, QMessageBox)) and widget.isVisible():
                widget.reject()
                closed += 1
        return f"{closed} closed"

    def training(self) -> str:
        """A small training run from the Pretrain tab (n-gram or word2vec, seconds), or Stop on one running."""
        train = self.window.train
        if train.job is not None and train.job.running:
            train.stop.click()
            return "stop"
        self.window.tabs.setCurrentWidget(train)
        train.kind.setCurrentText(self.pick(["ngram", "word2vec"]))
        train.corpus.setCurrentText("bbc-news")
        train.start.click()
        return f"start {train.kind.currentText()}"

    def scrub(self) -> str:
        history = self.window.history
        if history.run_dir != self.history_run:
            self.window.tabs.setCurrentWidget(history)
            history.open_run(self.history_run)
            return "open run"
        slider = history.slider
        if slider.maximum() > slider.minimum():
            slider.setValue(self.rng.randint(slider.minimum(), slider.maximum()))
        return f"checkpoint {slider.value()}"


def open_files() -> int:
    import os

    return len(os.listdir("/proc/self/fd"))


def open_file_kinds(top: int = 6) -> str:
    """What the open files are (a leak shows as one kind growing): counts by folder or kind."""
    import collections
    import os

    kinds: collections.Counter[str] = collections.Counter()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if "/word2bert/" in target:  # the cache folder: which kind of entry
            parts = target.split("/word2bert/", 1)[1].split("/")
            target = f"cache/{parts[0]}/…/{parts[-1]}"
        elif target.startswith("/"):
            parts = target.split("/")
            target = "/".join(parts[:4]) + ("/…" + os.path.splitext(target)[1] if len(parts) > 4 else "")
        else:
            target = target.split(":")[0]  # socket, pipe, anon_inode
        kinds[target] += 1
    return ", ".join(f"{k} ×{n}" for k, n in kinds.most_common(top))


def threads() -> int:
    import os

    return len(os.listdir("/proc/self/task"))


def wait(app: QCoreApplication, seconds: float) -> None:
    """Run the window's event loop for ``seconds``, as the app's own loop runs: it waits for events when there are
    none, and says so (``aboutToBlock``: what explorer.window_work watches). Until the fifty-fifth session it called
    ``processEvents`` every 5 ms, which never waits and says it is awake at every call."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(max(0, round(seconds * 1000)), loop.quit)
    loop.exec()
