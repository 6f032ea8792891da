"""The model library: what is loaded (kind, size, corpus, device, capabilities) and what can be opened
(built-in models, the shipped defaults, recent runs); double-click to load."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt, QThreadPool, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QMenu, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from explorer.session import Session
from explorer.tasks import TaskRunner


def describe(handle: Any) -> str:
    """One line: what the model is (the catalog's words for built-ins and defaults) and its size."""
    info = handle.info
    if info.get("what"):
        return "; ".join(str(info[k]) for k in ("what", "headline") if info.get(k))
    parts = [handle.kind]
    if info.get("parameters"):
        parts.append(f"{info['parameters'] / 1e6:.1f}M parameters")
    elif info.get("vocabulary_size"):
        parts.append(f"{info['vocabulary_size']:,} words")
    if info.get("dim"):
        parts.append(f"{info['dim']}-d")
    if info.get("corpus"):
        from engine.api import trained_text

        parts.append(f"corpus {trained_text(info)}")
    if info.get("device"):
        parts.append(f"trained on {info['device']}")
    if info.get("task") and info.get("source") == "Hugging Face checkpoint":  # a classifier, tagger or reader
        parts.append(f"fine-tuned: {info['task']}")
    return ", ".join(parts)


def about(name: str, info: dict[str, Any], fallback: str = "") -> str:
    """What the library says about a model under the tree, for a speaker to read out: what it is, what it
    was trained on and for how long, its headline scores (the catalog's words), or the one-line fallback."""
    lines = [f"<b>{escape(name)}</b>"]
    labels = {"what": "", "trained": "Trained on: ", "headline": "Scores: "}
    known = [f"{labels[k]}{escape(str(info[k]))}" for k in labels if info.get(k)]
    lines += known or ([escape(fallback)] if fallback else [])
    return "<br>".join(lines)


def capability_names(handle: Any) -> str:
    return ", ".join(c.name.lower().replace("_", " ") for c in type(handle.capabilities) if c in handle.capabilities
                     and c.name and c.name != "NONE")


def _resolved(path: str) -> str:
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError):
        return path


def _label(name: str, names: set[str]) -> str:
    """A recent folder by its last part, with its parent's too where a model of that name is listed
    (runs/minilm-gpt, a training run, beside the shipped minilm-gpt)."""
    if "/" not in name and "\\" not in name:
        return name
    parts = Path(name.rstrip("/\\")).parts
    return "/".join(parts[-2:]) if parts[-1] in names and len(parts) > 1 else parts[-1]


HINT = ("Models: GloVe and word2vec give one vector per word; ELMo, GPT and BERT one per occurrence. "
        "Double-click an available one to load it; select one to read what it is; right-click one to see it "
        "where its family is seen best, to unload it and give its memory back (or press Delete), or a BERT, GPT "
        "or ELMo to go on pretraining from it.")
ABOUT = Qt.ItemDataRole.UserRole + 1  # an item's details (rich text), shown under the tree when it is selected
LOADED = Qt.ItemDataRole.UserRole + 2  # a loaded model's name (what unloading it lets go of)
CONTINUES = Qt.ItemDataRole.UserRole + 3  # an available run's family, where a new run can go on pretraining from it


def remove_children(item: QTreeWidgetItem) -> None:
    """Remove and delete ``item``'s children. Not ``takeChildren()``: in PySide6 the parent's wrapper keeps every
    child it took (the Python objects and their Qt items), so each refresh of the list — every model loaded or
    unloaded — left its rows alive (3,816 after a chaos run of 8 minutes)."""
    for child in [item.child(i) for i in range(item.childCount())]:
        if child is not None:
            item.removeChild(child)


