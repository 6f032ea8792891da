"""Thin shell: the panels, the status bar and the menu; no logic of its own."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMainWindow, QTabWidget

from explorer.panels.neighbours import NeighboursPanel
from explorer.panels.polysemy import PolysemyPanel
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

    def open_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a word2bert run folder")
        if path:
            self.session.load(path)

    def open_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open word vectors (word2vec/GloVe text or binary)")
        if path:
            self.session.load(path)
