"""Chaos in the window, at length (issue 37, item 4): the seeded monkey of bench/robustness/monkey.py drives
the app with every default model loaded — typing hostile text, clicking, switching models, layers, views
and tabs, opening scenes, zooming, the talk deck and its window, small trainings started and stopped, the
checkpoint scrubber on a run — for ``--minutes`` (30 by default). It records the uncaught exceptions (the
goal: 0), the event loop's stalls (gaps of a 10 ms timer: a histogram, the worst, and where the GUI thread
was while it stalled), and RSS, threads and open files after a warm-up and at the end (the goal: RSS
growth under 5% after the warm-up). Writes the section "Chaos in the window" of bench/robustness/RESULTS.md;
the runs it replaced, and what each session read in them, are kept in bench/robustness/CHAOS-HISTORY.md.

    QT_QPA_PLATFORM=offscreen python bench/robustness/chaos.py [--minutes 30] [--seed 7] [--history-run RUN]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402
from bench.robustness.core_use import stall_lines, totals_line  # noqa: E402
from bench.robustness.glibc_pages import census_lone, census_mappings, lone_said, mapping_growth  # noqa: E402
from bench.robustness.memory import (  # noqa: E402
    ELSEWHERE_SIZES,
    census_mb,
    holders_mb,
    in_use_mb,
    rss_mb,
    rss_parts_mb,
)
from bench.robustness.monkey import (  # noqa: E402
    STALL_MS,
    Monkey,
    open_file_kinds,
    open_files,
    threads,
    wait,
)

WINDOW_SIZE = (1600, 1000)


def stall_gaps(monkey: Monkey) -> str:
    """The section's line on the event loop's gaps (printed at the end of a run, written or not)."""
    hist = monkey.stalls.histogram
    return f"""- Event-loop gaps of a 10 ms timer: {', '.join(f'{k} ms: {v:,}' for k, v in hist.items())}; worst
  **{monkey.stalls.worst_ms:,.0f} ms**; {len(monkey.stalls.over):,} gaps of {STALL_MS} ms or more (the goal: none)."""


def stall_causes(monkey: Monkey) -> str:
    """The section's lines on what came before the stalls and where the GUI thread was in them."""
    culprits = sorted(monkey.culprits.items(), key=lambda kv: -kv[1])[:8]
    return f"""- Gaps of {STALL_MS} ms or more by the monkey's last action before them (stalls / actions of that kind): {stalls_by_kind(monkey)}.
- Of those gaps, how many held a garbage collection of 100 ms or more (on the GUI thread: explorer/garbage.py): {monkey.stalls_with_collection:,}.
- Where the GUI thread was while it stalled (samples every 50 ms; "?" is Qt's own C++ work — layout, painting — with
  no Python frame of ours above it): {'; '.join(f'{k} ({v})' for k, v in culprits) or 'no stall'}.
- The GUI thread's scheduler state in those samples (R: working or waiting for a core; S: asleep, waiting for the
  GIL or a lock; D: in the kernel): {', '.join(f'{k} {v:,}' for k, v in sorted(monkey.gui_states.items(), key=lambda kv: -kv[1])) or 'no stall'};
  its time inside stalls (between samples 50 ms apart): {', '.join(f'{k} {v / 1000:,.1f} s' for k, v in monkey.gui_time_ms.items())}.
- Where the cores went in each stall (snapshots every 50 ms around it, so each span is a little longer than its
  stall; "beside it": the process's other threads by what they ran, and its child processes; bench/robustness/core_use.py):
  {totals_line(monkey.ledger.stalls)}.{''.join(chr(10) + '  - ' + line for line in stall_lines(monkey.ledger.stalls))}"""


def write_log(monkey: Monkey) -> None:
    """Every action, stall and slow collection, then the exceptions (not committed: bench/robustness/chaos-log.txt)."""
    Path("bench/robustness/chaos-log.txt").write_text("\n".join(monkey.log) + "\n\n" + "\n\n".join(monkey.exceptions))


def chaos_window(app: Any) -> tuple[Any, Any]:
    """The window the chaos benches drive, as (session, window): ``WINDOW_SIZE``, shown, with GloVe, MiniLM and the
    default models loaded (waits up to 5 minutes for them)."""
    from explorer.main_window import MainWindow
    from explorer.session import Session

    session = Session()
    window = MainWindow(session)
    window.resize(*WINDOW_SIZE)
    window.show()
    for name in ("glove-6b-50d", "all-minilm-l6-v2"):
        session.load(name)
    session.load_defaults()
    t0 = time.monotonic()
    while session.loading and time.monotonic() - t0 < 300:
        wait(app, 0.2)
    return session, window


