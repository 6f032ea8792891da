"""Says where a bench's process ended when it ends before its run does.

Twice in the fifty-third session and once in the fifty-fourth the chaos bench ended during its warm-up with exit
status 1 and nothing on stderr. Python prints an uncaught exception and faulthandler a fatal signal, so the ending
was neither; what is left is an exit asked for by code (``sys.exit``, ``os._exit``, ``SystemExit`` raised) or by C
(``exit``). The first two are wrapped here to print the stack that called them; the interpreter's own end prints
every thread's stack while the run is not done. (An ``exit`` from C runs neither: for that, run the bench under
``strace -f --seccomp-bpf -e trace=exit_group -k``, which prints the native stack of each process's end.)"""

from __future__ import annotations

import atexit
import faulthandler
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, NoReturn


def watch_exits(done: Callable[[], bool], name: str = "the bench") -> None:
    """From now on in this process, an exit asked for by Python code prints where it was asked, and the
    interpreter's end before ``done()`` prints every thread's stack, all on stderr."""
    real_os_exit, real_sys_exit = os._exit, sys.exit

    def said(what: str) -> None:
        if done():  # (the run's own end)
            return
        with_stack = f"{name}: {what}, called from:\n{''.join(traceback.format_stack()[:-2])}"
        try:
            sys.stderr.write(with_stack)
            sys.stderr.flush()
        except (OSError, ValueError):  # (stderr closed: nothing to tell)
            pass

    def os_exit(status: int) -> NoReturn:
        said(f"os._exit({status})")
        real_os_exit(status)

    def sys_exit(status: Any = None) -> NoReturn:
        said(f"sys.exit({status!r})")
        real_sys_exit(status)

    def at_the_end() -> None:
        if done():
            return
        try:
            sys.stderr.write(f"{name}: the interpreter is ending before the run has; every thread's stack:\n")
            sys.stderr.flush()
            faulthandler.dump_traceback(all_threads=True)
        except (OSError, ValueError):
            pass

    os._exit = os_exit  # type: ignore[assignment]
    sys.exit = sys_exit  # type: ignore[assignment]
    atexit.register(at_the_end)
