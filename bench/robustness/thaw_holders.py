"""What holds an unloaded model when the window thaws its frozen objects for it, and whether the thaw freed it.

The chaos monkey drives the chaos window (bench/robustness/chaos.py) for ``--seconds``; every ``--freeze-every``
seconds the window's objects are collected and frozen as at a quiet moment (the monkey leaves none: its work never
stops for the app's own freezer's three seconds). At each thaw (explorer.garbage.thaw) the unloaded model it is for
is looked at: whether a collection finds it among the garbage (a frozen cycle: the thaw frees it) or alive (held by
a live object, frozen: the thaw freed nothing), and what refers to it; at the next freeze, whether it is still
alive and how long the freeze's collection took. Prints a line per thaw and per freeze, and a count at the end.

    QT_QPA_PLATFORM=offscreen python bench/robustness/thaw_holders.py --seconds 480 --seed 7
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import types
import weakref
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def describe(obj: Any, held: Any) -> str:
    """One referrer of ``held``, said by what it is: a function by its name, an attribute by its owner's class."""
    if isinstance(obj, types.FunctionType):
        return f"function {obj.__qualname__}"
    if isinstance(obj, types.FrameType):
        return f"frame {obj.f_code.co_name} ({os.path.basename(obj.f_code.co_filename)}:{obj.f_lineno})"
    if isinstance(obj, dict):
        owners = [o for o in gc.get_referrers(obj) if getattr(o, "__dict__", None) is obj]
        keys = [k for k, v in obj.items() if v is held][:2]
        return f"attribute {keys} of {type(owners[0]).__qualname__}" if owners else f"dict {keys}"
    try:
        keys = [k for k, v in vars(obj).items() if v is held][:2]  # (an instance's inline attributes, Python 3.11+)
    except TypeError:
        keys = []
    return f"attribute {keys} of {type(obj).__qualname__}" if keys else type(obj).__qualname__


def referrers(held: Any, depth: int = 3) -> list[str]:
    """What refers to ``held``, up to ``depth`` steps through containers and closures' cells (this module's own
    lists and frames left out)."""
    mine: set[int] = set()

    def walk(obj: Any, left: int) -> list[str]:
        found = gc.get_referrers(obj)
        mine.add(id(found))
        out = []
        for ref in found:
            if id(ref) in mine or type(ref).__name__ == "list_iterator":
                continue
            if isinstance(ref, types.FrameType) and ref.f_code.co_filename == __file__:
                continue
            mine.add(id(ref))
            said = describe(ref, obj)
            if left and isinstance(ref, (list, tuple, set, types.CellType)):
                said += " <- (" + "; ".join(walk(ref, left - 1)[:3]) + ")"
            out.append(said)
        return out

    return walk(held, depth)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=480.0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--freeze-every", type=float, default=60.0, metavar="SECONDS")
    p.add_argument("--history-run", default="runs/minilm-hist")
    args = p.parse_args()
    from bench.robustness.window_process import window_like_application

    app = window_like_application()
    import explorer.garbage as garbage
    import explorer.session as session_module

    looked_at: list[Any] = [None]  # the weak reference of the model the last look was for
    thawed_for: list[Any] = []  # models thawed for since the last freeze (weak references)
    counts = {"thaws": 0, "garbage": 0, "held": 0, "alive at the next freeze": 0}
    real_thaw_for, real_thaw, real_freeze = garbage.thaw_for, garbage.thaw, garbage.freeze_now

    def thaw_for(gone: Any, wait_ms: int, checks: int = garbage.UNLOAD_CHECKS) -> None:
        looked_at[0] = gone
        real_thaw_for(gone, wait_ms, checks)

    def thaw() -> None:
        handle = looked_at[0]() if looked_at[0] is not None else None
        counts["thaws"] += 1
        if handle is not None:
            garbage.unfreeze()
            said = referrers(handle)
            thawed_for.append(weakref.ref(handle))
            name, kind, handle_id = getattr(handle, "name", ""), type(handle).__name__, id(handle)
            del handle
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            gc.set_debug(0)
            in_garbage = any(id(o) == handle_id for o in gc.garbage)
            gc.garbage.clear()
            counts["garbage" if in_garbage else "held"] += 1
            print(f"thaw for {kind} {name}: {'in a garbage cycle' if in_garbage else 'held by live objects'}; "
                  f"referrers: {said[:4]}", flush=True)
            garbage._FROZEN[0] = True  # (unfrozen here already: the app's thaw goes on as it would)
        real_thaw()

    def freeze_now() -> None:
        began = time.perf_counter()
        real_freeze()
        alive = sum(ref() is not None for ref in thawed_for)
        counts["alive at the next freeze"] += alive
        print(f"freeze: {(time.perf_counter() - began) * 1000:.0f} ms; models thawed for since the last, still "
              f"alive: {alive} of {len(thawed_for)}", flush=True)
        thawed_for.clear()

    garbage.thaw_for = session_module.thaw_for = thaw_for  # type: ignore[assignment]
    garbage.thaw, garbage.freeze_now = thaw, freeze_now  # type: ignore[assignment]
    from bench.robustness.chaos import chaos_window
    from bench.robustness.monkey import Monkey, wait

    _, window = chaos_window(app)
    history = args.history_run if os.path.isdir(args.history_run) else None
    monkey = Monkey(window, args.seed, pace_ms=80, train=True, history_run=history)
    monkey.start()
    began = last_freeze = time.monotonic()
    while time.monotonic() - began < args.seconds:
        wait(app, 5)
        if time.monotonic() - last_freeze > args.freeze_every:
            garbage.freeze_now()
            last_freeze = time.monotonic()
    print(f"{args.seconds:.0f} s, seed {args.seed}: {counts}", flush=True)
    os._exit(0)  # (the monkey's work is not waited for)


if __name__ == "__main__":
    main()
