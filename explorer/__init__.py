"""word2bert explorer: the desktop app (PySide6 + pyqtgraph). Uses the engine only through engine.api."""
