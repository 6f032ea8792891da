"""The shell: model library, status bar, themes, zoom and settings kept between runs."""

import pytest

from tests.conftest import settle_layout


@pytest.fixture
def make_window(qtbot):
    from explorer.main_window import MainWindow
    from explorer.session import Session

    windows = []

    def make():
        win = MainWindow(Session())
        qtbot.addWidget(win)
        win.show()
        windows.append(win)
        return win

    yield make
    from explorer.tasks import wait_for_workers

    assert wait_for_workers(20_000)


def test_library_lists_builtins_and_loads_on_double_click(qtbot, make_window, contextual_runs):
    win = make_window()
    lib = win.library
    qtbot.waitUntil(lambda: lib.available.childCount() >= 2, timeout=30_000)
    names = [lib.available.child(i).text(0) for i in range(lib.available.childCount())]
    assert "glove-6b-50d" in names and "all-minilm-l6-v2" in names
    with qtbot.waitSignal(win.session.modelsChanged, timeout=60_000):
        win.session.load(str(contextual_runs["bert"][0]))
    loaded = [lib.loaded.child(i) for i in range(lib.loaded.childCount())]
    assert loaded[0].text(0) == "bert" and "parameters" in loaded[0].text(1)
    assert "masked lm" in loaded[0].text(2) and "attention" in loaded[0].text(2)
    assert str(contextual_runs["bert"][0]) in win.session.recent
    with qtbot.waitSignal(lib._finder.finished, timeout=30_000):
        lib.refresh()  # the run just loaded is a recent folder now: listed once, as loaded, not also as available
    offered = [lib.available.child(i).toolTip(0) for i in range(lib.available.childCount())]
    assert "glove-6b-50d" in offered and str(contextual_runs["bert"][0]) not in offered
    from engine.api import device_summary

    device = device_summary().split(" (")[0]  # CPU, or the GPU's name (without the threads it is given)
    qtbot.waitUntil(lambda: win.status_line.device_label.text().startswith(f"device: {device}"), timeout=30_000)
    qtbot.waitUntil(lambda: "memory" in win.status_line.memory_label.text(), timeout=5_000)


def test_a_model_loaded_leaves_available_at_once(qtbot, make_window):
    """Not once the list is read again off the GUI thread: until then it was listed twice (seen in a scene's
    screenshot, all-minilm-l6-v2 under both Loaded and Available)."""
    win = make_window()
    lib = win.library
    qtbot.waitUntil(lambda: lib.available.childCount() >= 2 and not win.session.loading, timeout=30_000)

    def offered() -> list[str]:
        return [lib.available.child(i).text(0) for i in range(lib.available.childCount())]

    assert "glove-6b-50d" in offered()
    with qtbot.waitSignal(win.session.modelsChanged, timeout=60_000):
        win.session.load("glove-6b-50d")
    assert "glove-6b-50d" not in offered()  # before the worker's answer
    assert [lib.loaded.child(i).text(0) for i in range(lib.loaded.childCount())] == ["glove-6b-50d"]
    with qtbot.waitSignal(lib._finder.finished, timeout=30_000):
        lib.refresh()
    assert "glove-6b-50d" not in offered() and "all-minilm-l6-v2" in offered()


