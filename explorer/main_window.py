"""Thin shell: the panels, the model library dock, the status bar, menus from declared actions and the
settings kept between runs (window layout, theme, zoom, recent models, last sentences)."""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings, Qt, QThreadPool, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
)

from explorer.failures import explain
from explorer.panels.attention import AttentionPanel
from explorer.panels.finetune import FinetunePanel
from explorer.panels.history import HistoryPanel
from explorer.panels.layers import LayersPanel
from explorer.panels.library import LibraryPanel
from explorer.panels.neighbours import NeighboursPanel
from explorer.panels.polysemy.panel import PolysemyPanel
from explorer.panels.predictions.panel import PredictionsPanel
from explorer.panels.train import TrainPanel
from explorer.session import Session
from explorer.tasks import (
    BackgroundJob,
    TaskRunner,
    stop_queries,
    wait_for_workers,
)
from explorer.theme import apply_theme, apply_zoom
from explorer.training_process import ProcessTrainJob
from explorer.widgets.tabs import PanelTabs
from explorer.window_work import window_working

if TYPE_CHECKING:
    from explorer.scenes import Scene
    from explorer.talk.deck import Deck


def device_summary() -> tuple[str, str]:
    """The device in words, and its type ("cuda", "mps", "cpu")."""
    from engine import api

    return api.device_summary(), api.device_type()


def _clear_cache() -> str:
    from engine import api

    entries, size = api.clear_cache()
    return f"cache cleared: {entries:,} {'entry' if entries == 1 else 'entries'}, {size / 2**20:,.1f} MB freed ({api.cache_folder()})"


