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
    """The first reason ``handle`` lacks one of the capabilities in ``needs`` ("" when it has them all)."""
    for flag in type(needs):
        if flag.value and flag in needs:
            reason = handle.missing(flag)
            if reason:
                return reason
    return ""


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
        _PICKERS.add(self)

    def _role_models(self) -> list[str]:
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
        listed = list(self.reasons.items())
        if listed != self._listed:  # the rows change only when the models or what they can do do (the
            self._listed = listed  # scrubber swaps a checkpoint under one name at every slider move)
            self._show_rows(listed)
        usable = self.usable()
        order = [prefer, current if self.user_chose else "", *self._role_models(), current]
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
