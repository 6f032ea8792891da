"""numpy's transparent huge pages in the window: for the matrices that live as long as their model, not for the
arrays that come and go with each query.

numpy asks the kernel for huge pages (``madvise(MADV_HUGEPAGE)``) for every array of 4 MB or more. glibc serves an
array under its mmap threshold (which rises to 32 MB as big blocks are freed) from its heap, and the mark stays on
that range of the heap after the array is freed: the kernel's khugepaged then fills a marked 2 MB range into a huge
page around a single live 4 kB page (its default ``max_ptes_none``, 511), and memory that ``malloc_trim`` gave back
is resident again. In the chaos bench the window's huge pages grew 164 → 248 MB in 30 minutes (run Z35), all of them
numpy's (run Y': none with its marking off; bench/robustness/RESULTS.md, "Chaos in the window"). So the window turns
numpy's marking off, and the engine keeps huge pages for the matrices every query scans, in mappings of their own
(engine/data/mapped_arrays.py). Not where the user set ``NUMPY_MADVISE_HUGEPAGE`` (numpy's own switch, read at
import); the trainings the window starts keep numpy's default."""

from __future__ import annotations

import os

VARIABLE = "NUMPY_MADVISE_HUGEPAGE"


def passing_arrays_without_huge_pages() -> bool:
    """Call in the window's process: numpy no longer marks the arrays it allocates for huge pages. Whether it was
    turned off (False where the user chose, or where this numpy has no such switch)."""
    if VARIABLE in os.environ:
        return False  # the user's choice
    import numpy as np

    core = getattr(np, "_core", None) or getattr(np, "core", None)  # (numpy 2 / numpy 1)
    switch = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    if switch is None:
        return False
    switch(False)
    return True