def test_unloading_a_model_lets_it_go_everywhere_and_offers_it_again(qtbot, make_window, contextual_runs):
    import gc
    import weakref

    from PySide6.QtCore import Qt

    win = make_window()
    lib = win.library
    run = str(contextual_runs["bert"][0])
    with qtbot.waitSignal(win.session.modelsChanged, timeout=60_000):
        win.session.load(run)
    gc.freeze()  # as the app does once a model is in: it must still be let go of
    handle = weakref.ref(win.session.models["bert"])
    masked = win.predictions.masked
    qtbot.waitUntil(lambda: masked.model.currentText() == "bert", timeout=10_000)
    masked.text.setText("the cat sat on the [MASK] .")
    with qtbot.waitSignal(masked.lens.shown, timeout=30_000):  # the lab open on it holds it too
        masked.lens_switch.setChecked(True)
    row = lib.loaded.child(0)
    lib.tree.setCurrentItem(row)
    lib.tree.setFocus()
    qtbot.keyClick(lib.tree, Qt.Key.Key_Delete)  # or right-click → Unload
    assert "bert" not in win.session.models and lib.loaded.childCount() == 0
    assert masked.model.findText("bert") < 0  # the panels' pickers no longer offer it
    qtbot.waitUntil(lambda: handle() is None, timeout=10_000)  # its memory goes back (frozen with the rest or not)
    assert masked.lens.handles == []  # the lab that was open on it let go of it too
    qtbot.waitUntil(lambda: any(lib.available.child(i).toolTip(0) == run for i in range(lib.available.childCount())),
                    timeout=30_000)  # offered again, one double-click away
    assert not lib.unload(lib.loaded)  # the "Loaded" heading itself is no model


def test_the_neuron_window_lets_an_unloaded_model_go_and_says_so(qtbot, make_window, contextual_runs):
    import gc
    import weakref

    win = make_window()
    with qtbot.waitSignal(win.session.modelsChanged, timeout=60_000):
        win.session.load(str(contextual_runs["gpt"][0]))
    win.show_neurons("gpt")  # (the model library's "What makes gpt's neurons fire…")
    window = win.neuron_window
    qtbot.waitUntil(lambda: window.result is not None, timeout=60_000)
    handle = weakref.ref(win.session.models["gpt"])
    from explorer.tasks import background_jobs

    # (the polysemy lens's occurrences of the gpt run, read in the background, hold it until they are done)
    qtbot.waitUntil(lambda: not background_jobs(), timeout=120_000)
    win.session.unload("gpt")
    gc.collect()
    qtbot.waitUntil(lambda: handle() is None, timeout=10_000)  # its memory goes back though the window stays open
    window.show_button.click()
    assert "gpt was unloaded" in window.summary.text()


def test_a_model_asked_for_twice_while_it_loads_loads_once(qtbot, contextual_runs):
    from explorer.session import Session

    session = Session()
    run = str(contextual_runs["gpt"][0])
    loaded = []
    session.modelsChanged.connect(lambda: loaded.append(list(session.models)))
    assert session.load(run)
    assert not session.load(run)  # a second double-click: on its way already
    assert session.loading == 1
    qtbot.waitUntil(lambda: session.loading == 0, timeout=60_000)
    assert loaded == [["gpt"]]
    assert session.load(run)  # loaded: asked again, it loads again (a run folder may hold a newer save)
    qtbot.waitUntil(lambda: session.loading == 0, timeout=60_000)


def test_selecting_a_model_shows_what_it_is_and_what_it_was_trained_on(qtbot, make_window):
    win = make_window()
    lib = win.library
    qtbot.waitUntil(lambda: lib.available.childCount() >= 2, timeout=30_000)
    assert lib.hint.text().startswith("Models: GloVe and word2vec")
    items = {lib.available.child(i).text(0): lib.available.child(i) for i in range(lib.available.childCount())}
    lib.tree.setCurrentItem(items["glove-6b-50d"])  # the catalog's words, in full (the column is cut short)
    assert "Trained on: Wikipedia 2014 + Gigaword 5" in lib.hint.text() and "double-click to load" in lib.hint.text()
    lib.tree.setCurrentItem(lib.loaded)
    assert lib.hint.text().startswith("Models: GloVe and word2vec")


def test_a_deleted_recent_run_is_no_longer_offered(qtbot, make_window, contextual_runs, tmp_path):
    import shutil

    gone = tmp_path / "gone-run"
    shutil.copytree(contextual_runs["gpt"][0], gone)
    win = make_window()
    lib = win.library

    def offered() -> list[str]:
        return [lib.available.child(i).toolTip(0) for i in range(lib.available.childCount())]

    win.session.recent = [str(gone)]
    lib.refresh()
    qtbot.waitUntil(lambda: str(gone) in offered(), timeout=30_000)
    shutil.rmtree(gone)
    lib.refresh()
    qtbot.waitUntil(lambda: "glove-6b-50d" in offered() and str(gone) not in offered(), timeout=30_000)


