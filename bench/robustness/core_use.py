"""Where the machine's cores went in each of the chaos bench's stalls (issue 37: the event loop's stalls).

The monkey's sampler knew where the window's thread was in a stall and, summed over every stall, how its time split
(on a core, waiting for one, asleep), but not who had the cores meanwhile nor how one stall differed from the next.
A ``CoreLedger`` takes a snapshot of the process's and its children's time on the cores every time the sampler wakes
(every 50 ms: each thread's ``/proc/self/task/TID/schedstat``, each child's ``utime + stime``, the machine's stolen
time from ``/proc/stat`` — the hypervisor running someone else on our virtual cores — and its count of runnable
tasks), keeps the last few seconds of them, and for each stall takes the snapshots around it: the window's thread on a
core, waiting for one, or asleep (the GIL, a lock, I/O); the other threads of the process by what they were running;
the app's child processes (trainings); the time stolen. Linux only; elsewhere every figure is left out.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field

RING = 128  # snapshots kept: at the sampler's 50 ms, six seconds (a stall is settled within 100 ms of its end)
TICKS_MS = 1000 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)


@dataclass
class Snapshot:
    when: float  # time.monotonic()
    gui: tuple[float, float] | None  # the window's thread: ms on a core, ms waiting for one, so far
    threads: dict[int, float]  # every other thread of the process: native id -> ms on a core so far
    children: dict[int, float]  # each child process: pid -> ms on the cores so far (all its threads)
    steal_ms: float  # the machine's stolen time so far, all cores
    runnable: int  # tasks runnable on the machine at that moment (``procs_running``)


@dataclass
class StallUse:
    """One stall's figures, over the sampled span around it (a little longer than the stall itself)."""

    gap_ms: float
    kind: str
    span_ms: float
    gui_on_ms: float
    gui_waiting_ms: float
    steal_ms: float
    runnable_max: int
    others: dict[str, float] = field(default_factory=dict)  # what ran beside it -> ms on a core

    @property
    def gui_asleep_ms(self) -> float:
        return max(0.0, self.span_ms - self.gui_on_ms - self.gui_waiting_ms)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def schedstat_ms(path: str) -> tuple[float, float] | None:
    """A thread's time on a core and waiting for one so far (ms; its /proc/.../schedstat), None without /proc."""
    text = _read(path)
    try:
        on, waiting, _ = (text or "").split()
        return float(on) / 1e6, float(waiting) / 1e6
    except ValueError:
        return None


def _child_ms(pid: int) -> float | None:
    text = _read(f"/proc/{pid}/stat")
    try:
        fields = (text or "").rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * TICKS_MS  # utime, stime
    except (IndexError, ValueError):
        return None


def _machine() -> tuple[float, int]:
    steal, runnable = 0.0, 0
    for line in (_read("/proc/stat") or "").splitlines():
        if line.startswith("cpu "):
            parts = line.split()
            steal = int(parts[8]) * TICKS_MS if len(parts) > 8 else 0.0
        elif line.startswith("procs_running"):
            runnable = int(line.split()[1])
    return steal, runnable


def snapshot(gui_tid: int) -> Snapshot:
    threads: dict[int, float] = {}
    gui = None
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = []
    for tid in tids:
        use = schedstat_ms(f"/proc/self/task/{tid}/schedstat")
        if use is None:
            continue
        if tid == gui_tid:
            gui = use
        else:
            threads[tid] = use[0]
    children: dict[int, float] = {}
    for tid in tids:
        for pid in (_read(f"/proc/self/task/{tid}/children") or "").split():
            ms = _child_ms(int(pid))
            if ms is not None:
                children[int(pid)] = ms
    steal, runnable = _machine()
    return Snapshot(time.monotonic(), gui, threads, children, steal, runnable)


def thread_labels() -> dict[int, str]:
    """Each Python-visible thread's native id -> what it runs now: the innermost frame of the app's code, else its
    innermost frame, else its name ("idle" where it waits in the threading module or a queue)."""
    frames = sys._current_frames()
    labels: dict[int, str] = {}
    for thread in threading.enumerate():
        native = getattr(thread, "native_id", None)
        if native is None:
            continue
        frame, ours, innermost = frames.get(thread.ident or -1), "", ""
        while frame is not None:
            where = f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_code.co_name}"
            innermost = innermost or where
            if not ours and any(part in frame.f_code.co_filename for part in ("/engine/", "/explorer/")):
                ours = where
            frame = frame.f_back
        labels[native] = ours or innermost or thread.name
    return labels


def _comm(tid: int) -> str:
    return (_read(f"/proc/self/task/{tid}/comm") or "thread").strip()


def _child_name(pid: int) -> str:
    argv = [a for a in (_read(f"/proc/{pid}/cmdline") or "").split("\0") if a]
    words = [a.rsplit("/", 1)[-1] for a in argv if not a.startswith("-")][:3]
    return "child " + (" ".join(words) or str(pid))


