import gc
import sys

import pytest


@pytest.fixture(autouse=True)
def _earlier_windows_thawed():
    """An earlier test's window may have frozen its objects (explorer/garbage.py) and left a thaw waiting for a
    pause in the user's input that never came (the event loop stopped with its test): what its cycles hold is
    freed here as the window's next quiet moment would, so a bench's census of memory counts only its own."""
    garbage = sys.modules.get("explorer.garbage")
    if garbage is not None and garbage.anything_frozen():
        garbage.unfreeze()
        gc.collect()
    yield