def test_a_recent_folder_named_like_a_listed_model_is_told_apart(qtbot, make_window, contextual_runs, tmp_path):
    import shutil

    twin = tmp_path / "runs" / "glove-6b-50d"  # e.g. runs/minilm-gpt, the run the shipped minilm-gpt came from
    shutil.copytree(contextual_runs["gpt"][0], twin)
    win = make_window()
    lib = win.library
    win.session.recent = [str(twin)]
    lib.refresh()

    def labels() -> dict[str, str]:
        return {lib.available.child(i).toolTip(0): lib.available.child(i).text(0)
                for i in range(lib.available.childCount())}

    qtbot.waitUntil(lambda: str(twin) in labels(), timeout=30_000)
    assert labels()[str(twin)] == "runs/glove-6b-50d" and labels()["glove-6b-50d"] == "glove-6b-50d"


def test_a_window_with_nothing_loading_says_what_to_do(qtbot, make_window):
    win = make_window()
    assert win.statusBar().currentMessage() == "starting…"
    qtbot.waitUntil(lambda: win.statusBar().currentMessage().startswith("ready: double-click a model"), timeout=30_000)
    from engine.api import device_summary

    assert win.status_line.device_label.text().startswith(f"device: {device_summary().split(' (')[0]}")  # the device it found


def test_theme_zoom_and_sentences_are_remembered(qtbot, make_window):
    from PySide6.QtWidgets import QApplication

    win = make_window()
    size = QApplication.instance().font().pointSizeF()
    win.zoom(+2)
    assert QApplication.instance().font().pointSizeF() > size * 1.25
    early = win.polysemy.map  # a view built before the switch, on a page not shown: its title turns light with the
    win.set_theme("dark")  # background as the page is shown
    assert not early.isVisible()
    win.polysemy.views.setCurrentIndex(1)
    qtbot.waitUntil(lambda: early.title.color.lightness() > 150, timeout=5_000)
    assert early.backgroundBrush().color().lightness() < 80
    assert QApplication.instance().palette().window().color().lightness() < 80
    note = win.history.loss.empty  # "Open a run: …" over an empty plot: a dark box with light text, not a white one
    QApplication.processEvents()  # (the palette reaches some widgets by posted events)
    shot = note.grab().toImage()
    assert shot.pixelColor(1, 1).lightness() < 80
    assert note.palette().color(note.foregroundRole()).lightness() > 120
    import pyqtgraph as pg

    from explorer.widgets.plot_view import plot_views

    assert "rollout" not in win.attention._pages  # a view never shown is not built yet…
    late, grid = win.attention.mix_map, win.attention.grid  # … and ones built now, after the zoom and the theme, have both
    plots = plot_views()
    assert plots and grid in plots and late.plot in plots  # the window's plots, found under it
    win.show()
    for page in range(win.tabs.count()):  # each plot takes the theme when it is shown (a hidden one waits for that)
        win.tabs.setCurrentIndex(page)
        QApplication.processEvents()
        shown = [view for view in plot_views(win) if view.isVisible() and isinstance(view, pg.GraphicsView)]
        assert all(view.backgroundBrush().color().lightness() < 80 for view in shown), win.tabs.tabText(page)
    assert late.plot.backgroundBrush().color().lightness() < 80 and grid.backgroundBrush().color().lightness() < 80
    win.tabs.setCurrentWidget(win.history)  # shown, its plots take the zoom's font
    qtbot.waitUntil(lambda: any(view.isVisible() for view in plot_views(win)), timeout=10_000)
    axes = [item for view in plot_views(win) if view.isVisible() for item in view.items() if isinstance(item, pg.AxisItem)]
    assert axes and all(axis.style["tickFont"] is not None and axis.style["tickFont"].pointSizeF() > size * 1.25
                        for axis in axes)
    win.polysemy.sentences.setPlainText("The bat flew out.\nHe swung the bat.")
    win.neighbours.seen.setValue(1)  # static neighbours: every word
    win.close()
    again = make_window()
    assert again.polysemy.sentences.toPlainText() == "The bat flew out.\nHe swung the bat."
    assert again.session.seen_at_least() == 1 and again.neighbours.seen.text() == "every word"
    assert int(again.kept.store.value("zoom")) == 2 and again.kept.store.value("theme") == "dark"
    again.zoom(0)
    assert again.polysemy.map.title.color.lightness() > 150  # built dark
    again.show()
    again.polysemy.views.setCurrentIndex(1)
    qtbot.waitUntil(again.polysemy.map.isVisible, timeout=5_000)
    again.set_theme("light")  # a plot shown takes the theme at once
    assert again.polysemy.map.title.color.lightness() < 100
    assert abs(QApplication.instance().font().pointSizeF() - size) < 0.01


