"""The monkey's log of what it did: a list of lines, kept as one buffer of their bytes and one of their ends.

Kept as a Python list of strs, the log was a str per action, made at the moment of the action among whatever else the
window was making: 22,000 small blocks scattered over the heap the chaos bench measures, and the first among what
kept its mostly free pages at the end of run Z42b (bench/robustness/CHAOS-HISTORY.md, "Chaos in the window": "str ← list
← Monkey.log", 9.3 MB of pages). Two growing buffers take no page from another's blocks."""

from __future__ import annotations

import threading
from array import array
from collections.abc import Iterator
from typing import overload


class LineLog:
    """Lines appended, read back as a list reads: by index, by slice, in order, with their count."""

    def __init__(self) -> None:
        self._text = bytearray()
        self._ends = array("Q")
        self._lock = threading.Lock()  # (the garbage collector's callback logs from whichever thread collects)

    def append(self, line: str) -> None:
        data = line.encode("utf-8", "surrogatepass")  # (made before the lock: nothing inside it can start a collection)
        with self._lock:
            self._text += data
            self._ends.append(len(self._text))

    def __len__(self) -> int:
        return len(self._ends)

    def _line(self, i: int) -> str:
        start = self._ends[i - 1] if i > 0 else 0
        return self._text[start:self._ends[i]].decode("utf-8", "surrogatepass")

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._line(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("log line out of range")
        return self._line(index)

    def __iter__(self) -> Iterator[str]:
        return (self._line(i) for i in range(len(self)))
