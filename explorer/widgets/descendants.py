"""The objects under a widget, found without leaving wrappers behind.

``findChildren`` makes a Python wrapper for every object it passes and ties each to the wrapper of the object it
was called on. A widget Qt made itself (a combo box's list, a scroll area's bars, a spin box's line edit) tells
Python nothing when Qt deletes it, so its wrapper stays tied there, dead, for as long as that wrapper lives: 20 dead
wrappers for each rebuild of a form of five combo boxes, five spin boxes and a scroll area (tests/explorer/widgets/
test_descendants.py checks a smaller one), and 17,704 in an hour of the chaos bench (bench/robustness/RESULTS.md).
``children()`` ties nothing: a wrapper it made goes with the list unless someone keeps it. The walk here visits
them in ``findChildren``'s order (depth first, each object before its children), so a seeded choice among them is
the same either way.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject


def descendants(root: QObject, kind: type | tuple[type, ...] = QObject) -> list[Any]:
    """Every object under ``root`` (not ``root`` itself) that is a ``kind``, depth first, in ``findChildren``'s
    order."""
    found: list[Any] = []
    stack = list(reversed(root.children()))
    while stack:
        obj = stack.pop()
        if isinstance(obj, kind):
            found.append(obj)
        stack.extend(reversed(obj.children()))
    return found