class CoreLedger:
    """``sample()`` from the sampler thread every 50 ms; ``stall(begin, end, gap_ms, kind)`` from the window's
    thread as a stall ends; the settled stalls in ``stalls``."""

    def __init__(self, gui_tid: int) -> None:
        self.gui_tid = gui_tid
        self.ring: deque[Snapshot] = deque(maxlen=RING)
        self.pending: list[tuple[float, float, float, str]] = []
        self.stalls: list[StallUse] = []
        self.labels: dict[int, str] = {}  # a thread's native id -> what it ran at the last sample inside a stall
        self.names: dict[int, str] = {}  # a child's pid -> its command
        self._lock = threading.Lock()

    def stall(self, begin: float, end: float, gap_ms: float, kind: str) -> None:
        with self._lock:
            self.pending.append((begin, end, gap_ms, kind))

    def sample(self, in_stall: bool) -> None:
        snap = snapshot(self.gui_tid)
        if in_stall:  # (what each thread runs, read while the window waits: the stall's neighbours by name)
            self.labels.update(thread_labels())
        for pid in snap.children:
            if pid not in self.names:
                self.names[pid] = _child_name(pid)
        self.ring.append(snap)
        with self._lock:
            pending, self.pending = self.pending, []
        later = []
        for stall in pending:
            use = self._settle(*stall)
            if use is None and stall[1] > snap.when - 5:
                later.append(stall)
            elif use is not None:
                self.stalls.append(use)
        if later:
            with self._lock:
                self.pending[:0] = later

    def _settle(self, begin: float, end: float, gap_ms: float, kind: str) -> StallUse | None:
        before = [s for s in self.ring if s.when <= begin]
        after = [s for s in self.ring if s.when >= end]
        if not before or not after:
            return None
        s0, s1 = before[-1], after[0]
        inside = [s for s in self.ring if s0.when <= s.when <= s1.when]
        gui_on = gui_waiting = 0.0
        if s0.gui is not None and s1.gui is not None:
            gui_on, gui_waiting = s1.gui[0] - s0.gui[0], s1.gui[1] - s0.gui[1]
        others: dict[str, float] = {}
        for tid, ms in s1.threads.items():
            ran = ms - s0.threads.get(tid, 0.0)  # (a thread begun inside the span: all of its time)
            if ran >= 1:
                name = self.labels.get(tid) or _comm(tid)
                others[name] = others.get(name, 0.0) + ran
        for pid, ms in s1.children.items():
            ran = ms - s0.children.get(pid, 0.0)
            if ran >= 1:
                name = self.names.get(pid, f"child {pid}")
                others[name] = others.get(name, 0.0) + ran
        return StallUse(gap_ms, kind, (s1.when - s0.when) * 1000, gui_on, gui_waiting, s1.steal_ms - s0.steal_ms,
                        max(s.runnable for s in inside), others)


def stall_lines(stalls: list[StallUse], top: int = 3) -> list[str]:
    """One line a stall: its gap, the action before it, and where the cores went over its sampled span."""
    lines = []
    for s in stalls:
        beside = ", ".join(f"{name} {ms:,.0f}" for name, ms in sorted(s.others.items(), key=lambda kv: -kv[1])[:top])
        lines.append(f"{s.gap_ms:,.0f} ms after {s.kind} (span {s.span_ms:,.0f}): the window's thread on a core "
                     f"{s.gui_on_ms:,.0f}, waiting for one {s.gui_waiting_ms:,.0f}, asleep {s.gui_asleep_ms:,.0f}; "
                     f"stolen {s.steal_ms:,.0f}; runnable at most {s.runnable_max}; beside it: {beside or 'nothing'}")
    return lines


def totals_line(stalls: list[StallUse]) -> str:
    """The stalls summed: the window's thread's split, the time stolen, and what ran beside it most."""
    if not stalls:
        return "no stall"
    span = sum(s.span_ms for s in stalls)
    beside: dict[str, float] = {}
    for s in stalls:
        for name, ms in s.others.items():
            beside[name] = beside.get(name, 0.0) + ms
    most = ", ".join(f"{name} {ms / 1000:,.2f} s" for name, ms in sorted(beside.items(), key=lambda kv: -kv[1])[:6])
    return (f"{len(stalls)} stalls settled, their spans {span / 1000:,.2f} s in all: the window's thread on a core "
            f"{sum(s.gui_on_ms for s in stalls) / 1000:,.2f} s, waiting for one "
            f"{sum(s.gui_waiting_ms for s in stalls) / 1000:,.2f} s, asleep {sum(s.gui_asleep_ms for s in stalls) / 1000:,.2f} s; "
            f"stolen by the hypervisor {sum(s.steal_ms for s in stalls) / 1000:,.2f} s (all cores); beside it, on the "
            f"cores: {most or 'nothing'}")
