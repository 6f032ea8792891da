"""Thin shell: the panels, the status bar and the menu; no logic of its own."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMainWindow, QTabWidget

from explorer.panels.neighbours import NeighboursPanel
from explorer.panels.polysemy import PolysemyPanel
from explorer.panels.train import TrainPanel
from explorer.session import Session


class MainWindow(QMainWindow):
    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.setWindowTitle("word2bert")
        self.resize(1100, 720)
        self.tabs = QTabWidget()
        self.neighbours = NeighboursPanel(session)
        self.polysemy = PolysemyPanel(session)
        self.tabs.addTab(self.polysemy, "Polysemy lens")
        self.tabs.addTab(self.neighbours, "Neighbours")
        self.train = TrainPanel(session)
        self.tabs.addTab(self.train, "Pretrain")
        self.setCentralWidget(self.tabs)
        self.statusBar().showMessage("starting…")
        session.status.connect(self.statusBar().showMessage)
        menu = self.menuBar().addMenu("&File")
        for text, shortcut, slot in (("Open run folder…", QKeySequence.StandardKey.Open, self.open_folder),
                                     ("Open vectors file…", None, self.open_file),
                                     ("Quit", QKeySequence.StandardKey.Quit, self.close)):
            action = QAction(text, self)
            if shortcut is not None:
                action.setShortcut(shortcut)
            action.triggered.connect(slot)
            menu.addAction(action)

        scenes = self.menuBar().addMenu("&Scenes")
        from explorer.scenes import builtin_scenes

        for name in builtin_scenes():
            action = QAction(name, self)
            action.triggered.connect(lambda _=False, n=name: self.open_scene(n))
            scenes.addAction(action)
        scenes.addSeparator()
        for text, slot in (("Open scene…", self.open_scene_file), ("Save scene…", self.save_scene_file)):
            action = QAction(text, self)
            action.triggered.connect(slot)
            scenes.addAction(action)

    def open_scene(self, name_or_path: str) -> None:
        from explorer.scenes import SceneError, load_scene

        try:
            scene = load_scene(name_or_path)
        except SceneError as e:
            self.statusBar().showMessage(str(e))
            return
        for model in scene["models"]:
            if model not in self.session.models:
                self.session.load(model)
        self.tabs.setCurrentWidget(self.polysemy)
        self.polysemy.apply_scene(scene)
        self.statusBar().showMessage(f"scene: {scene.get('title', name_or_path)}")

    def open_scene_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a scene", filter="Scenes (*.json)")
        if path:
            self.open_scene(path)

    def save_scene_file(self) -> None:
        from explorer.scenes import save_scene

        path, _ = QFileDialog.getSaveFileName(self, "Save the scene", filter="Scenes (*.json)")
        if path:
            save_scene(path, self.polysemy.current_scene())

    def open_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a word2bert run folder")
        if path:
            self.session.load(path)

    def open_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open word vectors (word2vec/GloVe text or binary)")
        if path:
            self.session.load(path)
