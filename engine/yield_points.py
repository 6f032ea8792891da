"""Yield points: a worker thread's model work waits while a more urgent thread of the same process is working (the
app's window, through its relayouts and repaints: ``explorer.window_work``).

Python runs one thread at a time (the GIL). A window's relayout or repaint calls into Python at every widget and plot
item it touches, and beside a worker running a model's Python between its torch operations, each of those calls waits
for the worker to hand the GIL back (a switch interval and a wake-up: a plot's repaint took 3 ms alone and 8 ms beside
one spinning Python thread, bench/speed/RESULTS.md). While the window says it is working (``hold_workers``), worker
threads stop at their next yield point and go on when it is done (``release_workers``) or when the hold runs out,
whichever comes first: the hold never outlasts ``most_s``, and the main thread never waits. The yield points: the
start of a torch module's forward and each module or parameter a model being built registers (once
``yield_at_modules`` has made them so), the engine's steps between which a long query can be cancelled
(``engine.cancel.check_cancelled``) and each tensor a safetensors file gives (``engine.data.safetensors_torch``).
Torch-free until ``yield_at_modules`` is called.
"""

from __future__ import annotations

import sys
import threading
import time

_running = threading.Event()  # set: workers run; clear: held
_running.set()
_until = [0.0]  # time.monotonic() at which the hold ends by itself
_hooked: list[object] = []  # the hook's handle, once installed


def hold_workers(most_s: float) -> None:
    """From the urgent thread: worker threads wait at their next yield point, until ``release_workers`` or for at most
    ``most_s`` seconds from now (a later hold extends it)."""
    _until[0] = max(_until[0], time.monotonic() + most_s)
    _running.clear()


def release_workers() -> None:
    """The workers go on (those waiting, at once)."""
    _until[0] = 0.0
    _running.set()


def workers_held() -> bool:
    return not _running.is_set() and _until[0] > time.monotonic()


def yield_point() -> None:
    """Wait here while the workers are held (never on the main thread, never past the hold's end)."""
    if _running.is_set() or threading.current_thread() is threading.main_thread():
        return
    left = _until[0] - time.monotonic()
    if left > 0:
        _running.wait(left)


def _before_forward(_module: object, _args: object) -> None:
    yield_point()


def _registered(_module: object, _name: str, _what: object) -> None:
    yield_point()  # (None: what is registered stays as it is)


def yield_at_modules() -> None:
    """Make the start of every torch module's forward, and each submodule and parameter a module registers as it is
    built (a model loaded: transformers builds hundreds), yield points, in every thread (once; only if torch is
    loaded already: it is never imported for this). A no-op for the main thread and while nothing is held."""
    if _hooked:
        return
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "nn"):
        return
    modules = torch.nn.modules.module
    _hooked.append(modules.register_module_forward_pre_hook(_before_forward))
    _hooked.append(modules.register_module_module_registration_hook(_registered))
    _hooked.append(modules.register_module_parameter_registration_hook(_registered))


def stop_yielding_at_modules() -> None:
    """Take the hook away again (a test that installed it leaves the process as it found it)."""
    while _hooked:
        _hooked.pop().remove()  # type: ignore[attr-defined]