def test_a_result_for_a_deleted_panel_is_dropped_quietly(qtbot):
    """Closing the app while a worker runs: its result has nobody to go to, and must not raise in the pool thread."""
    import shiboken6

    from explorer.tasks import _Job, _Relay

    relay = _Relay()
    shiboken6.delete(relay)
    _Job(1, lambda: 42, relay).run()  # the worker's body, here: it finished after its receiver went
    _Job(2, lambda: 1 / 0, relay).run()  # and a failure too


def test_a_superseded_query_is_skipped_or_stopped_and_cancel_delivers_nothing(qtbot):
    import threading

    from engine.api import Cancelled
    from engine.cancel import check_cancelled
    from explorer.tasks import TaskRunner, wait_for_workers

    runner = TaskRunner()
    started, ran, release = threading.Event(), [], threading.Event()

    def long_query():  # a masked LM scoring a long sentence: it checks between its chunks
        started.set()
        for _ in range(500):
            release.wait(0.01)
            check_cancelled("scoring the sentence")
        ran.append("long")
        return "long"

    results, failures = [], []
    runner.finished.connect(results.append)
    runner.failed.connect(failures.append)
    runner.submit(long_query)
    assert started.wait(10)
    runner.submit(lambda: ran.append("stale") or "stale")  # superseded while it waits its turn: never runs
    with qtbot.waitSignal(runner.finished, timeout=10_000):
        runner.submit(lambda: ran.append("latest") or "latest")
    assert ran == ["latest"] and results == ["latest"] and not failures  # the long one stopped early
    started.clear()  # before the submit: the query thread may start it at once
    runner.submit(long_query)
    assert started.wait(10) and runner.busy
    runner.cancel()  # Stop: the query ends and nothing reaches the panel
    assert wait_for_workers(10_000)
    qtbot.wait(50)
    assert results == ["latest"] and not failures and not runner.busy
    with pytest.raises(Cancelled):
        from engine.api import cancellable

        stop = threading.Event()
        stop.set()
        with cancellable(stop):
            check_cancelled("x")


