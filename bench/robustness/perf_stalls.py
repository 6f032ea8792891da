"""Where the window's thread spent the chaos bench's stalls, in C as well as Python: a perf profile of the GUI
thread cut to the stalls' windows. The bench's own sampler sees Python frames only; most stall samples there are
"?", Qt's own work or the interpreter's (a collection, a listing of the collector's objects, a page fault).

    QT_QPA_PLATFORM=offscreen python bench/robustness/chaos.py --minutes 8 --exit-at-end \\
        --stall-windows /tmp/stalls.txt [...]                    # prints "window's process: PID" at the start
    # once it prints "after the warm-up", on the window's thread (its id is the process's):
    perf record -k mono -F 250 --call-graph dwarf,16384 -t PID -o /tmp/chaos.data
    perf script -i /tmp/chaos.data -F tid,time,ip,sym,dso > /tmp/chaos.txt
    python bench/robustness/perf_stalls.py /tmp/chaos.txt --windows /tmp/stalls.txt [--per-stall]
        [--callees SYMBOL | --callers SYMBOL] [--depth N]

``-k mono`` stamps perf's samples on CLOCK_MONOTONIC, the clock of the stall windows. perf samples the thread only
while it is on a core (cpu-clock): a stall's time waiting for a core or the GIL has no samples. The thirty-first
session's run found the garbage collector's full passes and listings, first paints of new windows (page faults), and
font changes in the stalls (bench/robustness/RESULTS.md)."""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

# what a stall's samples are made of, by a frame each holds (the first that matches, from the top of this list)
MARKERS = {
    "full or young garbage collection": "gc_collect_main",
    "listing the collector's objects": "gc_get_objects",
    "page faults (memory touched first)": "asm_exc_page_fault",
    "font change": "QWidgetPrivate::updateFont",
    "layout": "QLayout::activate",
    "painting": "QWidgetPrivate::drawWidget",
    "a Python slot of a timer": "QTimer::timeout",
    "posted events": "QCoreApplicationPrivate::sendPostedEvents",
}


HEADER = re.compile(r" +\d+ +\d+\.\d+: *$")  # a sample's first line: "  6520 38824.923123:"


def read_samples(path: str) -> list[tuple[int, float, list[str]]]:
    """``perf script -F tid,time,ip,sym,dso`` output as (thread, time, frames from the innermost out)."""
    samples: list[tuple[int, float, list[str]]] = []
    current: tuple[int, float, list[str]] | None = None
    with open(path, errors="replace") as lines:
        for line in lines:
            if not line.strip():
                if current is not None:
                    samples.append(current)
                current = None
            elif not line.startswith((" ", "\t")) or HEADER.match(line):  # (perf pads a short thread id with spaces)
                tokens = line.split()
                thread = tokens[0].split("/")[-1]
                when = next((float(t[:-1]) for t in tokens if t.endswith(":") and t[:-1].replace(".", "").isdigit()), 0.0)
                current = (int(thread) if thread.isdigit() else 0, when, [])
            elif current is not None:
                parts = line.strip().split(None, 1)
                if len(parts) == 2:
                    symbol = re.sub(r"\+0x[0-9a-f]+$", "", parts[1].rsplit(" (", 1)[0])
                    if not symbol.startswith("[unknown]") and not re.fullmatch(r"[0-9a-f]+", symbol):
                        current[2].append(symbol)
    if current is not None:
        samples.append(current)
    return samples


def read_windows(path: str) -> list[tuple[float, float, str]]:
    windows = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            begin, end, *kind = line.split()
            windows.append((float(begin), float(end), " ".join(kind)))
    return windows


def within(samples: list, windows: list[tuple[float, float, str]]) -> list:
    return [s for s in samples if any(b <= s[1] <= e for b, e, _ in windows)]


def made_of(samples: list) -> Counter:
    """Each sample under the first marker its frames hold."""
    counts: Counter = Counter()
    for _, _, frames in samples:
        counts[next((name for name, frame in MARKERS.items() if frame in frames), "other")] += 1
    return counts


def inclusive(samples: list, top: int) -> list[tuple[str, int]]:
    counts: Counter = Counter()
    for _, _, frames in samples:
        counts.update(set(frames))
    return counts.most_common(top)


def neighbours(samples: list, symbol: str, callees: bool, depth: int) -> tuple[int, Counter]:
    """Under ``symbol`` (its outermost frame): the ``depth`` frames below it; or above it (its innermost)."""
    counts: Counter = Counter()
    found = 0
    for _, _, frames in samples:
        where = [i for i, f in enumerate(frames) if symbol in f]
        if not where:
            continue
        found += 1
        if callees:
            i = max(where)
            counts[" < ".join(frames[max(0, i - depth):i][::-1]) or "(itself)"] += 1
        else:
            i = min(where)
            counts[" > ".join(frames[i + 1:i + 1 + depth]) or "(the top)"] += 1
    return found, counts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("script", help="perf script -F tid,time,ip,sym,dso output")
    p.add_argument("--windows", help="chaos.py --stall-windows FILE (without it: every sample)")
    p.add_argument("--per-stall", action="store_true", help="what each stall was made of")
    p.add_argument("--callees", metavar="SYMBOL")
    p.add_argument("--callers", metavar="SYMBOL")
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--top", type=int, default=30)
    args = p.parse_args()
    samples = read_samples(args.script)
    windows = read_windows(args.windows) if args.windows else []
    chosen = within(samples, windows) if windows else samples
    print(f"{len(chosen):,} samples of {len(samples):,}" + (f" in {len(windows)} stalls" if windows else ""))
    if args.callees or args.callers:
        found, counts = neighbours(chosen, args.callees or args.callers, bool(args.callees), args.depth)
        print(f"{args.callees or args.callers}: {found:,} samples ({found / max(1, len(chosen)):.1%})")
        for key, n in counts.most_common(args.top):
            print(f"  {n / max(1, found):6.1%}  {key[:220]}")
        return
    print("made of:", ", ".join(f"{k} {v / max(1, len(chosen)):.0%}" for k, v in made_of(chosen).most_common()))
    if args.per_stall:
        for begin, end, kind in windows:
            inside = within(chosen, [(begin, end, kind)])
            parts = ", ".join(f"{k} {v}" for k, v in made_of(inside).most_common(4))
            print(f"  {(end - begin) * 1000:5.0f} ms after {kind or '?'}: {len(inside)} samples: {parts}")
    for symbol, n in inclusive(chosen, args.top):
        print(f"{n / max(1, len(chosen)):6.1%}  {symbol[:160]}")


if __name__ == "__main__":
    main()