def work_line(minutes: float, window: Any) -> str:
    """A line of the chaos log: the RSS and the work under way now, so that a rise of the memory while the monkey
    acts can be tied to the jobs it set off (Z46's RSS went from 4 to 15 GB in its last seven minutes)."""
    from PySide6.QtCore import QThreadPool

    from explorer.tasks import query_pool

    parts = rss_parts_mb()
    work = [f"queries {query_pool().activeThreadCount()}", f"jobs {QThreadPool.globalInstance().activeThreadCount()}"]
    indexer = window.polysemy.indexer
    if indexer.running:
        work.append(f"indexing {indexer.building} ({len(indexer.queue)} waiting)")
    for name, panel in (("history scoring", window.history.emerging), ("training", window.train),
                        ("fine-tuning", window.finetune)):
        job = getattr(panel, "job", None)
        if job is not None and getattr(job, "running", False):
            work.append(name)
    return (f"== {minutes:6.2f} min: RSS {rss_mb():,.0f} MB (anonymous {parts['anon']:,.0f}), "
            f"{len(window.session.models)} models; " + ", ".join(work))


def loaded_keys(window: Any) -> dict[str, str]:
    """The window's models: name -> how it loads again (a built-in or shipped one by its name, the user's by its
    folder's path)."""
    return {name: window.talk_mode.load_key(name) for name in window.session.models}


def stand_ins(keep: dict[str, str], loaded: dict[str, str], alias: str) -> dict[str, str]:
    """The start's models (``keep``: name -> how it loads) that are not loaded under their name, each with a model
    loaded now by the same folder under another name (not one of the start's, each used once): the name a run's
    checkpoint gets when it is loaded again by its folder's path. Not for the Run history's model (``alias``),
    which no load names."""
    found: dict[str, str] = {}
    for name, key in keep.items():
        if name == alias or name in loaded:
            continue
        other = next((n for n, k in loaded.items() if k == key and n not in keep and n not in found.values()), None)
        if other is not None:
            found[name] = other
    return found


def print_holders(monkey: Monkey, when: str) -> None:
    """Who holds the big buffers and the handles not loaded (``--holders``): to compare the two moments."""
    loaded = {id(h) for h in monkey.window.session.models.values()}
    print(f"holders {when}:", flush=True)
    for path, mb in holders_mb(loaded):
        print(f"  {mb:8.1f} MB  {path}", flush=True)
    print_threads()


def print_threads() -> None:
    """What each thread is doing now (a quiet moment that is not quiet: what still runs)."""
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, top in sys._current_frames().items():  # what each thread is doing at this quiet moment
        stack: list[str] = []
        frame: Any = top
        while frame is not None and len(stack) < 4:
            stack.append(f"{frame.f_code.co_name} ({frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno})")
            frame = frame.f_back
        print(f"  thread {names.get(ident, ident)}: {' < '.join(stack)}", flush=True)


def quiet_trajectory(marks: list[tuple[float, dict[str, float]]]) -> str:
    return "; ".join(f"{minute:.0f}: {m['anon']:,.0f}, {m['anon'] - m.get('packed', 0):,.0f}; {m.get('tensors', 0):,.0f}; "
                     f"{m['anon'] - in_use_mb(m):,.0f} MB" for minute, m in marks)


def stalls_by_kind(monkey: Monkey) -> str:
    """Which kinds of action the stalls followed, most first, with how many of that kind were done."""
    kinds = sorted(monkey.stalls_after, key=lambda k: -monkey.stalls_after[k])
    return ", ".join(f"{k or 'none yet'} {monkey.stalls_after[k]:,} / {monkey.done_by_kind.get(k, 0):,}"
                     for k in kinds) or "no stall"


def type_counts() -> dict[str, int]:
    """How many objects of each type the collector tracks (the frozen ones included): diffed between the two
    quiet moments by ``--trace``, what kind of object grew."""
    from collections import Counter

    import shiboken6
    from PySide6.QtWidgets import QWidget

    from bench.robustness.memory import every_object

    def label(obj: object) -> str:
        # a wrapper whose Qt object is gone is counted apart: the monkey's ``findChildren`` makes them by the
        # thousand (see ``_chain``), and counted by their type they read as widgets that leak
        name = f"{type(obj).__module__}.{type(obj).__qualname__}"
        dead = _is_a(obj, shiboken6.Shiboken.Object) and not shiboken6.isValid(obj)
        return f"dead wrapper of {name}" if dead else name

    with every_object() as everything:
        counts = Counter(label(o) for o in everything)
        counts.update(f"widget {_chain(o)}" for o in everything if _is_a(o, QWidget))
    return dict(counts)


def _is_a(obj: object, cls: type) -> bool:
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # isinstance on torch's deprecated module attributes warns
            return isinstance(obj, cls)
    except Exception:  # noqa: BLE001 - an object whose isinstance check fails is not one
        return False


def _chain(widget: Any, depth: int = 6) -> str:
    """A widget's class and its parents' up to its window ("deleted" for a wrapper whose Qt object is gone,
    "no parent" for one that is its own window, shown or not): where the widgets that grew hang. Deleted ones are
    mostly the monkey's own: ``findChildren`` makes a wrapper for every widget Qt created (a combo box's list, a
    scroll area's bars), and when Qt deletes the widget, its parent's wrapper keeps the dead wrapper (about 1,200
    after 6 minutes; the app makes no such wrappers)."""
    names: list[str] = []
    try:
        while widget is not None and len(names) < depth:
            names.append(type(widget).__name__ + ("" if widget.parent() is not None else
                                                  " (no parent, shown)" if widget.isVisible() else " (no parent, hidden)"))
            widget = widget.parent()
    except RuntimeError:
        names.append("deleted")
    return " < ".join(names)