def test_a_misspelt_scene_says_so_and_a_screenshot_of_it_exits_at_once(capsys, tmp_path):
    """`word2bert --scene bnak --screenshot x.png` printed nothing and ran until killed."""
    from explorer.app import run

    assert run(["word2bert", "--scene", "bnak", "--screenshot", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "no scene 'bnak'; did you mean bank?" in err  # and the built-in ones it could have meant
    assert not (tmp_path / "x.png").exists()


def test_help_lists_every_built_in_scene(capsys):
    from explorer.app import run
    from explorer.scenes import builtin_scenes

    with pytest.raises(SystemExit):
        run(["word2bert", "--help"])
    text = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # argparse wraps the help, at hyphens too
    assert len(builtin_scenes()) >= 10 and all(name in text for name in builtin_scenes())


def test_a_cache_notice_from_a_worker_thread_reaches_the_status_bar_and_the_cache_can_be_cleared(
        qtbot, make_window, tmp_path, monkeypatch):
    import logging
    import threading

    from engine.inspection.occurrences import word_index
    from explorer.app import run

    monkeypatch.setenv("WORD2BERT_CACHE", str(tmp_path / "cache"))
    win = make_window()
    said = "cache: word-index/v2/x was unusable (index.safetensors is damaged); building it again"
    worker = threading.Thread(target=lambda: logging.getLogger("word2bert.cache").warning(said))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: win.statusBar().currentMessage() == said, timeout=5_000)
    corpus = tmp_path / "mine.txt"
    corpus.write_text("A small corpus for the cache.\nIt has two lines.\n", encoding="utf-8")
    word_index(str(corpus))
    assert any((tmp_path / "cache").iterdir())
    win.clear_cache(confirm=False)  # File → Clear the cache folder…, its question answered
    qtbot.waitUntil(lambda: win.statusBar().currentMessage().startswith("cache cleared: 1 entry,"), timeout=10_000)
    assert not any((tmp_path / "cache").iterdir())
    word_index(str(corpus))
    assert run(["word2bert", "--clear-cache"]) == 0 and not any((tmp_path / "cache").iterdir())  # the same, no window


def test_a_picture_taking_window_opens_at_its_own_size_and_leaves_the_users_settings_be(qtbot, make_window):
    """`word2bert --scene bank --screenshot x.png` wrote its window over the user's settings as it quit: the
    scene's sentences replaced theirs, and offscreen (an 800-pixel screen) the geometry saved was squeezed, so
    every later screenshot, and the user's next window, came out 798 pixels wide."""
    from PySide6.QtCore import QSize
    from PySide6.QtWidgets import QApplication

    from explorer.main_window import MainWindow
    from explorer.session import Session

    size = QApplication.instance().font().pointSizeF()
    mine = make_window()
    mine.resize(700, 500)
    mine.polysemy.sentences.setPlainText("The bat flew out.")
    mine.zoom(+2)
    mine.set_theme("dark")
    mine.close()
    shot = MainWindow(Session(), remember=False)
    qtbot.addWidget(shot)
    shot.show()
    assert shot.size() == QSize(1200, 760)  # the default, not the user's 700 x 500
    assert shot.polysemy.sentences.toPlainText() != "The bat flew out."  # nor the user's sentences,
    assert abs(QApplication.instance().font().pointSizeF() - size) < 0.01  # zoom
    assert QApplication.instance().palette().window().color().lightness() > 150  # or theme
    shot.polysemy.sentences.setPlainText("We sat on the bank.")
    shot.resize(640, 480)
    shot.zoom(+1)  # a picture's own zoom and theme are not written back either
    shot.set_theme("light")
    shot.close()
    again = make_window()
    assert again.polysemy.sentences.toPlainText() == "The bat flew out."
    assert again.size() == QSize(700, 500)
    assert int(again.kept.store.value("zoom")) == 2 and again.kept.store.value("theme") == "dark"
    assert QApplication.instance().font().pointSizeF() > size * 1.25
    again.zoom(0)
    again.set_theme("light")


def test_a_scene_the_app_cannot_apply_exits_with_its_reason_within_seconds(tmp_path, contextual_runs):
    """A scene that reads well but cannot be answered (here: a word no sentence of the corpus holds) ended
    in the status bar while `--screenshot` waited 900 s for a result."""
    bert = str(contextual_runs["bert"][0])
    done, seconds = screenshot_of_scene(tmp_path, {"panel": "polysemy", "sentences": ["The zyxwq sat on the bank."],
                                                   "selection": "zyxwq", "models": [bert], "contextual_model": bert})
    assert done.returncode == 1 and seconds < 120
    assert "zyxwq" in done.stderr and not (tmp_path / "x.png").exists()


def screenshot_of_scene(tmp_path, scene):
    """``word2bert --scene FILE --screenshot x.png`` as a process (offscreen, its own HOME): (its result, seconds)."""
    import json
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    path = tmp_path / "scene.json"
    path.write_text(json.dumps(scene), encoding="utf-8")
    start = time.monotonic()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OMP_NUM_THREADS": "1", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "explorer", "--no-default-models", "--scene", str(path), "--screenshot",
                           str(tmp_path / "x.png")], cwd=Path(__file__).resolve().parents[2], env=env,
                          capture_output=True, text=True, timeout=300)
    return done, time.monotonic() - start