class LibraryPanel(QWidget):
    go_on_from = Signal(str, str)  # (family, run folder or shipped name): a new pretraining run goes on from it
    reveal = Signal(str)  # a loaded model's name: the window turns to the view its family is for (explorer.home_view)
    explore = Signal(str)  # an available one's name or folder: loaded, then shown so
    neurons = Signal(str)  # a loaded Transformer's name: the window of what makes its MLP neurons fire

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["model", "what it is", "can do"])
        self.tree.setRootIsDecorated(True)
        self.loaded = QTreeWidgetItem(["Loaded"])
        self.available = QTreeWidgetItem(["Available"])
        self.available.setToolTip(0, "double-click one to load it")
        self.tree.addTopLevelItems([self.loaded, self.available])
        self.hint = QLabel(HINT)
        self.hint.setWordWrap(True)
        self.hint.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.hint)
        self.tree.itemDoubleClicked.connect(self._open)
        self.tree.currentItemChanged.connect(self._show_details)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._menu)
        unload = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.tree)
        unload.setContext(Qt.ShortcutContext.WidgetShortcut)
        unload.activated.connect(lambda: self.unload(self.tree.currentItem()))
        session.modelsChanged.connect(self.refresh)
        session.runsChanged.connect(self.refresh)
        self._finder = TaskRunner(self, QThreadPool.globalInstance())
        self._finder.finished.connect(self._show_available)
        self.refresh()

    def refresh(self) -> None:
        remove_children(self.loaded)
        for name, handle in self.session.models.items():
            item = QTreeWidgetItem([name, describe(handle), capability_names(handle)])
            item.setData(0, LOADED, name)
            lines = [str(handle.info[k]) for k in ("what", "trained", "headline") if handle.info.get(k)]
            for column in (0, 1):
                item.setToolTip(column, "\n".join([*lines, str(handle.info.get("path", ""))]).strip())
            note = f"<br>{escape(str(handle.info['note']))}" if handle.info.get("note") else ""  # what it cannot do
            item.setData(0, ABOUT, about(name, handle.info, describe(handle)) + f"<br>Can do: {capability_names(handle)}"
                         + note)
            self.loaded.addChild(item)
        self.loaded.setExpanded(True)
        self._drop_loaded_from_available()
        self._fit_columns()
        recent = list(self.session.recent)

        def work() -> list[tuple[str, str, dict[str, Any], str | None]]:
            from engine import api

            described = api.catalog().get("models", {})

            def what(name: str, fallback: str) -> str:
                entry = described.get(name)
                return str(entry.get("what", fallback)) if isinstance(entry, dict) else fallback

            def entry(name: str) -> dict[str, Any]:
                found = described.get(name)
                return found if isinstance(found, dict) else {}

            # (the packages' models are not runs of ours: none to go on pretraining from)
            out: list[tuple[str, str, dict[str, Any], str | None]] = [
                (name, what(name, desc), entry(name), None) for name, desc in api.BUILTIN_MODELS.items()]
            out += [(name, what(name, "default checkpoint shipped with word2bert"), entry(name),
                     api.continuable_family(name)) for name in api.default_checkpoints()]
            for path in recent:
                if ("/" in path or "\\" in path) and not Path(path).exists():
                    continue  # deleted or moved since: nothing to open (it stays in the list, should it come back)
                try:
                    out.append((path, api.describe_run(path), {}, api.continuable_family(path)))
                except api.Word2BertError:
                    out.append((path, "recent", {}, None))  # a vectors file or a Hugging Face folder
            return out

        self._finder.submit(work)

    def _is_loaded(self, name: str, loaded_paths: set[str]) -> bool:
        """Loaded already: by its name, or a recent run's folder loaded under its name."""
        return name in self.session.models or (("/" in name or "\\" in name) and _resolved(name) in loaded_paths)

    def _loaded_paths(self) -> set[str]:
        return {_resolved(str(h.path)) for h in self.session.models.values() if getattr(h, "path", None)}

    def _drop_loaded_from_available(self) -> None:
        """A model just loaded leaves "Available" at once: the list is read again off this thread, and until it
        came back (seconds, beside a model loading) the model was listed twice, as loaded and as available."""
        loaded_paths = self._loaded_paths()
        for child in [self.available.child(i) for i in range(self.available.childCount())]:
            if child is not None and self._is_loaded(str(child.data(0, Qt.ItemDataRole.UserRole) or ""), loaded_paths):
                self.available.removeChild(child)

    def _show_available(self, entries: list[tuple[str, str, dict[str, Any], str | None]]) -> None:
        remove_children(self.available)
        loaded_paths = self._loaded_paths()
        names = {name for name, _, _, _ in entries if "/" not in name} | set(self.session.models)
        for name, desc, info, family in entries:
            if self._is_loaded(name, loaded_paths):
                continue
            label = _label(name, names)
            item = QTreeWidgetItem([label, desc, ""])
            item.setToolTip(0, name)  # the whole path of a recent run (its label is shortened)
            item.setToolTip(1, desc)
            item.setData(0, Qt.ItemDataRole.UserRole, name)
            item.setData(0, CONTINUES, family)
            item.setData(0, ABOUT, about(name, info, desc) + "<br><i>double-click to load</i>")
            self.available.addChild(item)
        self.available.setExpanded(True)
        self._fit_columns()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """The names in full; "what it is" and "can do" only where the dock leaves them room to be read
        (a column cut to "St", "ou" said nothing): in a narrow dock the selected model's details are below
        the tree, and its description is its tooltip."""
        names = max(self.tree.sizeHintForColumn(0), self.tree.header().sectionSizeHint(0))
        # the names' own width, not the column's: alone, the column stretches to the whole view, and a dock
        # once narrow kept its other columns hidden however wide it was made
        room = self.tree.viewport().width() - names
        narrow = room < 24 * self.fontMetrics().averageCharWidth()
        for column in (1, 2):
            self.tree.setColumnHidden(column, narrow)
        self.tree.setColumnWidth(0, names)  # (what resizeColumnToContents would measure again)
        if not narrow:  # the room beside the names: "can do" as wide as its words up to half, "what it is" the
            # rest (it was left at 100 pixels, cut to "Stanfo…" beside an empty "can do")
            header = self.tree.header()
            can_do = min(max(self.tree.sizeHintForColumn(2), header.sectionSizeHint(2)), room // 2)
            self.tree.setColumnWidth(1, max(room - can_do, header.sectionSizeHint(1)))
            self.tree.setColumnWidth(2, can_do)

    def _open(self, item: QTreeWidgetItem, _column: int) -> None:
        name = item.data(0, Qt.ItemDataRole.UserRole)
        if name:
            self.session.load(name)

    def unload(self, item: QTreeWidgetItem | None) -> bool:
        """Unload the model of a "Loaded" row (it goes back to "Available")."""
        name = item.data(0, LOADED) if item is not None else None
        return bool(name) and self.session.unload(str(name))

    def menu_actions(self, item: QTreeWidgetItem | None) -> list[tuple[str, Any]]:
        """What a right-click on a row offers: showing a model in the view its family is for (an available one
        loaded first), unloading a loaded one, and for a BERT, GPT or ELMo run (loaded or not) a new pretraining run
        that goes on from it (on the Pretrain tab, its corpus to choose)."""
        if item is None:
            return []
        from engine import api
        from explorer.home_view import home_name

        actions: list[tuple[str, Any]] = []
        loaded = item.data(0, LOADED)
        if loaded:  # (what it is, from the handle; an available row's family was read with the list, off this thread)
            handle = self.session.models.get(str(loaded))
            where = home_name(handle.capabilities) if handle is not None else ""
            if where:
                actions.append((f"Show {loaded} in {where}", lambda: self.reveal.emit(str(loaded))))
            if handle is not None and api.Capability.ATTENTION in handle.capabilities:  # (a Transformer: its MLPs)
                actions.append((f"What makes {loaded}'s neurons fire…", lambda: self.neurons.emit(str(loaded))))
            actions.append((f"Unload {loaded}", lambda: self.unload(item)))
            kind = handle.kind if handle is not None and api.continuable(handle.kind) else None
            source = str(handle.info.get("path") or "") if handle is not None else ""
            if str(loaded) in api.default_checkpoints():
                source = str(loaded)  # a shipped one by its name
        else:
            source = str(item.data(0, Qt.ItemDataRole.UserRole) or "")
            kind = item.data(0, CONTINUES)
            if source:
                actions.append((f"Load and show {_label(source, set())}", lambda: self.explore.emit(source)))
        if kind and source:
            shown = loaded or _label(source, set())
            actions.append((f"Go on pretraining from {shown}…", lambda: self.go_on_from.emit(kind, source)))
        return actions

    def _menu(self, at: QPoint) -> None:
        actions = self.menu_actions(self.tree.itemAt(at))
        if not actions:
            return
        menu = QMenu(self)
        for text, act in actions:
            menu.addAction(text, act)
        menu.popup(self.tree.viewport().mapToGlobal(at))

    def _show_details(self, item: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None = None) -> None:
        text = item.data(0, ABOUT) if item is not None else None
        self.hint.setText(text if isinstance(text, str) and text else HINT)
