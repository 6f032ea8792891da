"""A model chooser for one panel: every loaded model is listed; those that cannot do what the panel
needs are greyed out, and their tooltip (and ``reason()``) says why, in the engine's words."""

from __future__ import annotations

import weakref
from typing import Any

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QComboBox, QWidget


def why_not(handle: Any, needs: Any) -> str:
    """The first reason ``handle`` lacks one of the capabilities in ``needs`` ("" when it has them all). Kept per
    handle (what a model can do is fixed when it loads): every picker of every panel asks again at each model
    loaded, unloaded or swapped by the scrubber, and asking anew was 4.5 s of the window's thread in 6 minutes of
    the chaos bench (130,000 asks: the enum walked, each reason's sentence formatted)."""
    try:
        known = _REASONS.setdefault(handle, {})
    except TypeError:  # a handle that cannot be weakly referenced: asked each time
        known = {}
    if needs not in known:
        known[needs] = _first_reason(handle, needs)
    return known[needs]


def _first_reason(handle: Any, needs: Any) -> str:
    for flag in type(needs):
        if flag.value and flag in needs:
            reason = handle.missing(flag)
            if reason:
                return reason
    return ""


def handle_ref(handle: Any) -> Any:
    """A weak reference to ``handle`` (equal to another only while both reach the same live handle); the handle
    itself where it cannot be referred to weakly."""
    try:
        return weakref.ref(handle)
    except TypeError:
        return handle


def handles_state(handles: dict[str, Any]) -> tuple[Any, ...]:
    """``handles`` (name -> handle) by name and weak reference: what an answer over several models was asked with."""
    return tuple((name, handle_ref(handle)) for name, handle in handles.items())


_REASONS: weakref.WeakKeyDictionary[Any, dict[Any, str]] = weakref.WeakKeyDictionary()  # handle -> needs -> reason


class ModelPicker(QComboBox):
    def __init__(self, needs: Any, parent: QWidget | None = None, role: str = "") -> None:
        """``role``: the catalog role whose models this view opens with, best first ("masked_lm", ...)."""
        super().__init__(parent)
        self.needs = needs  # an engine.api.Capability (flags combine: ATTENTION | MASKED_LM)
        self.role = role
        self._items = QStandardItemModel(self)
        self.setModel(self._items)
        self.reasons: dict[str, str] = {}
        self.user_chose = False  # a model picked by hand stays picked as others load
        self.activated.connect(lambda _: setattr(self, "user_chose", True))
        self._listed: list[tuple[str, str]] = []  # (name, reason) of the rows shown
        self._role_cache: list[str] | None = None
        self._refs: dict[str, Any] = {}  # name -> a weak reference to the handle listed under it (``state``)
        _PICKERS.add(self)

    def role_models(self) -> list[str]:
        if not self.role:
            return []
        if self._role_cache is None:  # the catalog is read once (it was read at every model change)
            from engine.api import preferred_models  # light: reads the catalog, no torch

            self._role_cache = preferred_models(self.role)
        return self._role_cache

    def set_models(self, models: dict[str, Any], prefer: str = "") -> None:
        """List ``models`` (name -> handle) and choose ``prefer`` if it fits, else the current choice if it
        still fits, else the first model that fits. Emits no signal: the panel updates itself after."""
        current = self.currentText()
        self.blockSignals(True)
        self.reasons = {name: why_not(handle, self.needs) for name, handle in models.items()}
        self._refs = {name: handle_ref(handle) for name, handle in models.items()}
        listed = list(self.reasons.items())
        if listed != self._listed:  # the rows change only when the models or what they can do do (the
            self._listed = listed  # scrubber swaps a checkpoint under one name at every slider move)
            self._show_rows(listed)
        usable = self.usable()
        order = [prefer, current if self.user_chose else "", *self.role_models(), current]
        choice = next((n for n in order if n and n in usable), usable[0] if usable else "")
        self.setCurrentIndex(list(models).index(choice) if choice else -1)
        self.blockSignals(False)

    def _show_rows(self, listed: list[tuple[str, str]]) -> None:
        """The rows made to say ``listed``, changing only those that differ: clearing the list and adding every
        row again, at every model loaded or unloaded in each of the window's pickers, was among the GUI
        thread's largest costs in the chaos bench."""
        usable_flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        for row, (name, reason) in enumerate(listed):
            item = self._items.item(row)
            if item is None:
                item = QStandardItem()
                self._items.appendRow(item)
            text = f"{name} (cannot)" if reason else name
            flags = item.flags() & ~usable_flags if reason else item.flags() | usable_flags
            if item.text() != text:
                item.setText(text)
            if item.flags() != flags:
                item.setFlags(flags)
            if item.toolTip() != reason:
                item.setToolTip(reason)
        extra = self._items.rowCount() - len(listed)
        if extra > 0:
            self._items.removeRows(len(listed), extra)

    def usable(self) -> list[str]:
        return [name for name, reason in self.reasons.items() if not reason]

    def state(self, every_usable: bool = False) -> tuple[Any, ...]:
        """What a panel's answer through this picker was asked with: the choice by its handle, the reason when
        there is none, and with ``every_usable`` every model it could choose (an answer that compares them all).
        Equal only while each is the same live handle (an ``id`` could be reused by the next checkpoint the
        scrubber loads under the same name). A panel asks again when models change only if this did: every panel
        asked at every model loaded or unloaded anywhere, its choice unchanged, and those answers queued before
        the user's on the one query thread."""
        choice = self.currentText()
        usable = tuple((name, self._refs.get(name)) for name in self.usable()) if every_usable else ()
        return choice, self._refs.get(choice), self.reason(), usable

    def reason(self) -> str:
        """Why no model can be chosen ("" when one is)."""
        if self.usable():
            return ""
        if not self.reasons:
            return "no model is loaded: open one in the model library"
        return "no loaded model can do this: " + "; ".join(self.reasons.values())


_PICKERS: weakref.WeakSet[ModelPicker] = weakref.WeakSet()  # every picker alive


def pickers_within(widget: QWidget) -> list[ModelPicker]:
    """The model pickers under ``widget`` that Qt has not deleted. (``findChildren`` made a wrapper for each of
    the widgets it walked past; a talk window asked every half second while its steps were being prepared.)"""
    return [p for p in list(_PICKERS) if shiboken6.isValid(p) and widget.isAncestorOf(p)]


def compared_preference(a: ModelPicker, b: ModelPicker, wanted: str = "") -> str:
    """What the picker of the compared model B prefers as models load and unload: the model a scene asked for
    (``wanted``), else none where B was picked by hand (it stays picked: ``ModelPicker.set_models``), else the first
    usable model other than A."""
    if wanted:
        return wanted
    if b.user_chose:
        return ""
    return next((n for n in a.usable() if n != a.currentText()), "")
