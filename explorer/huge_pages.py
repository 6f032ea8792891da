"""numpy does not ask for transparent huge pages in the window's process.

numpy marks the memory of every array of 4 MB or more for huge pages (``madvise(MADV_HUGEPAGE)``). In the window such
arrays come from glibc's arenas, so over time parts of the arenas are marked, and the kernel's khugepaged fills a
marked 2 MB range into a huge page when a single 4 kB page of it is in use (Linux's default ``max_ptes_none`` of 511):
memory ``malloc_trim`` had given back becomes resident again, around the few blocks still alive. After 20 minutes of
the chaos bench 73 of the window's mappings were marked, the main arena's among them, and 296 MB were huge pages
(bench/robustness/RESULTS.md, "Chaos in the window", run X). The window's arrays are small enough that huge pages
speed nothing a user waits for.

numpy reads ``NUMPY_MADVISE_HUGEPAGE`` once, when it is imported, so it is set before then, on Linux only and only
where the user has not set it; the trainings the window starts get the environment back as it was
(``explorer.worker_threads.training_environment``)."""

from __future__ import annotations

import os
import sys

VARIABLE = "NUMPY_MADVISE_HUGEPAGE"
MARK = "WORD2BERT_SET_NUMPY_MADVISE_HUGEPAGE"  # the window's process set it (the user had not)


def no_numpy_huge_pages() -> None:
    """Call before numpy is imported (the window's process only)."""
    if sys.platform.startswith("linux") and VARIABLE not in os.environ:
        os.environ[VARIABLE] = "0"
        os.environ[MARK] = "1"