def test_a_lab_scene_that_cannot_be_traced_exits_with_its_reason_within_seconds(tmp_path, contextual_runs):
    """A tracing scene whose subject is not in its sentence: the reason on stderr and exit code 1, not a wait."""
    bert = str(contextual_runs["bert"][0])
    done, seconds = screenshot_of_scene(tmp_path, {
        "panel": "predictions", "view": "masked", "sentences": ["he drove the [MASK] to town"], "models": [bert],
        "contextual_model": "bert", "lab": "trace", "subject": "piano"})
    assert done.returncode == 1 and seconds < 120
    assert "'piano' is not in the text" in done.stderr and not (tmp_path / "x.png").exists()


def test_the_library_refreshed_again_and_again_keeps_only_its_rows(qtbot, make_window):
    """Each model loaded or unloaded refreshes the library: its old rows must go, not stay alive behind the new
    ones (PySide's takeChildren kept them: 3,816 rows after 8 minutes of the chaos bench)."""
    import gc

    from PySide6.QtWidgets import QTreeWidgetItem

    win = make_window()
    lib = win.library
    qtbot.waitUntil(lambda: lib.available.childCount() >= 2 and not win.session.loading, timeout=60_000)
    for _ in range(20):
        with qtbot.waitSignal(lib._finder.finished, timeout=30_000):
            lib.refresh()
    gc.collect()
    alive = sum(1 for o in gc.get_objects() if type(o) is QTreeWidgetItem)
    in_tree = 2 + lib.loaded.childCount() + lib.available.childCount()  # the two headings and their rows
    assert lib.available.childCount() >= 2
    assert alive <= in_tree + 2, f"{alive} rows alive for {in_tree} in the tree"


