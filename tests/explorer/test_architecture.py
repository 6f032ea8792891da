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
    after = sys.getrefcount(True), sys.getrefcount(False)
    # that release lost one reference an emit (20,000 here); a thread left by an earlier test may move a
    # few while this runs, which is no leak
    assert all(abs(a - b) < 1_000 for a, b in zip(after, before, strict=True)), (before, after)


def test_cyclic_garbage_is_collected_on_the_gui_thread(qtbot):
    """A worker's collection could destroy a widget's Qt objects off the GUI thread and hang the window for
    good (Qt's lock against the GIL); once a window exists, only the GUI thread collects, on a timer."""
    import gc
    import threading
    import weakref

    from explorer.main_window import MainWindow
    from explorer.session import Session

    window = MainWindow(Session())
    qtbot.addWidget(window)
    assert not gc.isenabled()  # no collection in whichever thread allocates

    class Node:
        pass

    collected_in: list[str] = []
    refs: list[weakref.ref] = []
    kept: list[list] = []

    def made_in_a_worker() -> None:
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle only the collector frees
        weakref.finalize(a, lambda: collected_in.append(threading.current_thread().name))
        refs.append(weakref.ref(a))
        del a, b
        kept.append([[] for _ in range(5_000)])  # allocations past the collector's threshold, in this thread

    worker = threading.Thread(target=made_in_a_worker, name="worker")
    worker.start()
    worker.join()
    assert refs[0]() is not None and not collected_in  # the worker did not collect it
    kept.append([[] for _ in range(5_000)])
    qtbot.waitUntil(lambda: refs[0]() is None, timeout=5_000)
    assert collected_in == [threading.main_thread().name]
    window.close()


def test_garbage_is_collected_even_when_frees_bring_the_collectors_count_back_down(qtbot):
    """Python collects when an allocation passes the threshold; the GUI thread looks every 250 ms, and objects
    freed in between (a closed window's widgets) can bring the count back under it: the garbage made before
    must not wait for the next burst of allocations (it did, after the shell's tests closed their windows)."""
    import gc
    import weakref

    from explorer.main_window import MainWindow
    from explorer.session import Session

    window = MainWindow(Session())
    qtbot.addWidget(window)
    threshold = gc.get_threshold()[0]

    class Node:
        pass

    gc.collect()  # (the window's own young objects: the count starts from nothing)
    a, b = Node(), Node()
    a.other, b.other = b, a
    ref = weakref.ref(a)
    del a, b
    passing = [[] for _ in range(3 * threshold)]  # past the threshold (no collection: automatic collection is off)
    assert gc.get_count()[0] > threshold
    del passing  # ... and back under it before the GUI thread looks
    assert gc.get_count()[0] < threshold and ref() is not None
    qtbot.waitUntil(lambda: ref() is None, timeout=5_000)
    window.close()


def test_the_window_gets_the_interpreter_back_from_busy_workers_within_a_tenth_of_a_millisecond(qtbot):
    """A worker running Python holds the GIL until the switch interval ends, and the GUI thread asks for it at
    every call from Qt into Python: CPython's 5 ms made a repaint of the window wait seconds beside two such
    workers (bench/speed/gui_switch_interval.py chose 0.1 ms)."""
    import sys

    from explorer.main_window import MainWindow
    from explorer.session import Session

    sys.setswitchinterval(0.005)  # CPython's default, as a fresh process has it
    window = MainWindow(Session())
    qtbot.addWidget(window)
    assert sys.getswitchinterval() <= 0.0001 + 1e-9
    window.close()


def test_a_full_collection_waits_until_the_oldest_generation_grew_by_a_quarter(qtbot):
    """A full collection scans every tracked object (over 300 ms of the GUI thread beside busy workers): as in
    Python's own collector, it runs only once the objects that reached the oldest generation since the last
    one are a quarter of those that survived it; until then the middle generation is collected instead."""
    import gc

    from explorer.garbage import _GuiCollector
    from explorer.tasks import wait_for_workers

    # the earlier tests' windows started work on the pools: a worker that frees objects meanwhile takes the
    # youngest generation's count back under its threshold, and the look below would rightly not collect
    wait_for_workers(60_000)
    collector = _GuiCollector()
    collector.timer.stop()  # driven by hand below
    passes: list[int] = []

    def note(phase, info):
        if phase == "start":
            passes.append(info["generation"])

    def due_by_count() -> None:  # each count past its threshold, as after many allocations
        for _ in range(gc.get_threshold()[2] + 1):
            gc.collect(1)
        for _ in range(gc.get_threshold()[1] + 1):
            gc.collect(0)
        young.extend([] for _ in range(gc.get_threshold()[0] + 1))

    old = [[] for _ in range(200_000)]
    gc.collect()
    collector.long_lived = len(gc.get_objects(2))
    young: list = []
    gc.callbacks.append(note)
    try:
        due_by_count()
        passes.clear()
        collector.collect()
        assert passes == [1]  # the oldest generation barely grew: no full collection
        young.extend([] for _ in range(collector.long_lived // 3))  # a third more long-lived objects
        gc.collect(1)
        gc.collect(1)
        due_by_count()
        passes.clear()
        collector.collect()
        assert passes == [2]
        assert collector.long_lived == len(gc.get_objects(2))
    finally:
        gc.callbacks.remove(note)
        collector.close()
        old.clear()


def test_a_full_collection_waits_for_the_net_growth_of_the_oldest_generation(qtbot, monkeypatch):
    """Objects that reached the oldest generation and were freed since do not bring a full collection nearer
    (the window makes and drops many); a freeze empties that generation and a thaw gives it every frozen object
    back, long-lived, not growth: neither brings one either."""
    import gc

    from explorer import garbage

    collector = garbage._GuiCollector()
    collector.timer.stop()
    monkeypatch.setattr(garbage, "_COLLECTOR", [collector])
    monkeypatch.setattr(garbage._freezer(), "request", lambda *a, **k: None)  # no freeze behind the test's back
    frozen = [[] for _ in range(100_000)]
    young: list = []
    garbage.freeze_now()
    assert collector.long_lived == 0
    try:
        garbage._thaw_now()  # (the freezer's first step at the quiet moment after a thaw is asked for)
        returned = collector.long_lived  # every frozen object: the 100,000 lists and the test process's own
        assert returned >= len(frozen) and not collector.full_is_due()
        assert abs(returned - len(gc.get_objects(2))) <= returned / 100  # what was frozen, less what died frozen
        dropped = [[] for _ in range(returned // 3)]  # a third arrive in the oldest generation, then go
        gc.collect(1)
        assert collector.pending > returned / 4
        dropped.clear()
        assert not collector.full_is_due()  # no net growth: no full collection
        assert collector.pending < returned / 10  # counted again from the net growth
        young += [[] for _ in range(returned // 3)]  # a third arrive and stay
        gc.collect(1)
        assert collector.full_is_due()
        garbage.freeze_now()
        assert collector.long_lived == 0 and not collector.full_is_due()
    finally:
        garbage.unfreeze()
        collector.close()
        frozen.clear()
        young.clear()
