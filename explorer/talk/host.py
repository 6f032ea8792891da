"""Talk mode as the main window offers it (its Talk menu): the deck that views are added to, the deck editor,
and the talk window that presents a deck full screen, Esc back to the main window."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMainWindow

from explorer.failures import explain
from explorer.session import Session
from explorer.talk.deck import Deck
from explorer.window_work import window_working

if TYPE_CHECKING:
    from explorer.scenes import Scene
    from explorer.talk.window import TalkWindow


class TalkMode:
    """``window``: the main window (its status bar says what happened; it comes back when a talk ends);
    ``current_scene``: the view on its screen, as a scene."""

    def __init__(self, window: QMainWindow, session: Session, current_scene: Callable[[], Scene]) -> None:
        self.window, self.session, self.current_scene = window, session, current_scene
        self.deck = Deck("My talk")  # views added with Talk → Add this view
        self.shown: TalkWindow | None = None  # the talk window on screen

    def _say(self, text: str) -> None:
        self.window.statusBar().showMessage(text)

    def add_view(self) -> None:
        """The view on screen (its sentences, word, model, layer) becomes the deck's next step."""
        from explorer.scenes import SceneError, check_scene
        from explorer.talk.deck import step_title

        scene = self.current_scene()
        scene.models = [self.load_key(m) for m in scene.models if m in self.session.models]
        scene.title = step_title(scene)
        try:  # (a step the talk could not show: said now, not when the deck is presented)
            check_scene(scene, "this view")
        except SceneError as e:
            self._say("Not added to the deck: " + ("the Run history shows no run yet: open one first"
                                                   if scene.panel == "history" and not scene.run else explain(e)))
            return
        self.deck.steps.append(scene)
        self._say(f"added to the deck as step {len(self.deck.steps)}: {scene.title} "
                  "(Talk → Edit the deck… to retitle, reorder or save)")

    def load_key(self, name: str) -> str:
        """How a deck names a loaded model so that it loads again: a built-in or shipped model by its
        name, the user's own folder or file by its path."""
        from engine import api

        handle = self.session.models[name]
        if name in api.catalog().get("models", {}) or name in api.default_checkpoints() or not handle.path:
            return name
        return str(handle.path)

    def edit_deck(self) -> None:
        from explorer.talk.editor import DeckEditor

        editor = DeckEditor(self.deck, self.window)
        editor.present.connect(self._present_edited)
        editor.show()

    def _present_edited(self, deck: Deck) -> None:
        """The deck editor's Present: a step the talk cannot show (a scene file's, edited by hand) is said, not
        raised."""
        from explorer.scenes import SceneError

        try:
            self.present(deck)
        except SceneError as e:
            self._say(explain(e))

    def open_deck_file(self) -> None:
        from explorer.scenes import SceneError
        from explorer.talk.deck import load_deck

        path, _ = QFileDialog.getOpenFileName(self.window, "Open a talk deck", filter="Decks (*.json)")
        if path:
            try:
                self.present(load_deck(path))
            except SceneError as e:
                self._say(explain(e))

    def present(self, deck: Deck | None, full_screen: bool = True) -> TalkWindow:
        """Present ``deck`` (default: the built-in one) in its own window; Esc comes back to the main window."""
        from explorer.talk.deck import check_deck, load_deck
        from explorer.talk.window import EXPORT_SIZE, TalkWindow

        deck = load_deck() if deck is None else check_deck(deck)
        window_working()  # (the workers' models wait while its first step is built and painted)
        self.close()
        talk = TalkWindow(self.session, deck)
        # closed, it goes, with its panels, their answers and the cache files they map (a closed talk window
        # stayed alive, refreshing its panels at every model change: bench/robustness/chaos.py)
        talk.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        talk.left.connect(self._left)
        self.shown = talk
        if full_screen:
            talk.showFullScreen()
        else:
            talk.resize(EXPORT_SIZE)
            talk.show()
        return talk

    def close(self) -> None:
        """The talk window goes (the app closing, another deck presented)."""
        if self.shown is not None:
            with contextlib.suppress(RuntimeError):  # (gone already: closed from its own window's title bar)
                self.shown.close()

    def _left(self) -> None:
        self.shown = None
        self.window.show()
        self.window.activateWindow()