def print_growth(before: dict[str, int], after: dict[str, int], snapshot: Any) -> None:
    """``--growth``: the types whose count grew most between the quiet moments (``after`` counted before the
    snapshot is taken: its traces are a tuple each, hundreds of thousands of them); ``--trace``: where the memory
    still alive at the end that was allocated since the first moment was allocated (tracemalloc: Python objects and
    numpy buffers; torch's and Qt's own allocations are not traced)."""
    grown = sorted(((after.get(k, 0) - before.get(k, 0), k) for k in after), reverse=True)[:30]
    print("types (and widgets, by their parents) that grew most (count):", flush=True)
    for n, k in grown:
        if n > 0:
            print(f"  {n:+8d}  {k}", flush=True)
    if snapshot is None:
        return
    stats = snapshot.statistics("traceback")
    total = sum(s.size for s in stats) / 2**20
    print(f"memory allocated since the warm-up and alive at the end (traced): {total:,.1f} MB; the largest:", flush=True)
    for stat in stats[:12]:
        print(f"  {stat.size / 2**20:8.1f} MB in {stat.count} blocks", flush=True)
        for line in stat.traceback.format(limit=6):
            print(f"      {line}", flush=True)


def settle(app, monkey: Monkey, tries: int = 6) -> bool:
    """Stop every job and wait for the workers, again while a panel starts new work in reply (a model that
    finished loading, say, sets off an index build): whether all was quiet within ``tries`` rounds."""
    from explorer.tasks import wait_for_workers

    for _ in range(tries):
        monkey.window.stop_jobs(wait_ms=60_000)
        quiet = wait_for_workers(30_000)
        wait(app, 1)  # what the stopped jobs' last signals set off
        if quiet and not monkey.window.running_jobs() and wait_for_workers(0):
            return True
    return False


def quiet_memory(app, monkey: Monkey, keep: dict[str, str] | None = None, holders: str = "") -> dict[str, float]:
    """RSS at a quiet moment: the monkey paused, the queries and jobs it started done or stopped (a training
    run stopped as Stop does), freed memory given back, the loop run for a few seconds. What a leak grows;
    RSS read while actions run swings by a gigabyte with whatever is being computed at that instant. With
    ``keep`` (the start's models: name -> how it loads again, ``loaded_keys``): first the RSS with every model the
    monkey loaded ("models_rss"), then every model not in ``keep`` unloaded, as a user closes what they opened (the
    runs it trained and opened, the checkpoints it pinned), and every one of ``keep`` it unloaded loaded again, so
    that both moments hold the same models."""
    from engine.api import release_memory
    from explorer.session import UNLOAD_SETTLE_MS

    monkey.pause()
    monkey.close_dialogs()
    monkey.close_talk()  # its window holds a panel and answers for each step of the deck: closed at both moments
    # the zoom the monkey left, and the window's size with it: back to the start's at both moments (a window
    # zoomed to 8 is several times the pixels, in its backing store and every view's; like with like)
    monkey.window.zoom(0)
    monkey.window.resize(*WINDOW_SIZE)
    monkey.window.set_theme(monkey.start_theme)  # (and the theme it started with)
    t0 = time.monotonic()
    while monkey.window.session.loading and time.monotonic() - t0 < 120:  # models it asked for: in first
        wait(app, 0.2)
    busy = 0.0 if settle(app, monkey) else 1.0  # a quiet moment that is not quiet: said in the results
    if busy:
        print("not quiet after six rounds of Stop-all; running jobs:",
              [getattr(job, "what", type(job).__name__) for job in monkey.window.running_jobs()], flush=True)
        print_threads()
    # a user who stops for a while: the Run history lets go of the checkpoints it kept for quick scrubbing
    # SCRUB_REST_MS after the slider last moved (run F's census came sooner and counted four MiniLM checkpoints)
    wait(app, monkey.window.history.rest_left_ms() / 1000 + 0.5)
    wait(app, 2)
    release_memory()
    wait(app, 2)
    parts = {"rss": rss_mb(), **rss_parts_mb(), "models": float(len(monkey.window.session.models))}
    if keep is not None:
        history = monkey.window.history
        # (what the monkey loaded again by a folder's path has the folder's name: it stands in for the start's model
        # of that folder that is no longer loaded, one for one. Z36a's first version let every model of a kept folder
        # stay, and ended with one more model than it started with: bench/robustness/RESULTS.md)
        standing = set(stand_ins(keep, loaded_keys(monkey.window), history.alias).values())
        extra = [n for n in monkey.window.session.models if n not in keep and n not in standing]
        parts |= {"models_rss": parts["rss"], "models_anon": parts["anon"], "unloaded": float(len(extra)),
                  "models_before": parts["models"]}
        for name in extra:
            monkey.window.session.unload(name)
        wait(app, UNLOAD_SETTLE_MS / 1000 + 1)
        # and what the monkey unloaded of the start's models is loaded again (run W ended with three fewer
        # models than it started with: 178 MB of tensors less, which hid growth of the same size)
        # (by how each loads: a run's checkpoint by its folder; the Run history's "RUN (scrubber)", which no load
        # names, as a user brings it back: the slider moved again. Loaded by name, it never came back, and Z35's
        # end had one model fewer than its start: bench/robustness/RESULTS.md)
        def back(name: str) -> bool:
            return name in monkey.window.session.models or name in stand_ins(
                keep, loaded_keys(monkey.window), history.alias)

        missing = sorted(n for n in keep if not back(n))
        for name in missing:
            if name == history.alias:
                history._slid(history.slider.value())
            else:
                monkey.window.session.load(keep[name])
        t0 = time.monotonic()
        while time.monotonic() - t0 < 300 and (monkey.window.session.loading
                                                or not all(back(n) for n in missing)):
            wait(app, 0.2)
        parts["reloaded"] = float(len(missing))
        parts["not_back"] = float(sum(not back(n) for n in missing))
        # a panel whose model went picks another and asks it (an index build, say): stopped before reading
        busy = max(busy, 0.0 if settle(app, monkey) else 1.0)
        wait(app, 2)
        release_memory()
        wait(app, 2)
        parts |= {"rss": rss_mb(), **rss_parts_mb(), "models": float(len(monkey.window.session.models))}
    parts |= census_mb() | {"busy": busy, "try_it": try_it_mb(monkey.window), "widgets": float(widget_count())}
    if holders:
        print_holders(monkey, holders)
    monkey.pause(False)
    return parts


