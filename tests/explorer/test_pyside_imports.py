"""Imports after Qt: PySide's per-module check reads the file and keeps nothing (explorer/pyside_imports.py)."""

import linecache
import sys

import PySide6.QtCore  # noqa: F401  (installs PySide's import hook)

from explorer.pyside_imports import FEATURE_MODULE, lighter_import_hook


def _import(name: str) -> None:
    exec(f"import {name}", {})  # an import statement, through builtins.__import__ as in any module


def test_modules_imported_after_qt_are_checked_without_keeping_their_source(tmp_path, monkeypatch):
    assert lighter_import_hook()
    plain = tmp_path / "w2b_plain_module_for_hook.py"
    plain.write_text("ANSWER = 42\n" * 200, encoding="utf-8")
    qt = tmp_path / "w2b_qt_module_for_hook.py"
    qt.write_text("from PySide6.QtCore import QObject\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        _import(plain.stem)
        _import(qt.stem)
        feature = sys.modules[FEATURE_MODULE]
        # the same answers as PySide's own check: a module that mentions PySide6 takes part in feature switching
        assert feature.pyside_feature_dict[plain.stem] == -1
        assert feature.pyside_feature_dict[qt.stem] == 0
        # and the check did not leave the modules' lines in memory (PySide's kept every imported module's)
        assert str(plain) not in linecache.cache and str(qt) not in linecache.cache
    finally:
        for name in (plain.stem, qt.stem):
            sys.modules.pop(name, None)


def test_nothing_changes_where_pyside_has_no_such_check(monkeypatch):
    monkeypatch.delitem(sys.modules, FEATURE_MODULE)
    assert not lighter_import_hook()
