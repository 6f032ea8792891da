"""``python -m engine.cli.warm``: compile what would otherwise compile inside a user's first run — word2vec's
CPU kernel, about 15 s on 2 cores — into numba's on-disk cache, so that the first ``word2bert-train
word2vec`` after installing starts as fast as the next. The app starts it in the background at every
start (``engine.api.warm_up_in_background``), at a low priority; a kernel already cached loads in a
fraction of a second and the process exits.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time


def main(argv: list[str] | None = None) -> int:
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(10)  # beside the app's window and its model loads
    from engine.models.word2vec import cpu as word2vec_cpu

    if not word2vec_cpu.available():
        print("numba is not installed: word2vec trains with torch, nothing to compile")
        return 0
    start = time.perf_counter()
    word2vec_cpu.compile_now()
    print(f"word2vec's CPU kernel ready ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
