"""Application start: QApplication, Session, MainWindow; default models load in the background."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

EXPORT_WAIT_S = 900


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="word2bert")
    parser.add_argument("models", nargs="*", help="run folders or vectors files to open")
    parser.add_argument("--no-default-models", action="store_true",
                        help="do not load GloVe 6B-50d, all-MiniLM-L6-v2 and the shipped default checkpoints at start")
    parser.add_argument("--word", default="", help="word to show at start")
    from explorer.scenes import builtin_scenes

    parser.add_argument("--scene", help=f"open a scene: a built-in name ({', '.join(builtin_scenes())}) or a .json file")
    parser.add_argument("--screenshot", metavar="FILE.png", help="save the window once results are shown, then exit")
    parser.add_argument("--talk", nargs="?", const="", metavar="DECK.json",
                        help="present a talk deck full screen (default: the built-in story, language model to BERT)")
    parser.add_argument("--export", metavar="DIR", help="with --talk: write every step as a 1920x1080 PNG "
                        "(and talk.pdf) once all are computed, then exit")
    parser.add_argument("--clear-cache", action="store_true",
                        help="remove what the app built once (converted corpora, word indexes, occurrence vectors), then exit")
    args = parser.parse_args(argv[1:])
    if args.clear_cache:
        from engine.api import cache_folder, clear_cache

        entries, size = clear_cache()
        print(f"word2bert: cleared {cache_folder()}: {entries:,} {'entry' if entries == 1 else 'entries'}, "
              f"{size / 2**20:,.1f} MB")
        return 0
    if args.export and args.talk is None:
        parser.error("--export needs --talk")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    scene_error = ""
    if args.scene:  # read before any window: a misspelt scene says so at once (and a screenshot of it exits)
        from explorer.scenes import SceneError, check_answerable, load_scene

        try:
            check_answerable(load_scene(args.scene), args.scene)
        except SceneError as e:
            scene_error = str(e)
            print(f"word2bert: {scene_error}", file=sys.stderr)
            if args.screenshot:
                return 2
            args.scene = None  # the window opens as without a scene, its default models loaded

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()  # before the window's imports (explorer/pyside_imports.py)
    from explorer.main_window import MainWindow
    from explorer.session import Session

    app = QApplication.instance() or QApplication(argv[:1])
    session = Session()
    window = MainWindow(session, remember=not (args.screenshot or args.export))  # a picture leaves the user's settings be
    if args.talk is not None:
        return run_talk(app, window, args.talk or None, args.export)
    window.show()
    from explorer.garbage import freeze_long_lived_objects

    QTimer.singleShot(0, freeze_long_lived_objects)  # Qt and the modules are here to stay (see its doc)
    from engine.api import warm_up_in_background

    # word2vec's kernel compiled (once per install, 15 s) in a low-priority process while the models load:
    # the first training run, here or from the command line, then starts at once
    QTimer.singleShot(3000, warm_up_in_background)
    if args.word:
        window.neighbours.word.setText(args.word)
        window.tabs.setCurrentWidget(window.neighbours)
    # GloVe and all-MiniLM-L6-v2 (a real 6-layer BERT) come from pip packages: the app shows them beside ours
    for model in ([] if args.no_default_models else ["glove-6b-50d", "all-minilm-l6-v2"]) + args.models:
        session.load(model)
    if not args.no_default_models and not args.scene:
        session.load_defaults()
    if args.scene:
        window.open_scene(args.scene)
    if scene_error:  # said where it stays (the status bar is overwritten as the models load)
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(QMessageBox.Icon.Warning, "word2bert", scene_error, parent=window)
        box.open()  # window-modal, without a loop of its own: the models go on loading
    status = {"code": 0}
    if args.screenshot:
        from explorer.screenshot import WindowShot

        shot = WindowShot(window, session, args.screenshot)
        shot.saved.connect(lambda _: app.quit())

        def failed(message: str) -> None:
            print(f"word2bert: {message}", file=sys.stderr)
            status["code"] = 1
            app.quit()

        panel = window.tabs.currentWidget()
        if args.scene:  # the scene's panel (a ScenePanel): once its results are drawn, or the moment they cannot be
            shown: Any = window.finetune.curves if panel is window.finetune else panel  # a ScenePanel
            if shown is window.polysemy:  # the contextual neighbours (the index may need building)
                window.polysemy.context_runner.finished.connect(lambda _: shot.take_after(300))
            else:
                shown.shown.connect(lambda: shot.take_after(500))
            shown.failed.connect(failed)
        elif args.word:
            window.neighbours.runner.finished.connect(lambda _: shot.take_after(100))
            window.neighbours.runner.failed.connect(failed)
        else:  # the window as it opens: once its models have loaded
            poll = QTimer(window, interval=300)

            def loaded() -> None:
                if not session.loading:
                    poll.stop()
                    shot.take_after(500)

            poll.timeout.connect(loaded)
            poll.start()
        session.error.connect(failed)
        QTimer.singleShot(900_000 if args.scene else 120_000, lambda: failed("timed out waiting for results"))
    app.exec()
    finish_workers()
    return status["code"]


def finish_workers() -> None:
    """Let queries and loads still running end before the interpreter does: a worker caught half-way
    through importing torch at exit printed a traceback."""
    from explorer.tasks import wait_for_workers

    wait_for_workers(30_000)


def run_talk(app: Any, window: Any, deck_path: str | None, export: str | None) -> int:
    """``--talk``: the deck full screen (Esc leaves to the main window); with ``--export``, every step
    written as a PNG once all are computed, then the app exits."""
    from PySide6.QtCore import QTimer

    from explorer.scenes import SceneError, check_answerable
    from explorer.talk.deck import load_deck

    try:
        deck = load_deck(deck_path)
        for i, step in enumerate(deck.steps):
            check_answerable(step, f"{deck_path or 'the built-in deck'}, step {i + 1}")
    except SceneError as e:
        print(f"word2bert: {e}", file=sys.stderr)
        return 2
    talk = window.talk_mode.present(deck, full_screen=not export)
    status = {"code": 0}
    if export:
        load_errors: list[str] = []
        window.session.error.connect(load_errors.append)  # a model that cannot load: its steps say so, and so do we

        def write() -> None:
            try:
                paths = talk.export(export)
                print(f"wrote {len(paths)} slides and talk.pdf to {export}")
            except Exception as e:  # noqa: BLE001 - whatever failed, say it and exit (never hang)
                print(f"word2bert: could not export the talk: {e}", file=sys.stderr)
                status["code"] = 1
            finally:
                problems = list(dict.fromkeys(load_errors)) + [
                    f"step {i + 1} ({talk.steps[i].title or talk.steps[i].panel}): {why}"
                    for i, why in sorted(talk.failures.items())]
                for line in problems:
                    print(f"word2bert: {line}", file=sys.stderr)
                if problems:
                    status["code"] = 1
                app.quit()

        def timed_out() -> None:
            print(f"word2bert: only {len(talk.done)} of {len(talk.steps)} steps had results after "
                  f"{EXPORT_WAIT_S} s; exporting what is there", file=sys.stderr)
            write()

        talk.ready.connect(lambda: QTimer.singleShot(500, write))
        QTimer.singleShot(EXPORT_WAIT_S * 1000, timed_out)
    app.exec()
    finish_workers()
    return status["code"]
