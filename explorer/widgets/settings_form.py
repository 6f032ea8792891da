"""A form generated from a model family's settings (engine.api.model_settings): one editor per field,
typed (check box, whole number, number, text, choice), each with its help as a tooltip; every edit is
checked by the engine's own rules and the problems are named under the form."""

from __future__ import annotations

import contextlib
from typing import Any

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from explorer.shortened import shortened
from explorer.widgets.choices import narrow_choice
from explorer.widgets.readable import TEXT, readable
from explorer.widgets.running_app import running_app

# behind a field whose value is refused, on the light theme and on a dark one; and the problems' colour (made readable
# on the background). Set in the palette: a style sheet of a widget's own kept the font it had then, and the
# presentation zoom did not reach the marked fields or the problems (explorer.widgets.head_chip says more)
INVALID_ON_LIGHT, INVALID_ON_DARK = "#fde2e2", "#5c2626"
PROBLEM = "#b00020"
QUOTED_AT_MOST = 24  # the characters of a refused value that its problem quotes
# text settings that name a file: their editor gets an "open file" button (name -> the dialog's filter)
FILE_SETTINGS = {"sense_pairs": "Word-in-context pairs (*.data.txt *.tsv *.txt);;All files (*)"}
# text settings that name a run folder (or a shipped model): an "open folder" button (name -> the dialog's title)
FOLDER_SETTINGS = {"init_from": "The run to go on from"}


