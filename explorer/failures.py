"""Where a failure becomes words on the screen. Workers raise; the exception travels as itself (through
``explorer.tasks``' signals, or inside an ``Outcome`` when one model of several fails and the others'
answers still show) to ``explain``, the one place that turns it into the sentence a panel shows and puts
an unexpected one's traceback in the log."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

log = logging.getLogger("word2bert.explorer")

T = TypeVar("T")


def explain(error: BaseException) -> str:
    """The message a user reads for ``error``: the engine's own words for what it refuses (bad input, a
    model without that ability, a damaged file); for anything else, what Python says, and the traceback
    goes to the log (a bug to report, not the user's fault)."""
    from engine.api import Word2BertError
    from explorer.scenes import SceneError

    if not isinstance(error, (Word2BertError, SceneError)):  # what the engine or a scene file refuses: no bug
        log.error("unexpected failure:\n%s", "".join(traceback.format_exception(error)))
    return str(error) or type(error).__name__


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """One part of a worker's answer that may have failed on its own (one model of the two compared, the
    lens beside the predictions): its value, or the exception that stopped it."""

    value: T | None = None
    error: BaseException | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def message(self) -> str:
        return explain(self.error) if self.error is not None else ""


def attempt(fn: Callable[[], T]) -> Outcome[T]:
    """``fn()``'s value, or the engine's refusal as an Outcome (any other exception is a bug: it
    propagates, and the whole query fails through the task's signal)."""
    from engine.api import Word2BertError

    try:
        return Outcome(fn())
    except Word2BertError as e:
        return Outcome(error=without_frames(e))


def without_frames(error: BaseException) -> BaseException:
    """``error`` (and the exceptions it was raised from) without its traceback. A refusal kept in an answer
    would otherwise keep every frame it passed through alive, and a frame keeps the model it was running: the chaos
    bench found two unloaded MiniLMs held by a lens answer's refusal (bench/robustness/RESULTS.md)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.__traceback__ = None
        current = current.__cause__ or current.__context__
    return error