def widget_count() -> int:
    """The Qt widgets alive (shown or not, the app's and Qt's own: a combo box's list, a scroll area's bars): what a
    zoom gives its font to, one by one, and what a window that leaks widgets grows."""
    from PySide6.QtWidgets import QApplication

    return len(QApplication.allWidgets())


def try_it_mb(window: Any) -> float:
    """The MB of tensors the fine-tuning tab's "Try it" model holds when it is not a loaded model (the best
    checkpoint of the run last finished or chosen there, one at a time: explorer/panels/finetune.py). A run the
    monkey fine-tuned during the acting leaves one held at the end that the warm-up's moment did not have: the
    census says it apart, as it unloads the models the monkey loaded."""
    from bench.robustness.memory import handle_tensors_mb

    held = window.finetune.finished_model
    loaded = list(window.session.models.values())
    if held is None or any(h is held for h in loaded):
        return 0.0
    return handle_tensors_mb(held, loaded)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=30.0)
    p.add_argument("--warmup-minutes", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--pace-ms", type=int, default=80,
                   help="one action every this many ms (80: far faster than a person, so that work piles up)")
    p.add_argument("--history-run", default=None, help="a run folder with kept checkpoints for the scrubber")
    p.add_argument("--no-train", action="store_true", help="leave out starting and stopping small trainings")
    p.add_argument("--holders", action="store_true",
                   help="print who holds the big buffers and the unloaded handles at each quiet moment (slow)")
    p.add_argument("--switch-ms", type=float, default=None,
                   help="the interpreter's switch interval instead of the app's (explorer.tasks.SWITCH_INTERVAL_S)")
    p.add_argument("--growth", action="store_true",
                   help="print the types and widgets whose count grew between the two quiet moments")
    p.add_argument("--trace", type=int, default=0, metavar="FRAMES",
                   help="also trace Python and numpy allocations from the first quiet moment (tracemalloc, this many "
                        "frames a block: slower) and print where what grew was allocated")
    p.add_argument("--events", action="store_true",
                   help="time every Qt event the GUI thread delivers and print the slow ones by widget class and "
                        "event (bench/robustness/event_timer.py: slower, and its memory figures do not compare)")
    p.add_argument("--exit-at-end", action="store_true",
                   help="leave at once after the end's quiet moment, freeing nothing, so that a heap profiler started "
                        "with the app (heaptrack python …) reports what was alive then as not freed; writes no results")
    p.add_argument("--spinning-threads", action="store_true",
                   help="leave torch's OpenMP threads spinning between operations (the app has them sleep: "
                        "explorer/worker_threads.py)")
    p.add_argument("--quiet-every", type=float, default=0.0, metavar="MINUTES",
                   help="a quiet moment (as at the start and the end) every MINUTES of acting too: whether the memory "
                        "grows all along (a leak) or levels off (caches filling)")
    p.add_argument("--stall-windows", default=None, metavar="FILE",
                   help="write each stall's start and end (CLOCK_MONOTONIC seconds, as `perf record -k mono` stamps "
                        "its samples) and the action before it, one a line: bench/robustness/perf_stalls.py reads them")
    p.add_argument("--pymalloc", action="store_true",
                   help="keep Python's own small-object allocator (the app's window starts again with "
                        "PYTHONMALLOC=malloc: explorer/python_allocator.py)")
    p.add_argument("--many-arenas", action="store_true",
                   help="keep glibc's default number of malloc arenas (the app's window keeps two: "
                        "explorer/malloc_arenas.py)")
    p.add_argument("--kernel-cache", type=int, default=None, metavar="N",
                   help="keep N compiled kernels in each of oneDNN's and ideep's caches (ONEDNN_PRIMITIVE_CACHE_CAPACITY, "
                        "LRU_CACHE_CAPACITY), instead of the window's (explorer/worker_threads.py) or the user's")
    args = p.parse_args()
    if args.kernel_cache is not None:  # (read once, when torch first runs a kernel: set before it is imported)
        from explorer.worker_threads import KERNEL_CACHES

        os.environ.update({name: str(args.kernel_cache) for name in KERNEL_CACHES})
    if not args.pymalloc:  # as the app's window does: the process started again, Python's objects from malloc
        from explorer.python_allocator import restart_with_malloc

        restart_with_malloc()
    if not args.spinning_threads:  # as the app does, before torch is imported
        from explorer.worker_threads import sleeping_worker_threads

        sleeping_worker_threads()
    if not args.many_arenas:  # as the app does, before any thread starts
        from explorer.malloc_arenas import fewer_arenas

        fewer_arenas()
    import faulthandler

    faulthandler.enable()  # a crash in Qt or torch leaves every thread's stack in the log
    from bench.robustness.exit_watch import watch_exits

    finished: list[bool] = []
    watch_exits(lambda: bool(finished), "chaos.py")  # an exit before the run's end says where (exit_watch.py)

    from PySide6.QtWidgets import QApplication

    if args.events:
        from bench.robustness.event_timer import TimedApplication

        app: Any = TimedApplication(sys.argv[:1])
    else:
        app = QApplication(sys.argv[:1])
    from explorer.pyside_imports import lighter_import_hook

    lighter_import_hook()  # as the app does
    from explorer.tasks import wait_for_workers

    if args.stall_windows:  # the thread to profile (bench/robustness/perf_stalls.py): the window's, the process's own
        print(f"window's process: {os.getpid()}", flush=True)
    session, window = chaos_window(app)
    if args.switch_ms is not None:
        sys.setswitchinterval(args.switch_ms / 1000)
    loaded = list(session.models)
    monkey = Monkey(window, args.seed, pace_ms=args.pace_ms, train=not args.no_train, history_run=args.history_run)
    from bench.robustness.gc_timer import CollectionTimer

    gc_passes = CollectionTimer(monkey.log)
    from bench.robustness.pointer_holders import prepare

    prepare()  # (compiled at the end, between the census and the reading, it would change the heap it reads)
    from bench.robustness.live_blocks import growth_said, live_sizes

    if args.growth:
        live_sizes()  # (its walks compiled now, for the same reason)
    monkey.start()
    wait(app, args.warmup_minutes * 60)  # the caches fill, every view has drawn once
    # (measured from after the census below: its count of every object holds the GUI thread for seconds, and the
    # stall sampler, measuring, put those seconds among the stalls' whereabouts: the thirty-second session's Z)
    start = {**quiet_memory(app, monkey, holders="after the warm-up" if args.holders else ""), "threads": threads(), "files": open_files(), "steps": monkey.steps}
    start_sizes = live_sizes() if args.growth else {}  # malloc's blocks in use by size, at the census's moment
    start_models = loaded_keys(window)
    start_maps = census_mappings()  # (the census of the quiet moment just above)
    start_lone = lone_said(census_lone())
    print("blocks alone on mostly free pages after the warm-up:", start_lone, flush=True)
    from bench.robustness.cxx_objects import by_class, unheld

    start_unheld = unheld()  # C++ objects nobody points at (their classes: cxx_objects)
    print("C++ objects nobody points at after the warm-up:", by_class(start_unheld), flush=True)
    print("after the warm-up:", {k: round(v, 1) if isinstance(v, float) else v for k, v in start.items()}, flush=True)
    samples = [(0.0, start["rss"], start["anon"])]
    if args.growth or args.trace:
        counts_before = type_counts()
    if args.trace:
        import tracemalloc

        tracemalloc.start(args.trace)
    # the census above ran on the GUI thread after the quiet moment restarted the stall clock (--growth's count of
    # every object: seconds): its time is the bench's, not the app's, so the clock starts again here
    monkey.measure()
    began = time.monotonic()
    paused = 0.0  # the quiet moments' time (``--quiet-every``): not acting, so not counted in the minutes
    quiet_marks: list[tuple[float, dict[str, float]]] = [(0.0, start)]
    next_quiet = args.quiet_every or float("inf")
    while time.monotonic() - began - paused < args.minutes * 60:
        for _ in range(6):  # every 10 s in the log: the memory beside the actions and the work under way
            wait(app, 10)
            monkey.log.append(work_line((time.monotonic() - began - paused) / 60, window))
        parts = rss_parts_mb()
        samples.append(((time.monotonic() - began - paused) / 60, rss_mb(), parts["anon"]))
        print(f"{samples[-1][0]:5.1f} min: {monkey.steps} actions, RSS {samples[-1][1]:.0f} MB "
              f"(anonymous {parts['anon']:.0f}, files {parts['file']:.0f}), {len(session.models)} models, "
              f"{widget_count():,} widgets, "
              f"{len(monkey.exceptions)} exceptions, worst stall {monkey.stalls.worst_ms:.0f} ms", flush=True)
        if next_quiet <= samples[-1][0] < args.minutes - 0.5:
            t0 = time.monotonic()
            mark = quiet_memory(app, monkey, keep=start_models)
            paused += time.monotonic() - t0
            quiet_marks.append((samples[-1][0], mark))
            next_quiet += args.quiet_every
            print(f"quiet at {samples[-1][0]:.1f} min:", {k: round(v, 1) for k, v in mark.items()}, flush=True)
    monkey.measure(False)  # the acting is over: the census and what follows it are the bench's
    end = {**quiet_memory(app, monkey, keep=start_models, holders="at the end" if args.holders else ""), "threads": threads(), "files": open_files(), "steps": monkey.steps}
    end_sizes = live_sizes() if args.growth else {}
    print("at the end:", {k: round(v, 1) if isinstance(v, float) else v for k, v in end.items()}, flush=True)
    others_grew = mapping_growth(start_maps, census_mappings())
    end_lone = lone_said(census_lone())
    print("blocks alone on mostly free pages at the end:", end_lone, flush=True)
    from bench.robustness.lone_holders import holders_said
    from bench.robustness.pointer_holders import pointers_said

    end_pointers = pointers_said(census_lone())  # (first: before the collector's walk below makes and frees)
    print("what points at them:", end_pointers, flush=True)
    end_unheld = unheld()
    lost_in_run = {c: name for c, name in end_unheld.items() if start_unheld.get(c) != name}
    end_cxx = (f"{len(start_unheld):,} after the warm-up, {len(end_unheld):,} at the end; of those, not there after the "
               f"warm-up: {len(lost_in_run):,} ({by_class(lost_in_run)})")
    print("C++ objects nobody points at:", end_cxx, flush=True)

    end_holders = holders_said(census_lone())
    print("what holds the Python objects among them:", end_holders, flush=True)
    end_sites = ""
    if args.trace:  # (tracing began at the first quiet moment: what was made before is "not traced")
        from bench.robustness.lone_sites import sites_said

        end_sites = sites_said(census_lone())
        print("where they were allocated:", end_sites, flush=True)
    sites_line = (" Where those blocks were allocated (tracemalloc's record, from the first quiet moment on;\n"
                  f"  bench/robustness/lone_sites.py): {end_sites}.") if end_sites else ""
    print("anonymous memory not malloc's:", others_grew, flush=True)
    blocks_grew = growth_said(start_sizes, end_sizes) if args.growth else ""
    if blocks_grew:
        print("malloc's blocks in use by size:", blocks_grew, flush=True)
    blocks_line = ("\n- malloc's blocks in use in the arenas' heaps, by their size, after the warm-up and at the end (each size's "
                   f"blocks named from a sample of them; bench/robustness/live_blocks.py): {blocks_grew}.") if blocks_grew else ""
    if args.events:
        print("Qt events of 20 ms or more on the GUI thread, by total time:", flush=True)
        for line in app.report():
            print("  " + line, flush=True)
        print("Paint events by widget class, most pixels first:", flush=True)
        for line in app.paint_report():
            print("  " + line, flush=True)
        print("The slowest stalls, with what they sent:", flush=True)
        for line in app.worst_report():
            print("  " + line, flush=True)
        print("Qt events of 250 ms or more (the stalls, and what they sent), by count:", flush=True)
        for line in app.stall_report():
            print("  " + line, flush=True)
    print("Garbage collections (warm-up included):", gc_passes.report(), flush=True)
    if args.stall_windows:
        Path(args.stall_windows).write_text("".join(f"{b:.4f} {e:.4f} {kind}\n" for b, e, kind in monkey.stall_windows))
    gc_passes.stop()
    if args.growth or args.trace:
        counts_after = type_counts()
        snapshot = tracemalloc.take_snapshot() if args.trace else None
        if args.trace:
            tracemalloc.stop()
        print_growth(counts_before, counts_after, snapshot)
    if args.exit_at_end:
        stalls = len(monkey.stalls.over)
        print(f"pace {args.pace_ms} ms: {end['steps'] - start['steps']:,} actions, {stalls:,} gaps of {STALL_MS} ms or more "
              f"({stalls / max(1, end['steps'] - start['steps']):.3f} per action)", flush=True)
        print(stall_gaps(monkey) + "\n" + stall_causes(monkey), flush=True)
        write_log(monkey)
        finished.append(True)
        os._exit(0)
    monkey.stop()
    window.zoom(0)
    wait(app, 5)
    files_at_end = open_file_kinds()
    wait_for_workers(120_000)
    write_log(monkey)

    growth = (end["rss"] - start["rss"]) / start["rss"] * 100
    anon_growth = (end["anon"] - start["anon"]) / start["anon"] * 100
    from explorer.python_allocator import python_allocator

    def py_arenas(moment: dict[str, float]) -> str:  # none where Python allocates with malloc (PYTHONMALLOC)
        if "py_arenas" not in moment:
            return "none: Python's objects come from malloc"
        return f"{moment['py_arenas']:,.0f}; {moment.get('py_objects', 0):,.0f}"

    def pages(moment: dict[str, float]) -> str:
        if "pages_arena_live" not in moment:
            return "not read"
        return (f"{moment['pages_arena_live']:,.0f} ({moment['pages_arena_in_use']:,.0f}) / "
                f"{moment['pages_arena_resident'] - moment['pages_arena_live']:,.0f} / "
                f"{moment['pages_mmapped_resident']:,.0f} / {moment['pages_other_anon']:,.0f}"
                + ("" if moment.get("pages_walk_ok", 1) else ", a heap not walked to its end"))

    arenas_said = (f"glibc's malloc arenas: {end['arenas']:.0f} at the end" if "arenas" in end else "malloc's arenas not read")
    # the packed weight copies are a cache held to a budget (engine/models/packed_linear.py): how much of it is
    # filled at a quiet moment depends on which models the last queries used, not on what the window kept
    unpacked = [moment["anon"] - moment.get("packed", 0) for moment in (start, end)]
    unpacked_growth = (unpacked[1] - unpacked[0]) / unpacked[0] * 100
    # and less the "Try it" model held at one moment and not the other (like with like, as the models loaded are)
    alike = [u - moment.get("try_it", 0) for u, moment in zip(unpacked, (start, end), strict=True)]
    alike_growth = (alike[1] - alike[0]) / alike[0] * 100
    from explorer.worker_threads import KERNEL_CACHES

    kept = {os.environ.get(name, "1024") for name in KERNEL_CACHES}  # (set by --kernel-cache, the window or the user)
    kernels_said = (f"{int(kept.pop()):,} in each of oneDNN's and ideep's caches" if len(kept) == 1
                    else ", ".join(f"{name}={os.environ.get(name, 'the default')}" for name in KERNEL_CACHES))
    back_note = f", {end['not_back']:.0f} of them not back within 5 minutes" if end.get("not_back") else ""
    body = f"""## Chaos in the window

`QT_QPA_PLATFORM=offscreen python bench/robustness/chaos.py --minutes {args.minutes:g} --seed {args.seed}{f' --pace-ms {args.pace_ms}' if args.pace_ms != 80 else ''}{f' --switch-ms {args.switch_ms:g}' if args.switch_ms is not None else ''}{' --holders' if args.holders else ''}{' --growth' if args.growth else ''}{' --events' if args.events else ''}{' --spinning-threads' if args.spinning_threads else ''}{' --pymalloc' if args.pymalloc else ''}{' --many-arenas' if args.many_arenas else ''}{f' --quiet-every {args.quiet_every:g}' if args.quiet_every else ''}{f' --kernel-cache {args.kernel_cache}' if args.kernel_cache is not None else ''}{f' --history-run {args.history_run}' if args.history_run else ''}` ({machine()}; switch interval {sys.getswitchinterval() * 1000:g} ms; compiled kernels kept: {kernels_said}; OpenMP threads {'spinning' if args.spinning_threads else 'sleeping'}; Python's objects from {python_allocator()}; {arenas_said};
models loaded: {', '.join(loaded)}; trainings {'started and stopped' if not args.no_train else 'left out'}; scrubber on
{args.history_run or 'no run'}). After a {args.warmup_minutes:g}-minute warm-up, {end['steps'] - start['steps']:,} random
actions in {args.minutes:g} minutes (one every {args.pace_ms} ms, each on a widget shown at that moment; the log of every
action: `bench/robustness/chaos-log.txt`, not committed).

RSS, threads and open files at two quiet moments (the monkey paused, its queries and jobs done or stopped, the talk
window and dialogs closed, the zoom and the window's size back to the start's, freed memory given back: `quiet_memory`): after the warm-up and at the end, with the same models loaded (the monkey
trains runs and opens them, pins checkpoints from the Run history and unloads models: at the end, what it added is
unloaded first, as a user closes what they opened).

| | after the warm-up | at the end |
|---|---|---|
| RSS | {start['rss']:,.0f} MB | {end['rss']:,.0f} MB ({growth:+.1f}%) |
| of it anonymous (heap, tensors) | {start['anon']:,.0f} MB | {end['anon']:,.0f} MB ({anon_growth:+.1f}%) |
| of the anonymous, less the packed weight copies (a cache held to a budget: what it holds depends on the models used last) | {unpacked[0]:,.0f} MB | {unpacked[1]:,.0f} MB ({unpacked_growth:+.1f}%) |
| of that, the fine-tuning tab's "Try it" model when it is not a loaded model (one at a time: the best checkpoint of the run last finished or chosen there) | {start.get('try_it', 0):,.0f} MB | {end.get('try_it', 0):,.0f} MB |
| **the anonymous less the packed weight copies and the "Try it" model** (the goal's reading from Z45 on) | {alike[0]:,.0f} MB | {alike[1]:,.0f} MB (**{alike_growth:+.1f}%**) |
| of it file-backed (mapped caches, libraries) | {start['file']:,.0f} MB | {end['file']:,.0f} MB |
| models loaded | {start['models']:.0f} | {end['models']:.0f} (the monkey had {end.get('models_before', end['models']):.0f}: RSS {end['models_rss']:,.0f} MB, {end['models_anon']:,.0f} anonymous; the {end['unloaded']:.0f} it added were unloaded and the {end.get('reloaded', 0):.0f} of the start's it had unloaded were loaded again{back_note}, to compare like with like) |
| of the anonymous: tensors Python still reaches | {start.get('tensors', 0):,.0f} MB | {end.get('tensors', 0):,.0f} MB |
| weights packed for oneDNN; numpy arrays Python still reaches (their own memory, not a file's) | {start.get('packed', 0):,.0f}; {start.get('arrays', 0):,.0f} MB | {end.get('packed', 0):,.0f}; {end.get('arrays', 0):,.0f} MB |
| glibc's heap in use / freed but kept / mmapped | {start.get('heap_used', 0):,.0f} / {start.get('heap_free', 0):,.0f} / {start.get('mmapped', 0):,.0f} MB | {end.get('heap_used', 0):,.0f} / {end.get('heap_free', 0):,.0f} / {end.get('mmapped', 0):,.0f} MB |
| malloc's blocks in use (glibc's heap in use and mmapped) / the rest of the anonymous RSS (freed but resident, and memory not from malloc) | {in_use_mb(start):,.0f} / {start['anon'] - in_use_mb(start):,.0f} MB | {in_use_mb(end):,.0f} / {end['anon'] - in_use_mb(end):,.0f} MB |
| the anonymous RSS page by page: the arenas' pages with a block in use (the blocks' bytes) / the arenas' pages with none / malloc's blocks mapped on their own / not malloc's (bench/robustness/glibc_pages.py) | {pages(start)} MB | {pages(end)} MB |
| transparent huge pages (anonymous) | {start.get('anon_huge', 0):,.0f} MB | {end.get('anon_huge', 0):,.0f} MB |
| free memory the arenas keep resident after the trim (of it in the arenas' tops) | {start.get('arena_free_resident', 0):,.0f} ({start.get('arena_tops_resident', 0):,.0f}) MB | {end.get('arena_free_resident', 0):,.0f} ({end.get('arena_tops_resident', 0):,.0f}) MB |
| the anonymous RSS by where it lies: the main arena / the threads' arenas / elsewhere (of it Python's small-object arenas; the objects alive in them) | {start.get('anon_main_arena', 0):,.0f} / {start.get('anon_thread_arenas', 0):,.0f} / {start.get('anon_elsewhere', 0):,.0f} ({py_arenas(start)}) MB | {end.get('anon_main_arena', 0):,.0f} / {end.get('anon_thread_arenas', 0):,.0f} / {end.get('anon_elsewhere', 0):,.0f} ({py_arenas(end)}) MB |
| of elsewhere, by the size of its mappings ({' / '.join(ELSEWHERE_SIZES)}) | {' / '.join(f"{start.get('elsewhere_' + k, 0):,.0f}" for k in ELSEWHERE_SIZES)} MB | {' / '.join(f"{end.get('elsewhere_' + k, 0):,.0f}" for k in ELSEWHERE_SIZES)} MB |
| model handles alive (loaded or not yet freed) | {start.get('handles', 0):.0f} | {end.get('handles', 0):.0f} |
| Qt widgets alive (the app's and Qt's own, shown or not: what a zoom gives its font to) | {start.get('widgets', 0):,.0f} | {end.get('widgets', 0):,.0f} |
| threads | {start['threads']} | {end['threads']} |
| open files | {start['files']} | {end['files']} |

- Work still running at a quiet moment after six rounds of Stop-all and a 30 s wait (the census then counts it): {'after the warm-up' if start.get('busy') else ''}{' and ' if start.get('busy') and end.get('busy') else ''}{'at the end' if end.get('busy') else ''}{'none' if not (start.get('busy') or end.get('busy')) else ''}.
- Uncaught exceptions: **{len(monkey.exceptions)}**; failures the app caught and showed but logged as unexpected (a
  bug, not a refusal): **{len(monkey.unexpected)}**{(': ' + '; '.join(sorted({u.strip().splitlines()[-1][:120] for u in monkey.unexpected}))) if monkey.unexpected else ''}.
{stall_gaps(monkey)}
- The anonymous RSS at every quiet moment (minute of acting: anonymous, less the packed weight copies; the tensors
  Python reaches; the anonymous RSS not in malloc's blocks in use): {quiet_trajectory(quiet_marks + [(args.minutes, end)])}.
- RSS each minute, while the monkey acts (MB; anonymous in brackets): {', '.join(f'{r:,.0f} ({a:,.0f})' for _, r, a in samples)}.
- Anonymous memory not malloc's, mapping by mapping (the census's last column; the ten that grew most): {others_grew}.{blocks_line}
- Blocks in use alone on mostly free pages (pages that blocks in use fill a quarter or less of: what keeps the
  pages a trim cannot give back; bench/robustness/glibc_pages.py), after the warm-up: {start_lone}. At the end:
  {end_lone}. What holds the Python objects among those at the end (the referrers' path, up to three steps;
  bench/robustness/lone_holders.py): {end_holders}. What points at the lone blocks at the end (every word of the
  process's memory read for their addresses, up to three steps; bench/robustness/pointer_holders.py): {end_pointers}.{sites_line}
- C++ objects (named by their vtables) in malloc's heaps that no word of memory points at: memory a library
  allocated and nobody will free (bench/robustness/cxx_objects.py): {end_cxx}.
- Open files at the end, by kind: {files_at_end}.
- Python's garbage collections, the warm-up included: {gc_passes.report()}.
{stall_causes(monkey)}
"""
    write_section("chaos", body)
    print(body)
    finished.append(True)


if __name__ == "__main__":
    main()
