"""A Python object's header read from memory, never made an object: whether a malloc block holds an int, str, bytes
or float of the length its header says, and what it holds. For the chaos bench's census of lone blocks
(glibc_pages.name_blocks, lone_holders), where an address misread as an object and made one could crash the
process when the reference is given back.
"""

from __future__ import annotations

import ctypes
import sys

UNTRACKED = (int, str, bytes, float)  # what the collector never tracks: found by its header, not by the collector
ASCII_HEADER, COMPACT_HEADER = sys.getsizeof("") - 1, sys.getsizeof("é") - 2  # a str's header (48 and 72 in 3.11)


def peek(cls: type, address: int) -> str:
    """What an untracked object holds, read from its memory (not made an object): an int's value, a str's first
    characters, with the object's reference count (one more than its holders: a count above what any holder
    explains is a reference nobody will give back)."""
    count = ctypes.c_size_t.from_address(address).value
    length = ctypes.c_ssize_t.from_address(address + 16).value
    if cls is int:
        if abs(length) > 3:
            return f"{'-' if length < 0 else ''}an int of up to {30 * abs(length)} bits (count {count})"
        digits = [ctypes.c_uint32.from_address(address + 24 + 4 * k).value for k in range(abs(length))]
        value = sum(d << (30 * k) for k, d in enumerate(digits)) * (-1 if length < 0 else 1)
        return f"{value:,} (count {count})"
    if cls is str:
        state = ctypes.c_uint32.from_address(address + 32).value
        if (state >> 6) & 1:  # ASCII: the characters follow the header
            text = ctypes.string_at(address + ASCII_HEADER, min(length, 40)).decode("ascii", "replace")
            return f"{text!r}" + ("…" if length > 40 else "") + f" (count {count})"
        return f"a str of {length} characters (count {count})"
    return f"{cls.__qualname__} (count {count})"


def fits(cls: type, address: int, usable: int) -> bool:
    """Whether an int, bytes, float or str of the length its header says fills the block as one would."""
    length = ctypes.c_ssize_t.from_address(address + 16).value
    if cls is float:
        return 24 <= usable < 24 + 32
    if cls is int:
        need = 24 + 4 * max(1, abs(length))
    elif cls is bytes:
        need = 33 + length
    else:  # str: ASCII kind (state's compact and ascii bits) or a compact one of 1, 2 or 4 bytes a character
        state = ctypes.c_uint32.from_address(address + 32).value
        kind, compact, ascii_ = (state >> 2) & 7, (state >> 5) & 1, (state >> 6) & 1
        if not compact or kind not in (1, 2, 4) or length < 0:
            return False
        need = (ASCII_HEADER if ascii_ else COMPACT_HEADER) + (length + 1) * kind
    return 0 <= length < 2**31 and need <= usable < need + 32