def test_no_plot_keeps_a_pixmap_of_its_background(qtbot, make_window):
    """pyqtgraph caches each view's solid background as a pixmap the size of the view (620 MB of them in the
    chaos bench's heap): every plot of every tab paints its background instead."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QGraphicsView

    win = make_window()
    views = win.findChildren(pg.GraphicsView)
    assert len(views) >= 5
    cached = [type(v.parent()).__name__ for v in views if v.cacheMode() != QGraphicsView.CacheModeFlag.CacheNone]
    assert not cached, f"views that cache their background, under: {cached}"
    from explorer.widgets.plot_view import plot_views

    listed = plot_views(win)  # what the theme and the zoom reach: every view, found without walking the window
    assert set(map(id, views)) <= set(map(id, listed)), "a view made without without_background_cache"


def test_no_tab_widget_paints_a_frame_under_its_pages(qtbot, make_window):
    """Fusion fills a framed tab widget's whole page area at every repaint under it: the chaos bench's largest
    single cost in its stalls (bench/robustness/RESULTS.md). Every tab widget of the window, nested ones too, is in
    document mode, which paints no frame."""
    from PySide6.QtWidgets import QTabWidget

    win = make_window()
    tabs = win.findChildren(QTabWidget)
    assert len(tabs) >= 5
    framed = [type(t.parent()).__name__ for t in tabs if not t.documentMode()]
    assert not framed, f"tab widgets that paint a frame, under: {framed}"


def test_stopping_every_job_leaves_no_index_build_waiting_to_start(qtbot, make_window):
    """Stop-all (closing the app) clears the corpus indexer's queue: a stopped build ends as failed, which starts
    the next one waiting, so a queue left behind kept the app indexing after every Stop."""
    win = make_window()
    indexer = win.polysemy.indexer
    indexer.queue.extend(["bert-tiny", "gpt-tiny"])  # models waiting for their index
    win.stop_jobs(wait_ms=5_000)
    assert indexer.queue == []
    assert indexer.job is None or not indexer.job.running


def test_the_window_fits_a_laptop_and_a_projector_and_a_tall_panel_scrolls(qtbot, make_window):
    """The window's smallest size is not its tallest panel's: 1366 x 720 at the normal zoom, and a 1080-pixel
    projector at zoom 6, hold it whole (the Run history's plots made it 865 and 1,261 pixels tall); a panel
    taller than its page scrolls, and the tab widget still names the panels themselves."""
    win = make_window()
    win.zoom(0)
    win.tabs.setCurrentWidget(win.history)
    assert win.tabs.currentWidget() is win.history
    assert win.tabs.indexOf(win.history) == win.tabs.count() - 1
    scroll = win.history.parentWidget().parentWidget()  # the panel's scroll area (its viewport, then it)
    win.show()
    try:
        for zoom, (width, height) in ((0, (1366, 720)), (6, (1920, 1080)), (6, (1280, 600))):
            win.zoom(zoom)
            win.resize(width, height)
            settle_layout()
            assert win.height() == height and win.width() == width, (zoom, win.size())
            if (zoom, height) == (0, 720):  # both plots on the page: the panel is its page's size, not its
                assert win.history.size() == scroll.viewport().size()  # preferred 1,094 pixels (it was scrolled)
                assert not scroll.verticalScrollBar().isVisible()
        assert win.history.minimumSizeHint().height() > scroll.viewport().height()  # taller than its page...
        assert scroll.verticalScrollBar().isVisible()  # ...so it scrolls
        assert win.history.height() >= win.history.minimumSizeHint().height()  # not squashed
    finally:
        win.zoom(0)


def test_the_library_shows_its_columns_in_a_wide_dock_and_every_name_whole_at_any_zoom(qtbot, make_window):
    """A dock made wide again shows "what it is" and "can do" (a dock once narrow kept them hidden for good); the
    description gets the room beside the names (it was left at 100 pixels: "Stanfo…"); the names stay whole when
    the speaker zooms in (the columns were fitted to the old font)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDockWidget

    win = make_window()
    lib, tree = win.library, win.library.tree
    qtbot.waitUntil(lambda: lib.available.childCount() >= 2, timeout=30_000)
    win.zoom(0)
    win.resize(1400, 900)
    dock = win.findChild(QDockWidget)
    win.resizeDocks([dock], [220], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: tree.isColumnHidden(1), timeout=5_000)  # narrow: the names alone
    win.resizeDocks([dock], [720], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: lib.width() > 600, timeout=5_000)
    assert not tree.isColumnHidden(1) and not tree.isColumnHidden(2)
    try:
        for level in (1, 2, 3, 4):
            win.zoom(1)
            assert tree.columnWidth(0) >= tree.sizeHintForColumn(0), f"names cut at zoom {level}"
            room = tree.viewport().width() - tree.columnWidth(0)
            assert tree.columnWidth(1) >= room // 2, f"the description squeezed at zoom {level}"
    finally:
        win.zoom(0)


def test_a_narrower_window_takes_its_room_from_the_library_not_the_panel(qtbot, make_window):
    """A library left wide in a big window, then the window made narrow (or opened on a smaller screen): the
    library gives up width down to its least, so the panel shown keeps what it needs; Qt had kept the dock's
    width and squeezed the tabs to 127 pixels, the panel cut off at their edge."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDockWidget, QTabWidget

    win = make_window()
    win.zoom(0)
    win.resize(1400, 900)
    dock = win.findChild(QDockWidget)
    win.resizeDocks([dock], [720], Qt.Orientation.Horizontal)
    settle_layout()
    assert dock.width() >= 700

    def page_short(tab):
        win.tabs.setCurrentWidget(tab)
        settle_layout()
        return QTabWidget.currentWidget(win.tabs).horizontalScrollBar().maximum()

    try:
        win.resize(850, 700)
        for tab in (win.polysemy, win.train):  # the Pretrain form is wider: the library gives up more for it
            qtbot.waitUntil(lambda tab=tab: page_short(tab) == 0, timeout=5_000)
        assert dock.minimumWidth() <= dock.width() < 700
        win.resize(700, 700)  # narrower than both can be: the library at its least, the panel scrolls sideways
        qtbot.waitUntil(lambda: dock.width() == dock.minimumWidth(), timeout=5_000)
        assert page_short(win.train) > 0
    finally:
        win.resize(1200, 760)
