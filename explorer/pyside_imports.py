"""A lighter check for PySide's import hook, so that imports after Qt cost what they cost without it.

Importing PySide6 replaces Python's ``__import__``: after every import statement, anywhere in the process,
PySide looks at each module it has not seen to decide whether the module "uses PySide6" (for its opt-in
``from __feature__ import snake_case``, which word2bert does not use). It decides with ``inspect.getsource``,
which walks every module in ``sys.modules`` to map files to modules and keeps each source file's lines in
``linecache`` for the rest of the process. The window imports torch, transformers and scikit-learn after Qt
(in workers, so that it shows at once), and each of their ~2,000 modules paid for that walk, holding the GIL:
importing them took 5.9-6.1 s instead of 4.2-4.7 s, and left 1,800 source files (39 M characters) in
``linecache``. Panels built lazily paid it on the GUI thread (the chaos bench's stall sampler: 97 samples in
``loader.py:feature_imported``).

``lighter_import_hook()`` swaps PySide's check for one with the same answer (does the module's source file
contain "PySide6"?) read straight from the file, without the walk and without keeping the lines. Where PySide
is not imported, or does not have the check (another version), nothing changes."""

from __future__ import annotations

import sys
from types import ModuleType

FEATURE_MODULE = "shibokensupport.feature"  # PySide6's __feature__ support, as shiboken6 loads it
CHECK = "_mod_uses_pyside"


def source_mentions_pyside(module: ModuleType) -> bool:
    """PySide's own test, "PySide6" in the module's source, read from its file (no source: False, as PySide)."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return False
    try:
        with open(path, "rb") as f:
            return b"PySide6" in f.read()
    except OSError:
        return False


def lighter_import_hook() -> bool:
    """Call once PySide6 is imported. True when PySide's check was replaced (now or before)."""
    feature = sys.modules.get(FEATURE_MODULE)
    if feature is None or not callable(getattr(feature, CHECK, None)):
        return False
    setattr(feature, CHECK, source_mentions_pyside)
    return True
