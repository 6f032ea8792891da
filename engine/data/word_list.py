"""A vocabulary's words as one UTF-8 buffer, looked up through a sorted array of hashes.

A list of 400,000 words is 400,000 small ``str`` objects, and a dict from word to row adds as many ``int``s and a
table. Loaded again and again into a heap full of holes, those small objects fill the holes, and each one that lands
on an otherwise free page keeps the page (the chaos bench traced the window's growth to them). ``WordList`` keeps the
words in one ``bytes`` (each ended by a newline) and three numpy arrays, so a load makes a handful of large blocks;
a word becomes a ``str`` only when it is asked for. It stands in for the list: indexing, slicing (a list), iteration,
``len``, ``in`` and ``index``, and ``find`` for a lookup that answers ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np

_P = 0x100000001B3  # FNV's 64-bit prime: a polynomial hash over the bytes, mod 2**64
_MASK = (1 << 64) - 1
_CHUNK = 1 << 16  # bytes decoded in one call while iterating


def _hash(word: bytes) -> int:
    h = 0
    power = 1
    for b in word:
        h = (h + (b + 1) * power) & _MASK
        power = (power * _P) & _MASK
    return h


class WordList(Sequence[str]):
    """Words in order; none may hold a newline (a vocabulary's words never do: they are lines or split on spaces)."""

    __slots__ = ("_data", "_ends", "_hashes", "_order")  # _hashes in sorted order; _order[k]: the row of _hashes[k]

    def __init__(self, data: bytes) -> None:
        """``data``: UTF-8 words, each followed by b"\\n" (use ``from_words`` or ``from_lines``)."""
        if data and not data.endswith(b"\n"):
            raise ValueError("each word must end with a newline")
        data.decode("utf-8")  # raises on a file that is not UTF-8, now rather than at the first lookup
        raw = np.frombuffer(data, dtype=np.uint8)
        self._data = data
        self._ends = np.flatnonzero(raw == 10)
        hashes = self._hash_all(raw)
        self._order = np.argsort(hashes, kind="stable")  # equal hashes keep their order: the first word is found first
        self._hashes = hashes[self._order]

    def _hash_all(self, raw: np.ndarray) -> np.ndarray:
        """Each word's ``_hash``, for all words at once: one pass per position in a word, over the words that long
        (memory: a few arrays of one number per word, where one per byte would be eight times the text)."""
        starts = np.zeros_like(self._ends)
        starts[1:] = self._ends[:-1] + 1
        lengths = self._ends - starts
        hashes = np.zeros(len(starts), dtype=np.uint64)
        active = np.flatnonzero(lengths > 0)
        position, power = 0, 1
        while active.size:
            hashes[active] += (raw[starts[active] + position].astype(np.uint64) + np.uint64(1)) * np.uint64(power)
            position, power = position + 1, (power * _P) & _MASK
            active = active[lengths[active] > position]
        return hashes

    @classmethod
    def from_words(cls, words: Iterable[str]) -> WordList:
        words = list(words)
        if any("\n" in w for w in words):
            raise ValueError("a word holds a newline")
        return cls("".join(w + "\n" for w in words).encode("utf-8"))

    @classmethod
    def from_lines(cls, data: bytes) -> WordList:
        """The lines of a UTF-8 file, one word each (the last may lack its newline)."""
        return cls(data if not data or data.endswith(b"\n") else data + b"\n")

    def __len__(self) -> int:
        return len(self._ends)

    def _bytes(self, i: int) -> bytes:
        start = int(self._ends[i - 1]) + 1 if i else 0
        return self._data[start:int(self._ends[i])]

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return list(self._decode(start, stop)) if start < stop else []
            return [self[j] for j in range(start, stop, step)]
        n = len(self)
        j = int(i)  # numpy integers index too
        if j < 0:
            j += n
        if not 0 <= j < n:
            raise IndexError("word index out of range")
        return self._bytes(j).decode("utf-8")

    def _decode(self, start: int, stop: int) -> Iterator[str]:
        """Words start..stop-1, a chunk of bytes decoded and split in one call."""
        i = start
        while i < stop:
            first = int(self._ends[i - 1]) + 1 if i else 0
            j = min(stop, int(np.searchsorted(self._ends, first + _CHUNK, side="right")) + 1)
            yield from self._data[first:int(self._ends[j - 1])].decode("utf-8").split("\n")
            i = j

    def __iter__(self) -> Iterator[str]:
        return self._decode(0, len(self))

    def find(self, word: object) -> int | None:
        """The row of ``word`` (the first, if it is there twice), or None."""
        if not isinstance(word, str) or "\n" in word:
            return None
        key = word.encode("utf-8", errors="surrogatepass")
        h = np.uint64(_hash(key))
        k = int(np.searchsorted(self._hashes, h))
        while k < len(self._hashes) and self._hashes[k] == h:
            row = int(self._order[k])
            if self._bytes(row) == key:
                return row
            k += 1
        return None

    def __contains__(self, word: object) -> bool:
        return self.find(word) is not None

    def index(self, word: object, start: int = 0, stop: int | None = None) -> int:
        if start != 0 or stop is not None:  # the rare bounded search: a scan
            return super().index(word, start, len(self) if stop is None else stop)
        i = self.find(word)
        if i is None:
            raise ValueError(f"{word!r} is not in the list")
        return i

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WordList):
            return self._data == other._data
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"WordList({len(self):,} words)"

    @property
    def nbytes(self) -> int:
        return len(self._data) + self._ends.nbytes + self._hashes.nbytes + self._order.nbytes
