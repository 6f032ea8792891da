"""Thin shell: the panels, the model library dock, menus from declared actions, scenes, and the jobs stopped
on closing. Its status bar (explorer/status_line.py), talk mode (explorer/talk/host.py) and the settings kept
between runs (explorer/window_settings.py) are their own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
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
from explorer.status_line import StatusLine
from explorer.talk.host import TalkMode
from explorer.tasks import (
    BackgroundJob,
    stop_queries,
    wait_for_workers,
)
from explorer.training_process import ProcessTrainJob
from explorer.widgets.tabs import PanelTabs
from explorer.window_settings import KeptSettings

if TYPE_CHECKING:
    from explorer.scenes import Scene


class MainWindow(QMainWindow):
    def __init__(self, session: Session, remember: bool = True) -> None:
        """``remember=False``: a run that only makes pictures (``--screenshot``, ``--export``) opens at the
        default size and layout and writes nothing back, so it neither depends on nor changes how the user left
        the window (its scene's sentences, a geometry squeezed onto an 800-pixel offscreen screen)."""
        super().__init__()
        from explorer.garbage import collect_on_the_gui_thread
        from explorer.tasks import responsive_interpreter
        from explorer.user_input import watch_input

        responsive_interpreter()  # (the process's: the window's thread gets the GIL back sooner)
        collect_on_the_gui_thread()  # (the process's: cycles holding Qt objects are freed on this thread)
        watch_input(QApplication.instance())  # (the process's: its slowest collection waits for a pause in input)
        self.session = session
        self.kept = KeptSettings(remember)  # (restored once the panels are built)
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
        for panel, title in ((self.polysemy, "Polysemy lens"), (self.neighbours, "Neighbours"),
                             (self.attention, "Attention"), (self.predictions, "Predictions"),
                             (self.layers, "Layer similarity"), (self.train, "Pretrain"), (self.finetune, "Fine-tune"),
                             (self.history, "Run history")):
            self.tabs.addTab(panel, title)
        self.predictions.focus_token.connect(self._show_attention_of)
        self.predictions.focus_head.connect(self._show_head_of)
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
        self.library.neurons.connect(self.show_neurons)
        self.neuron_window: Any = None  # what makes a model's neurons fire (explorer.widgets.neuron_window), once asked
        session.loaded.connect(self._show_when_loaded)
        self.talk_mode = TalkMode(self, session, lambda: self.current_panel().current_scene())
        # "auto" in the Train tab: the device a run there will use, once torch has been asked
        self.status_line = StatusLine(self, self.statusBar(), session, self._jobs, self.train.set_auto_device)
        self._menus()
        self.kept.restore(self, session, self.polysemy.sentences)

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

    def show_neurons(self, name: str) -> None:
        """The window of what makes the loaded Transformer ``name``'s MLP neurons fire, at its last layer's first
        neuron (the window's boxes ask any other)."""
        from explorer.widgets.neuron_window import NeuronWindow

        handle = self.session.models.get(name)
        if handle is None:
            return
        if self.neuron_window is None:
            self.neuron_window = NeuronWindow(self)
        self.neuron_window.show_neuron(handle, max(0, int(handle.info.get("layers") or 1) - 1), 0)

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

    def _jobs(self) -> list[str]:
        """The long jobs under way, for the status bar."""
        jobs = []
        if self.polysemy.indexer.running:
            jobs.append(f"indexing {self.polysemy.progress.value() / 10:.0f}%")
        if self.train.job is not None and self.train.job.running:
            jobs.append(f"training {self.train.progress.value() / 10:.0f}%")
        return jobs

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
            "&Talk": [("Present the built-in talk", "F5", lambda: self.talk_mode.present(None)),
                      ("Present a deck…", None, self.talk_mode.open_deck_file),
                      ("Add this view to the deck", "Ctrl+D", self.talk_mode.add_view),
                      ("Edit the deck…", None, self.talk_mode.edit_deck)],
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
        self.status_line.clear_cache()

    def zoom(self, step: int) -> None:
        self.kept.zoom(step)

    def set_theme(self, name: str) -> None:
        self.kept.theme(name)

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

    def _show_head_of(self, text: str, position: int, model: str, layer: int, head: int) -> None:
        """A head of the lab's knock-outs was double-clicked: where it attends, from the predicted position."""
        self.tabs.setCurrentWidget(self.attention)
        self.attention.show_token(text, position, model=model, layer=layer, heads=[head])

    def current_panel(self) -> Any:
        current = self.tabs.currentWidget()
        if current is self.finetune:  # its recorded curves (or the runs it overlays) as a step
            return self.finetune.curves
        shown = (self.attention, self.predictions, self.neighbours, self.history, self.layers)
        return current if current in shown else self.polysemy

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

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.kept.keep(self, self.session, self.polysemy.sentences)
        self.stop_jobs()
        self.talk_mode.close()  # the talk goes with the app (closed after, it would show this window again)
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
