"""The window's process allocates Python's objects with the C library's malloc, not Python's own allocator.

Python's small-object allocator (pymalloc) gives an arena (256 kB-1 MB) back to the system only when every object
in it is freed. The window makes many short-lived objects while its queries and jobs run, beside a few that live
on, and over 30 minutes of random use the arenas grew by 114-173 MB around the same live objects: most of what the
window kept (bench/robustness/RESULTS.md, "Chaos in the window", runs O, Q, R). With glibc's malloc, whose freed
pages the app gives back now and then (``api.release_memory``), the same 10 minutes ended 5% below their start
(run P). What the window pays for it was measured before it was adopted (bench/robustness/python_malloc.py).

The allocator is chosen when Python starts, so the window's entry point starts the process again with
``PYTHONMALLOC=malloc`` before anything else is imported — only on Linux (glibc, whose freed pages
``malloc_trim`` returns), only when the user has not set the variable, and not in the packaged app (its
bootloader starts Python itself). The restarted process takes the variable out of its environment again, so that
the training processes it starts get Python's default."""

from __future__ import annotations

import os
import sys

VARIABLE = "PYTHONMALLOC"
MARK = "WORD2BERT_SET_PYTHONMALLOC"  # this process was started again by restart_with_malloc


def restart_with_malloc() -> None:
    """Call first in the window's entry point: replaces this process with the same command under
    ``PYTHONMALLOC=malloc`` where that applies, and returns otherwise (also when the replacement fails)."""
    if os.environ.pop(MARK, None) is not None:  # the restarted process: its children get Python's default
        if os.environ.get(VARIABLE) == "malloc":
            del os.environ[VARIABLE]
        return
    argv = list(getattr(sys, "orig_argv", []))
    if sys.platform != "linux" or VARIABLE in os.environ or getattr(sys, "frozen", False) or not argv:
        return
    if not sys.executable:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, argv, {**os.environ, VARIABLE: "malloc", MARK: "1"})
    except OSError:  # not allowed to run the interpreter again (a sandbox): go on as started
        return


def malloc_stats() -> str:
    """What ``sys._debugmallocstats`` writes (to C's stderr): Python's allocator's arenas and pools; "" where
    it cannot be read."""
    import tempfile

    stats = getattr(sys, "_debugmallocstats", None)
    if stats is None:
        return ""
    try:
        with tempfile.TemporaryFile() as tmp:
            saved = os.dup(2)
            try:
                sys.stderr.flush()
                os.dup2(tmp.fileno(), 2)
                stats()
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            tmp.seek(0)
            return tmp.read().decode("ascii", "replace")
    except OSError:
        return ""


def python_allocator() -> str:
    """The allocator Python's objects come from in this process: "pymalloc" or "malloc" ("unknown" where
    Python does not say)."""
    text = malloc_stats()
    if not text:
        return "unknown"
    return "pymalloc" if "Small block threshold" in text else "malloc"