def process_memory_mb() -> float:
    try:
        with open(f"/proc/{os.getpid()}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class MainWindow(QMainWindow):
    def __init__(self, session: Session, remember: bool = True) -> None:
        """``remember=False``: a run that only makes pictures (``--screenshot``, ``--export``) opens at the
        default size and layout and writes nothing back, so it neither depends on nor changes how the user left
        the window (its scene's sentences, a geometry squeezed onto an 800-pixel offscreen screen)."""
        super().__init__()
        self.remember = remember
        from explorer.garbage import collect_on_the_gui_thread
        from explorer.tasks import responsive_interpreter
        from explorer.user_input import watch_input

        responsive_interpreter()  # (the process's: the window's thread gets the GIL back sooner)
        collect_on_the_gui_thread()  # (the process's: cycles holding Qt objects are freed on this thread)
        watch_input(QApplication.instance())  # (the process's: its slowest collection waits for a pause in input)
        self.session = session
        self.settings = QSettings("word2bert", "word2bert")
        self._zoom = 0  # (the user's, from the settings: _restore)
        self.setWindowTitle("word2bert")
        self.resize(1200, 760)
        self.tabs = PanelTabs()
        self.polysemy = PolysemyPanel(session)
        self.neighbours = NeighboursPanel(session)
        self.attention = AttentionPanel(session)
        self.predictions = PredictionsPanel(session)
        self.train = TrainPanel(session)
        self.finetune = FinetunePanel(session)
        self.history = HistoryPanel(session)
        self.layers = LayersPanel(session)
        self.tabs.addTab(self.polysemy, "Polysemy lens")
        self.tabs.addTab(self.neighbours, "Neighbours")
        self.tabs.addTab(self.attention, "Attention")
        self.tabs.addTab(self.predictions, "Predictions")
        self.tabs.addTab(self.layers, "Layer similarity")
        self.tabs.addTab(self.train, "Pretrain")
        self.tabs.addTab(self.finetune, "Fine-tune")
        self.tabs.addTab(self.history, "Run history")
        self.predictions.focus_token.connect(self._show_attention_of)
        self.setCentralWidget(self.tabs)
        self.library = LibraryPanel(session)
        dock = QDockWidget("Model library", self)
        dock.setObjectName("library")
        dock.setWidget(self.library)
        dock.setMinimumWidth(260)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        self.library_dock = dock
        # a window made narrower (or opened on a smaller screen) takes the room from the library, not the panel
        self._yield_room = QTimer(self, singleShot=True, interval=0)
        self._yield_room.timeout.connect(self._library_yields)
        self.tabs.currentChanged.connect(self._yield_room.start)
        self.library.go_on_from.connect(self._go_on_from)
        self._to_show = ""  # a run asked to be explored: shown in its family's view once it has loaded
        self.train.explore.connect(self.explore)
        self.library.explore.connect(self.explore)
        self.library.reveal.connect(self.show_model)
        session.loaded.connect(self._show_when_loaded)
        from explorer.talk.deck import Deck

        self.deck = Deck("My talk")  # views added with Talk → Add this view
        self.talk: object | None = None
        self._status_bar(session)
        self._menus()
        self._restore()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._yield_room.start()

    def _library_yields(self) -> None:
        """The model library gives up width, down to its least, while the panel shown lacks it. Qt keeps a dock's
        width and squeezes the central widget instead: a library left 720 pixels wide, in a window opened 800 wide,
        left the tabs 127 pixels and the panel cut off at their edge. Asked when the window is resized and when another
        tab is shown; a dock the user drags wider in between stays as they left it until then."""
        from explorer.widgets.tabs import width_short

        dock = self.library_dock
        short, spare = width_short(self.tabs), dock.width() - dock.minimumWidth()
        if short > 0 and spare > 0 and dock.isVisible() and not dock.isFloating():
            self.resizeDocks([dock], [dock.width() - min(short, spare)], Qt.Orientation.Horizontal)

    def _go_on_from(self, kind: str, source: str) -> None:
        self.train.go_on_from(kind, source)
        self.tabs.setCurrentWidget(self.train)

    def explore(self, path: str) -> None:
        """Load a run (a name or a folder) and, once loaded, show it where its family is seen best."""
        self._to_show = path
        self.session.load(path)  # (already on its way: it is shown when it arrives)

    def _show_when_loaded(self, asked: str, name: str) -> None:
        if asked and asked == self._to_show:
            self._to_show = ""
            self.show_model(name)

    def show_model(self, name: str) -> bool:
        """Turn to the view that shows what the loaded model ``name`` is for (explorer.home_view), picked there,
        with the view's sentences and word kept. False where no view shows it."""
        from explorer.home_view import home_name, home_view

        handle = self.session.models.get(name)
        home = home_view(handle.capabilities) if handle is not None else None
        if handle is None or home is None:
            return False
        panel_name, view = home
        panel: PredictionsPanel | NeighboursPanel | PolysemyPanel = (
            self.predictions if panel_name == "predictions" else self.neighbours if panel_name == "neighbours"
            else self.polysemy)
        if panel is self.predictions and view in self.predictions.VIEWS:
            self.predictions.views.setCurrentIndex(self.predictions.VIEWS.index(view))  # (its sentences are kept)
        scene = panel.current_scene()
        scene.contextual_model = name
        if panel is self.polysemy:
            from explorer.panels.polysemy.text import repeated_word

            if scene.view == "static":
                scene.view = view  # a contextual model: its vectors, not the static column alone
            # no word clicked yet: the one the sentences share ("bank"), so the new model answers at once
            scene.selection = scene.selection or repeated_word(scene.sentences)
        self.tabs.setCurrentWidget(panel)
        panel.apply_scene(scene)
        self.statusBar().showMessage(f"{name} shown in {home_name(handle.capabilities)}")
        return True

    # ------------------------------------------------------------ status bar

    def _device_found(self, found: tuple[str, str]) -> None:
        name, kind = found
        self.device_label.setText(f"device: {name}")
        self.train.set_auto_device(kind)  # "auto" in the Train tab: the values a run there will use
        if self.statusBar().currentMessage() == "starting…":  # nothing is loading: say what to do
            self.statusBar().showMessage("ready: double-click a model in the library, or File → Open")

    def _status_bar(self, session: Session) -> None:
        self.device_label = QLabel("device: …")
        self.memory_label = QLabel("")
        self.jobs_label = QLabel("")
        for w in (self.jobs_label, self.memory_label, self.device_label):
            self.statusBar().addPermanentWidget(w)
        self.statusBar().showMessage("starting…")
        session.status.connect(self.statusBar().showMessage)
        from explorer.notices import NOTICE_MS, Notices

        self.notices = Notices(self)  # the engine's notices: a damaged cache entry rebuilt, a cache not writable
        self.notices.said.connect(lambda text: self.statusBar().showMessage(text, NOTICE_MS))
        self._cache_runner = TaskRunner(self, QThreadPool.globalInstance())
        self._cache_runner.finished.connect(self._cache_cleared)
        self._cache_runner.failed.connect(self.statusBar().showMessage)
        self._device = TaskRunner(self, QThreadPool.globalInstance())
        self._device.finished.connect(self._device_found)
        self._device.submit(device_summary)
        self._ticker = QTimer(self, interval=1000)
        self._ticker.timeout.connect(self._tick)
        self._ticker.start()
        session.modelsChanged.connect(self._tick)  # "loading N" goes the moment the last model arrives

    def _tick(self) -> None:
        self.memory_label.setText(f"memory {process_memory_mb():,.0f} MB")
        jobs = []
        if self.session.loading:
            jobs.append(f"loading {self.session.loading}")
        if self.polysemy.indexer.running:
            jobs.append(f"indexing {self.polysemy.progress.value() / 10:.0f}%")
        if self.train.job is not None and self.train.job.running:
            jobs.append(f"training {self.train.progress.value() / 10:.0f}%")
        self.jobs_label.setText(" · ".join(jobs))

    # ------------------------------------------------------------ menus

    def _menus(self) -> None:
        from explorer.scenes import builtin_scenes

        declared: dict[str, list[tuple[str, Any, Any]]] = {
            "&File": [("Open run or Hugging Face folder…", QKeySequence.StandardKey.Open, self.open_folder),
                      ("Open vectors file…", None, self.open_file),
                      ("Open a run's history (checkpoints)…", None, self.open_history),
                      ("Clear the cache folder…", None, self.clear_cache),
                      ("Quit", QKeySequence.StandardKey.Quit, self.close)],
            "&View": [("Zoom in", QKeySequence.StandardKey.ZoomIn, lambda: self.zoom(+1)),
                      ("Zoom out", QKeySequence.StandardKey.ZoomOut, lambda: self.zoom(-1)),
                      ("Reset zoom", "Ctrl+0", lambda: self.zoom(0)),
                      ("Light theme", None, lambda: self.set_theme("light")),
                      ("Dark theme", None, lambda: self.set_theme("dark"))],
            "&Scenes": [(name, None, lambda _=False, n=name: self.open_scene(n)) for name in builtin_scenes()]
            + [("Open scene…", None, self.open_scene_file), ("Save scene…", None, self.save_scene_file)],
            "&Talk": [("Present the built-in talk", "F5", lambda: self.start_talk(None)),
                      ("Present a deck…", None, self.open_deck_file),
                      ("Add this view to the deck", "Ctrl+D", self.add_to_deck),
                      ("Edit the deck…", None, self.edit_deck)],
        }
        for title, actions in declared.items():
            menu = self.menuBar().addMenu(title)
            for text, shortcut, slot in actions:
                action = QAction(text, self)
                if shortcut is not None:
                    action.setShortcut(shortcut)
                action.triggered.connect(slot)
                menu.addAction(action)

    def clear_cache(self, confirm: bool = True) -> None:
        """Remove what the app built once to answer fast (converted corpora, word indexes, occurrence
        vectors): it is built again when next needed."""
        from engine.api import cache_folder

        if confirm and QMessageBox.question(
                self, "Clear the cache folder", f"Remove everything in {cache_folder()}?\n\nCorpora, word indexes "
                "and occurrence vectors are built again when next needed (seconds to a minute each).") \
                != QMessageBox.StandardButton.Yes:
            return
        self._cache_runner.submit(_clear_cache)

    def _cache_cleared(self, text: str) -> None:
        self.statusBar().showMessage(text, 15_000)

    def zoom(self, step: int) -> None:
        self._zoom = 0 if step == 0 else max(-3, min(8, self._zoom + step))
        if self.remember:
            self.settings.setValue("zoom", self._zoom)
        apply_zoom(QApplication.instance(), self._zoom)

    def set_theme(self, name: str) -> None:
        if self.remember:
            self.settings.setValue("theme", name)
        apply_theme(QApplication.instance(), name)

    # ------------------------------------------------------------ scenes and files

    def open_scene(self, name_or_path: str) -> None:
        from explorer.scenes import SceneError, load_scene

        try:
            scene = load_scene(name_or_path)
        except SceneError as e:
            self.statusBar().showMessage(explain(e))
            return
        from explorer.scenes import model_name

        for model in scene.models:
            if model_name(model) not in self.session.models:  # (a folder by its path: loaded under its name)
                self.session.load(model)
        panel = self.scene_panel(scene)
        self.tabs.setCurrentWidget(panel)
        (self.finetune.curves if panel is self.finetune else panel).apply_scene(scene)
        self.statusBar().showMessage(f"scene: {scene.title or name_or_path}")

    def scene_panel(self, scene: Scene) -> Any:
        if scene.panel == "curves":  # the Fine-tune tab's recorded curves
            self.finetune.results.setCurrentWidget(self.finetune.curves)
            return self.finetune
        panels = {"attention": self.attention, "predictions": self.predictions, "neighbours": self.neighbours,
                  "history": self.history, "layers": self.layers}
        return panels.get(scene.panel, self.polysemy)

    def _show_attention_of(self, text: str, position: int) -> None:
        """A predicted token was clicked: where does that position attend?"""
        self.tabs.setCurrentWidget(self.attention)
        self.attention.show_token(text, position)

    # ------------------------------------------------------------ talk mode

    def current_panel(self) -> Any:
        current = self.tabs.currentWidget()
        if current is self.finetune:  # its recorded curves (or the runs it overlays) as a step
            return self.finetune.curves
        shown = (self.attention, self.predictions, self.neighbours, self.history, self.layers)
        return current if current in shown else self.polysemy

    def add_to_deck(self) -> None:
        """The view on screen (its sentences, word, model, layer) becomes the deck's next step."""
        from explorer.scenes import SceneError, check_scene
        from explorer.talk.deck import step_title

        scene = self.current_panel().current_scene()
        scene.models = [self._load_key(m) for m in scene.models if m in self.session.models]
        scene.title = step_title(scene)
        try:  # (a step the talk could not show: said now, not when the deck is presented)
            check_scene(scene, "this view")
        except SceneError as e:
            why = ("the Run history shows no run yet: open one first" if scene.panel == "history" and not scene.run
                   else explain(e))
            self.statusBar().showMessage(f"Not added to the deck: {why}")
            return
        self.deck.steps.append(scene)
        self.statusBar().showMessage(f"added to the deck as step {len(self.deck.steps)}: {scene.title} "
                                     "(Talk → Edit the deck… to retitle, reorder or save)")

    def _load_key(self, name: str) -> str:
        """How a deck names a loaded model so that it loads again: a built-in or shipped model by its
        name, the user's own folder or file by its path."""
        from engine import api

        handle = self.session.models[name]
        if name in api.catalog().get("models", {}) or name in api.default_checkpoints() or not handle.path:
            return name
        return str(handle.path)

    def edit_deck(self) -> None:
        from explorer.talk.editor import DeckEditor

        editor = DeckEditor(self.deck, self)
        editor.present.connect(self._present_deck)
        editor.show()

    def _present_deck(self, deck: Deck) -> None:
        """The deck editor's Present: a step the talk cannot show (a scene file's, edited by hand) is said, not
        raised."""
        from explorer.scenes import SceneError

        try:
            self.start_talk(deck)
        except SceneError as e:
            self.statusBar().showMessage(explain(e))

    def open_deck_file(self) -> None:
        from explorer.scenes import SceneError
        from explorer.talk.deck import load_deck

        path, _ = QFileDialog.getOpenFileName(self, "Open a talk deck", filter="Decks (*.json)")
        if path:
            try:
                self.start_talk(load_deck(path))
            except SceneError as e:
                self.statusBar().showMessage(explain(e))

    def start_talk(self, deck: Deck | None, full_screen: bool = True) -> object:
        """Present ``deck`` (default: the built-in one) in its own window; Esc comes back here."""
        from explorer.talk.deck import check_deck, load_deck
        from explorer.talk.window import EXPORT_SIZE, TalkWindow

        deck = load_deck() if deck is None else check_deck(deck)
        window_working()  # (the workers' models wait while its first step is built and painted)
        if self.talk is not None:
            with contextlib.suppress(RuntimeError):  # (gone already: closed from its own window's title bar)
                self.talk.close()  # type: ignore[attr-defined]
        talk = TalkWindow(self.session, deck)
        # closed, it goes, with its panels, their answers and the cache files they map (a closed talk window
        # stayed alive, refreshing its panels at every model change: bench/robustness/chaos.py)
        talk.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        talk.left.connect(self._talk_left)
        self.talk = talk
        if full_screen:
            talk.showFullScreen()
        else:
            talk.resize(EXPORT_SIZE)
            talk.show()
        return talk

    def _talk_left(self) -> None:
        self.talk = None
        self.show()
        self.activateWindow()

    def open_scene_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a scene", filter="Scenes (*.json)")
        if path:
            self.open_scene(path)

    def save_scene_file(self) -> None:
        from explorer.scenes import save_scene

        path, _ = QFileDialog.getSaveFileName(self, "Save the scene", filter="Scenes (*.json)")
        if path:
            save_scene(path, self.current_panel().current_scene())

    def open_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a word2bert run folder or a Hugging Face checkpoint folder")
        if path:
            self.session.load(path)

    def open_history(self) -> None:
        self.tabs.setCurrentWidget(self.history)
        self.history.choose_run()

    def open_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open word vectors (word2vec/GloVe text or binary)")
        if path:
            self.session.load(path)

    # ------------------------------------------------------------ settings

    def _restore(self) -> None:
        s = self.settings
        if self.remember and s.value("geometry") is not None:
            self.restoreGeometry(s.value("geometry"))
        if self.remember and s.value("state") is not None:
            self.restoreState(s.value("state"))
        recent = s.value("recent", [])
        self.session.recent = [str(r) for r in (recent if isinstance(recent, list) else [recent]) if r]
        sentences = s.value("sentences") if self.remember else None  # (a picture: the defaults, then its scene's)
        if sentences:
            self.polysemy.sentences.setPlainText(str(sentences))
        seen = str(s.value("seen_at_least", ""))
        if self.remember and seen.isdigit() and int(seen) >= 1:  # (pictures and scenes: the default)
            self.session.set_seen_at_least(int(seen))
        theme = str(s.value("theme", "light")) if self.remember else "light"
        zoom = str(s.value("zoom", 0)) if self.remember else "0"
        self._zoom = max(-3, min(8, int(zoom))) if zoom.lstrip("-").isdigit() else 0  # (a hand-edited file: 0)
        apply_theme(QApplication.instance(), theme if theme in ("light", "dark") else "light")
        apply_zoom(QApplication.instance(), self._zoom)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        if self.remember:
            s = self.settings
            s.setValue("geometry", self.saveGeometry())
            s.setValue("state", self.saveState())
            s.setValue("recent", self.session.recent)
            s.setValue("sentences", self.polysemy.sentences.toPlainText())
            s.setValue("seen_at_least", self.session.seen_at_least())
            s.sync()
        self.stop_jobs()
        if self.talk is not None:  # the talk goes with the app (closed after, it would show this window again)
            with contextlib.suppress(RuntimeError):
                self.talk.close()  # type: ignore[attr-defined]
        super().closeEvent(event)

    def running_jobs(self) -> list[BackgroundJob | ProcessTrainJob]:
        """Every long job of every panel that is still running (index builds, atlas, training, fine-tuning)."""
        from explorer.tasks import background_jobs

        jobs = (self.polysemy.indexer.job, self.attention.atlas_job, self.train.job, self.finetune.job, self.history.emerging.job)
        named = [job for job in jobs if job is not None and job.running]
        # and every other panel's: a clicked word's occurrences, a talk window's panels
        return named + [job for job in background_jobs() if not any(job is n for n in named)]

    def stop_jobs(self, wait_ms: int = 60_000) -> None:
        """Stop every job as its Stop button does: a training or fine-tuning run saves a resumable
        checkpoint (its process is waited for, so closing the app loses nothing); the rest just stop."""
        self.finetune.queue.clear()  # no queued fine-tuning run starts while the app closes
        # nor a queued corpus index: a stopped build ends as failed, and that starts the next one waiting (the chaos
        # bench's quiet moments found index builds still running after six rounds of Stop-all)
        self.polysemy.indexer.cancel_index()
        for panel in (self.history, self.train, self.finetune):  # no run followed, no checkpoint scoring goes on
            panel.shutdown()
        stop_queries()  # a long query (a corpus-wide statistic, a big model's forward) stops at its next step
        jobs = self.running_jobs()
        for job in jobs:
            job.cancel()
        runs = [job for job in jobs if isinstance(job, ProcessTrainJob)]  # a process that saves as it stops
        if runs:
            self.statusBar().showMessage(f"saving {len(runs)} training run(s) before closing…")
            for job in runs:
                job.wait(wait_ms)
        wait_for_workers(5_000)