class SettingsForm(QWidget):
    changed = Signal()  # after every edit, once the problems are updated
    # a folder setting given by the user (chosen in its dialog, or typed and left): (name, value); not for
    # values set by the program, nor for one left as it was
    folder_set = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = ""
        self.editors: dict[str, QWidget] = {}
        self.types: dict[str, str] = {}
        self.optional: dict[str, bool] = {}
        self.problems: list[str] = []
        self._folders_told: dict[str, str] = {}  # the value each folder setting was last told as (folder_set)
        self._help: dict[str, str] = {}  # each field's tooltip
        self.held: dict[str, str] = {}  # fields shown but not edited -> why (``hold``)
        self._form = QFormLayout()
        self._form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.problem_label = QLabel()
        self.problem_label.setWordWrap(True)
        # it wraps at the form's width and never widens it: a refused value quoted there with no space in it (3,000
        # letters typed into the learning rate) laid the Pretrain tab out 22,000 px wide (bench/robustness/chaos.py)
        self.problem_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._bad: set[str] = set()  # the fields whose values are refused
        self._marked: dict[str, str] = {}  # field -> the background it was given (a field not here: the theme's)
        # coloured again for a new palette at the next turn of the event loop (a timer of its own: see the polysemy
        # panel's _rewrite_soon for what QTimer.singleShot with a context kept)
        self._recolour_soon = QTimer(self, singleShot=True, interval=0)
        self._recolour_soon.timeout.connect(self._recolour)
        fields = QWidget()
        fields.setLayout(self._form)
        self.fields_view = QScrollArea()  # many settings (BERT has 20): they scroll, the problems stay in sight
        self.fields_view.setWidgetResizable(True)
        self.fields_view.setWidget(fields)
        # a field brought into view stays in view while the form settles (a problem told below it, the tab's
        # status growing: the view shrank and the field was left half hidden), until the user scrolls or goes to
        # another field: a problem told as they edit it does not pull the view back
        self._in_view: QWidget | None = None
        bar = self.fields_view.verticalScrollBar()
        bar.rangeChanged.connect(self._keep_in_view)
        bar.actionTriggered.connect(self._let_go)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.fields_view, 1)
        layout.addWidget(self.problem_label)

    def set_kind(self, kind: str, preset: str | None = None, hidden: tuple[str, ...] = (),
                 device: str | None = None) -> None:
        """Rebuild the form for ``kind`` with the values of ``preset`` on a ``device`` of that type (fields
        in ``hidden`` stay off it)."""
        from engine import api

        self._let_go()  # (a field of the old form held in view)
        while self._form.rowCount():
            self._form.removeRow(0)
        self.kind, self.editors, self.types, self.optional = kind, {}, {}, {}
        self._folders_told, self._help, self.held = {}, {}, {}  # (the new form's fields: none told yet, none held)
        self._marked = {}  # (new fields: on the theme's background)
        for setting in api.model_settings(kind, preset, device):
            if setting.name in hidden:
                continue
            editor = self._editor(setting)
            editor.setToolTip(setting.help or setting.name)
            self._help[setting.name] = setting.help or setting.name
            label = QLabel(setting.name.replace("_", " "))
            label.setToolTip(setting.help or setting.name)
            self._form.addRow(label, editor)
            self.editors[setting.name] = editor
            self.types[setting.name] = setting.type
            self.optional[setting.name] = setting.optional
        self._check()

    def bring_into_view(self, name: str) -> None:
        """Scroll the form to a setting's field (one set for the user, far down the list), once the form just
        rebuilt for a family has been laid out (at the event loop's next turn)."""
        editor = self.editors.get(name)
        if editor is not None:
            if self._in_view is None:  # (the application's focus followed only while a field is held in view)
                running_app().focusChanged.connect(self._focus_moved)
            self._in_view = editor
            QTimer.singleShot(0, editor, self._keep_in_view)

    def _keep_in_view(self) -> None:
        if self._in_view is not None and self._in_view in self.editors.values():
            self.fields_view.ensureWidgetVisible(self._in_view)

    def _let_go(self, _action: int = 0) -> None:
        if self._in_view is not None:
            self._in_view = None
            with contextlib.suppress(RuntimeError, TypeError):
                running_app().focusChanged.disconnect(self._focus_moved)

    def _focus_moved(self, _old: QWidget | None, new: QWidget | None) -> None:
        if self._in_view is not None and new is not None and new is not self._in_view \
                and self.fields_view.isAncestorOf(new):
            self._let_go()

    def hold(self, held: dict[str, str]) -> None:
        """Fields whose values come from elsewhere (a run gone on from: its architecture) are shown but not
        edited, each saying why in its tooltip; ``{}`` lets every field be edited again."""
        self.held = dict(held)
        for name, editor in self.editors.items():
            why = held.get(name)
            editor.setEnabled(why is None)
            editor.setToolTip(self._help.get(name, name) + (f"\n\n{why}" if why else ""))

    def apply_preset(self, preset: str | None, device: str | None = None) -> None:
        """Fill in a preset's values (on a ``device`` of that type), keeping the editors; the held values and the
        files and runs the user named stay (a preset is a size, not a run to go on from)."""
        from engine import api

        kept = {*self.held, *FILE_SETTINGS, *FOLDER_SETTINGS}
        self.set_values({s.name: s.value for s in api.model_settings(self.kind, preset, device)
                         if s.name in self.editors and s.name not in kept})

    def apply_device(self, preset: str | None, device: str | None) -> None:
        """Fill in the values that differ on a GPU (ELMo's batch and rate) for a ``device`` of this type,
        leaving every other value as it is."""
        from engine import api

        differ = set(api.device_settings(self.kind, "cuda"))
        self.set_values({s.name: s.value for s in api.model_settings(self.kind, preset, device)
                         if s.name in differ and s.name in self.editors})

    def _editor(self, setting: Any) -> QWidget:
        if setting.choices:
            editor = QComboBox()
            for choice, shown in zip(setting.choices, setting.choice_names, strict=True):
                editor.addItem(shown, choice)
            editor.setCurrentIndex(max(0, editor.findData(setting.value)))
            narrow_choice(editor)  # the longest choice made the form wider than its column, every field cut
            editor.currentIndexChanged.connect(self._check)
            return editor
        if setting.type == "bool":
            box = QCheckBox()
            box.setChecked(bool(setting.value))
            box.toggled.connect(self._check)
            return box
        if setting.type == "int" and not setting.optional:
            spin = QSpinBox()
            spin.setRange(-1, 2_000_000_000)
            spin.setValue(int(setting.value))
            spin.setGroupSeparatorShown(True)
            spin.valueChanged.connect(self._check)
            return spin
        line = QLineEdit(self._text(setting.value))  # numbers like 5e-4, optional numbers ("" = none) and text
        if setting.optional:
            line.setPlaceholderText("none")
        if setting.name in FILE_SETTINGS or setting.name in FOLDER_SETTINGS:
            folder = setting.name in FOLDER_SETTINGS
            line.setPlaceholderText("none (a run folder or a shipped model's name)" if folder else "none (choose a file)")
            icon = self.style().standardIcon(QStyle.StandardPixmap.SP_DirOpenIcon)
            action = line.addAction(icon, QLineEdit.ActionPosition.TrailingPosition)  # type: ignore[call-overload]
            action.setToolTip("Choose a run folder" if folder else "Choose a file")
            action.triggered.connect(lambda _=False, e=line, n=setting.name: self._choose_file(e, n))
            if folder:
                line.editingFinished.connect(lambda n=setting.name: self._folder_given(n))
        line.textChanged.connect(self._check)
        return line

    def _choose_file(self, editor: QLineEdit, name: str) -> None:
        if name in FOLDER_SETTINGS:
            path = QFileDialog.getExistingDirectory(self, FOLDER_SETTINGS[name], editor.text())
        else:
            path, _ = QFileDialog.getOpenFileName(self, name.replace("_", " "), editor.text(), FILE_SETTINGS[name])
        if path:
            editor.setText(path)
            if name in FOLDER_SETTINGS:
                self._folder_given(name)

    def _folder_given(self, name: str) -> None:
        editor = self.editors.get(name)
        value = editor.text().strip() if isinstance(editor, QLineEdit) else ""
        if value != self._folders_told.get(name, ""):
            self._folders_told[name] = value
            self.folder_set.emit(name, value)

    @staticmethod
    def _text(value: Any) -> str:
        if value is None:
            return ""
        return f"{value:g}" if isinstance(value, float) else str(value)

    def set_values(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            editor = self.editors.get(name)
            if editor is None:
                continue
            editor.blockSignals(True)
            if isinstance(editor, QComboBox):
                editor.setCurrentIndex(max(0, editor.findData(value)))
            elif isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QSpinBox):
                editor.setValue(int(value))
            elif isinstance(editor, QLineEdit):
                editor.setText(self._text(value))
                if name in FOLDER_SETTINGS:  # (the program's value: not the user's to tell of)
                    self._folders_told[name] = editor.text().strip()
            editor.blockSignals(False)
        self._check()

    def _parse(self) -> tuple[dict[str, Any], list[str]]:
        values: dict[str, Any] = {}
        problems: list[str] = []
        for name, editor in self.editors.items():
            if isinstance(editor, QComboBox):
                values[name] = editor.currentData()
            elif isinstance(editor, QCheckBox):
                values[name] = editor.isChecked()
            elif isinstance(editor, QSpinBox):
                values[name] = editor.value()
            else:
                text = editor.text().strip()  # type: ignore[attr-defined]
                kind = self.types[name]
                if not text and self.optional[name]:
                    values[name] = None
                elif kind in ("int", "float"):
                    try:
                        values[name] = int(text) if kind == "int" else float(text)
                    except ValueError:
                        problems.append(f"{name} must be {'a whole number' if kind == 'int' else 'a number'}, "
                                        f"not {shortened(text, QUOTED_AT_MOST)!r}")
                else:
                    values[name] = text
        return values, problems

    def values(self) -> dict[str, Any]:
        """The settings as typed (call ``problems`` first: a field that does not parse is left out)."""
        return self._parse()[0]

    def _check(self) -> None:
        from engine import api

        values, problems = self._parse()
        if not problems:
            problems = api.check_settings(self.kind, values)
        self.problems = problems
        self.problem_label.setText("\n".join(problems))
        self.problem_label.setVisible(bool(problems))
        self._bad = {name for name in self.editors
                     if any(p.startswith(name + " ") or f"({name})" in p or f" {name} (" in p for p in problems)}
        self._mark()
        self.changed.emit()

    def marked(self, name: str) -> bool:
        """Whether the field ``name`` is marked as refused."""
        return name in self._marked

    def _mark(self) -> None:
        """The refused fields on a background of their own, the others on the theme's; a field already as it
        should be is left alone (restyling a field beside busy workers took 0.4 s)."""
        window = self.palette().color(QPalette.ColorRole.Window)
        background = INVALID_ON_DARK if window.lightness() < 128 else INVALID_ON_LIGHT
        text = readable(self.palette().color(QPalette.ColorRole.Text), background, TEXT)
        for name, editor in self.editors.items():
            wanted = background if name in self._bad else None
            if self._marked.get(name) == wanted:
                continue
            palette = QPalette()  # (only the roles set here are the field's own; the rest follow the theme)
            if wanted is not None:
                for role in (QPalette.ColorRole.Base, QPalette.ColorRole.Button):
                    palette.setColor(role, QColor(wanted))
                for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
                    palette.setColor(role, QColor(text))
                self._marked[name] = wanted
            else:
                self._marked.pop(name, None)
            editor.setPalette(palette)
        palette = QPalette()
        palette.setColor(QPalette.ColorRole.WindowText, QColor(readable(PROBLEM, window, TEXT)))
        self.problem_label.setPalette(palette)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """A new theme: the marks and the problems in colours for it, once every widget has its palette."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_recolour_soon"):
            self._recolour_soon.start()

    def _recolour(self) -> None:
        self._marked.clear()  # (every field coloured again)
        self._mark()
