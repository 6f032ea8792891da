"""One thread at a time in ``transformers``' model-building code.

``transformers`` resolves its classes lazily: the first ``transformers.AutoModelForMaskedLM`` or
``from_pretrained`` of a model type imports modules on the way. The app loads its models on two threads
at once (all-MiniLM-L6-v2 and minilm-mlm both go through ``transformers``), and one start in nine failed
with "module 'transformers' has no attribute 'AutoModelForMaskedLM'": the other thread was half-way
through importing the same lazy modules. Every function that builds a model or tokenizer with
``transformers`` runs under this lock; the loads it serialises take a second or two each.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

HF_LOCK = threading.RLock()  # re-entrant: a locked builder may call another (a teacher built inside a load)


def one_thread_in_transformers(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` runs holding HF_LOCK."""

    @functools.wraps(fn)
    def locked(*args: P.args, **kwargs: P.kwargs) -> R:
        with HF_LOCK:
            return fn(*args, **kwargs)

    return locked
