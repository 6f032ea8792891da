"""The explorer reaches the engine only through engine.api, and the window can show before torch loads."""

import ast
import subprocess
import sys
from pathlib import Path

EXPLORER = Path(__file__).resolve().parents[2] / "explorer"


def test_explorer_imports_the_engine_only_through_its_api():
    offenders = []
    for path in EXPLORER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("engine"):
                if node.module != "engine.api" and not (node.module == "engine" and [a.name for a in node.names] == ["api"]):
                    offenders.append(f"{path.name}: from {node.module}")
            elif isinstance(node, ast.Import):
                offenders += [f"{path.name}: import {a.name}" for a in node.names
                              if a.name.startswith("engine") and a.name != "engine.api"]
    assert not offenders, offenders


def test_main_window_builds_without_importing_torch():
    # with torch made unimportable, the window still builds and shows (background work may fail)
    code = ("import os, sys; os.environ['QT_QPA_PLATFORM']='offscreen'; sys.modules['torch'] = None;"
            "from PySide6.QtWidgets import QApplication; app = QApplication([]);"
            "from explorer.session import Session; from explorer.main_window import MainWindow;"
            "w = MainWindow(Session()); w.show(); app.processEvents();"
            "print('shown', w.isVisible())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "shown True" in out.stdout


def test_emitting_signals_keeps_reference_counts():
    """PySide6 6.12.0 dropped a reference to True on every emit() and crashed the app after a few
    hundred signals; pyproject excludes it. This catches such a release."""
    from PySide6.QtCore import QObject, Signal

    class Emitter(QObject):
        changed = Signal(object)

    e = Emitter()
    e.changed.connect(lambda value: None)
    before = sys.getrefcount(True), sys.getrefcount(False)
    for i in range(20_000):
        e.changed.emit(i)
    assert (sys.getrefcount(True), sys.getrefcount(False)) == before
