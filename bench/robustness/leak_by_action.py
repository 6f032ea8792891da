"""Which kind of action the window's memory grows with (issue 37, item 4: the chaos runs grow ~14 MB a minute,
glibc's bytes in use, while the tensors and arrays Python reaches stay flat). The window of chaos.py, warmed up
with the monkey's whole mix; then phases of one kind of action each (a zoom, the talk window, an unload…, and an
idle phase that does nothing, the control), ``--actions`` of them, each followed by the same quiet moment as
chaos.py's (its ``quiet_memory``). A phase's growth is the difference between the quiet moments around it, in
glibc's bytes in use, the anonymous RSS less the packed weight copies, and the objects Python's collector tracks;
``--rounds`` rounds of every phase, so that caches filling (the first round) tell from a leak (every round).

    QT_QPA_PLATFORM=offscreen python bench/robustness/leak_by_action.py [--actions 150] [--rounds 2] [--kinds zoom,talk]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402
from bench.robustness.chaos import chaos_window, loaded_keys, quiet_memory  # noqa: E402
from bench.robustness.memory import every_object, in_use_mb  # noqa: E402
from bench.robustness.monkey import Monkey, wait  # noqa: E402

# the kinds whose action depends on the tab shown are mixed with tab switches (one in four), so that they act on
# every tab; "idle" does nothing for as long as a phase of zooms takes: the drift of a window left alone
TAB_BOUND = {"type", "click", "choose", "slide", "spin", "tick", "view"}
FIGURES = (("unpacked", "anonymous RSS less the packed copies"),
           ("live", "malloc's blocks in use (glibc's heap in use and mmapped)"),
           ("slack", "anonymous RSS not in malloc's blocks in use (freed but resident, and memory not from malloc)"),
           ("objects", "objects the collector tracks (thousands)"),
           ("unheld", "ints no word of memory points at: references taken and never given back"),
           ("cxx", "C++ objects no word of memory points at (bench/robustness/cxx_objects.py)"))


_UNHELD_CXX: dict[int, str] = {}  # the last moment's C++ objects nobody pointed at: chunk -> class


def moment(app: Any, monkey: Monkey, keep: dict[str, str]) -> dict[str, float]:
    parts = quiet_memory(app, monkey, keep=keep)
    parts["unpacked"] = parts["anon"] - parts.get("packed", 0.0)
    parts["live"] = in_use_mb(parts)
    parts["slack"] = parts["anon"] - parts["live"]
    with every_object() as everything:  # (the frozen ones too: the app freezes its objects at quiet moments)
        parts["objects"] = len(everything) / 1000
    from bench.robustness.pointer_holders import unheld

    parts["unheld"] = float(len(unheld(int)))
    from bench.robustness import cxx_objects

    nobody = cxx_objects.unheld()
    parts["cxx"] = float(len(nobody))
    new = {c: name for c, name in nobody.items() if _UNHELD_CXX.get(c) != name}
    if _UNHELD_CXX:
        print(f"  C++ objects nobody points at, new since the moment before: {cxx_objects.by_class(new, 6)}", flush=True)
    _UNHELD_CXX.clear()
    _UNHELD_CXX.update(nobody)
    return parts


def phase(app: Any, monkey: Monkey, every: list[Any], kind: str, actions: int, idle_s: float) -> float:
    """``actions`` actions of ``kind``, drawn from ``every`` (the monkey's whole mix); the idle phase waits
    ``idle_s`` instead. Its seconds."""
    began = time.monotonic()
    if kind == "idle":
        wait(app, idle_s)
        return time.monotonic() - began
    chosen = [(name, act) for name, act in every if name == kind]
    if kind in TAB_BOUND:
        chosen = chosen * 3 + [a for a in every if a[0] == "tab"][:1]
    monkey.actions = chosen
    target = monkey.steps + actions
    while monkey.steps < target:
        wait(app, 0.5)
    return time.monotonic() - began


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--actions", type=int, default=150, help="actions in each phase")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--warmup-minutes", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--history-run", default=None, help="a run folder with kept checkpoints for the scrubber")
    p.add_argument("--kinds", default="", help="the kinds to try, comma-separated (all the monkey's, and idle)")
    p.add_argument("--no-write", action="store_true", help="print the results only")
    args = p.parse_args()
    from bench.robustness.window_process import window_like_application

    app = window_like_application()
    from explorer.python_allocator import python_allocator

    session, window = chaos_window(app)
    monkey = Monkey(window, args.seed, pace_ms=80, train=True, history_run=args.history_run)
    every = list(monkey.actions)
    kinds = [k for k in args.kinds.split(",") if k] or ["idle"] + sorted({name for name, _ in every})
    monkey.start()
    wait(app, args.warmup_minutes * 60)
    keep = loaded_keys(window)
    last = moment(app, monkey, keep)
    print("after the warm-up:", {k: round(v, 1) for k, v in last.items()}, flush=True)
    growth: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
    seconds: dict[str, float] = {}
    last_s = 30.0  # the phase before: how long an idle phase waits
    for round_ in range(args.rounds):
        for kind in kinds:
            last_s = seconds[kind] = phase(app, monkey, every, kind, args.actions, idle_s=last_s)
            now = moment(app, monkey, keep)
            growth[kind].append({f: now[f] - last[f] for f, _ in FIGURES})
            last = now
            print(f"round {round_ + 1} {kind}: {seconds[kind]:.0f} s;",
                  ", ".join(f"{f} {growth[kind][-1][f]:+.1f}" for f, _ in FIGURES),
                  f"({len(monkey.exceptions)} exceptions)", flush=True)
    monkey.stop()
    rows = "\n".join(
        f"| {kind} | " + " | ".join(" / ".join(f"{g[f]:+,.0f}" if f != "objects" else f"{g[f]:+,.1f}" for g in growth[kind])
                                  for f, _ in FIGURES) + " |"
        for kind in sorted(kinds, key=lambda k: -sum(g["unpacked"] for g in growth[k])))
    body = f"""## The window's memory by kind of action

`QT_QPA_PLATFORM=offscreen python bench/robustness/leak_by_action.py --actions {args.actions} --rounds {args.rounds}{f' --history-run {args.history_run}' if args.history_run else ''}` ({machine()}; Python's objects from {python_allocator()}).
The chaos window warmed up for {args.warmup_minutes:g} minutes with the monkey's whole mix, then {args.rounds} rounds of
phases, each {args.actions} actions of one kind (the kinds that act on the tab shown: one action in four a tab switch;
"idle": nothing, for as long as the phase before it), each followed by the quiet moment of chaos.py. Growth over a
phase, round by round (MB; objects in thousands); most growth in the anonymous RSS less the packed copies first. Exceptions: {len(monkey.exceptions)}.

| kind | {' | '.join(label for _, label in FIGURES)} |
|{'---|' * (len(FIGURES) + 1)}
{rows}
"""
    if not args.no_write:
        write_section("leak-by-action", body)
    print(body)


if __name__ == "__main__":
    main()
