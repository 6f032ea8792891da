"""Who holds the Python objects that sit alone on mostly free pages (bench/robustness/glibc_pages.py's lone blocks):
for the chaos bench, at the end of a run, to name what keeps the pages that grew.

A lone block that opens with a Python object (``glibc_pages.name_blocks``) is an int or a str far more often than
anything else. Their type does not say what keeps them; the object that refers to them does. This module follows each
sampled object up the collector's referrers, three steps at most, and names the path: the type of each holder and
the key or attribute it is kept under ("int ← list ← Monkey.log").

An address becomes an object again only where it is certain to be one: a tracked object only if the collector
lists it at that address, an untracked one (int, str, bytes, float) only if the block still opens with a count and
a live class (a freed block's first 16 bytes are overwritten by malloc's own links).
"""

from __future__ import annotations

import ctypes
import gc
from collections import Counter
from typing import Any, cast

UNTRACKED = (int, str, bytes, float)


def _objects_at(lone: dict[str, Any], tracked_ids: set[int], types: dict[int, type]) -> list[tuple[Any, float]]:
    found: list[tuple[Any, float]] = []
    for chunk, share in zip(lone.get("sample", []), lone.get("kept", []), strict=True):
        user = int(chunk) + 16
        for offset in (16, 32):  # a tracked object after its collector header (and a managed dict's two words)
            if user + offset in tracked_ids:
                found.append((ctypes.cast(user + offset, ctypes.py_object).value, float(share)))
                break
        else:
            count = ctypes.c_size_t.from_address(user).value
            cls = types.get(ctypes.c_size_t.from_address(user + 8).value)
            if cls is not None and issubclass(cls, UNTRACKED) and 0 < count < 2**32:
                found.append((ctypes.cast(user, ctypes.py_object).value, float(share)))
    return found


def _label(holder: Any, held: Any) -> str:
    """A holder's type, with the key or attribute under which it holds ``held``."""
    name = type(holder).__qualname__
    if isinstance(holder, dict):
        key = next((k for k, v in holder.items() if v is held), None)
        if key is None:
            return "dict (a key)"
        return f"dict[{key!r}]" if isinstance(key, str) else f"dict[{type(key).__qualname__}]"
    if not isinstance(holder, (list, tuple, set, frozenset)):
        slot = next((k for k, v in (getattr(holder, "__dict__", None) or {}).items() if v is held), None)
        if slot is not None:
            return f"{name}.{slot}"
    return name


def holders(lone: dict[str, Any], depth: int = 3, top: int = 12) -> list[tuple[str, int, float]]:
    """The paths that hold the sampled lone objects, with how many of the sample each holds and the bytes of page
    those keep (scaled from the sample to all, like ``name_blocks``), most kept first. An instance's ``__dict__`` is
    named by the instance ("Monkey.log", not "dict['log'] ← Monkey")."""
    from bench.robustness.glibc_pages import _every_type
    from bench.robustness.memory import every_object

    every = lone.get("every", 1)
    with every_object() as everything:
        tracked_ids = {id(o) for o in everything}
        objects = _objects_at(lone, tracked_ids, _every_type())
        ours = {id(everything), id(objects), id(lone)}
        chains: list[list[Any]] = [[o] for o, _ in objects]
        for _ in range(depth + 1):  # (one more step: an instance's dict is named by the instance)
            wanted: dict[int, list[int]] = {}
            for i, chain in enumerate(chains):
                if chain[-1] is not None:
                    wanted.setdefault(id(chain[-1]), []).append(i)
            if not wanted:
                break
            found: dict[int, Any] = {}
            for candidate in everything:
                if id(candidate) in ours or type(candidate).__name__ == "frame":
                    continue
                for ref in gc.get_referents(candidate):
                    if id(ref) in wanted and id(ref) not in found:
                        found[id(ref)] = candidate
            for ids in wanted.values():
                for i in ids:
                    chains[i].append(found.get(id(chains[i][-1])))
        kept: Counter[str] = Counter()
        held: Counter[str] = Counter()
        for (_, share), chain in zip(objects, chains, strict=True):
            key = " ← ".join(_path(chain, depth))
            kept[key] += share * every
            held[key] += every
        del chains, objects
    return [(path, held[path], kept[path]) for path, _ in kept.most_common(top)]


def _path(chain: list[Any], depth: int) -> list[str]:
    names = [type(chain[0]).__qualname__]
    i = 1
    while i < len(chain) and chain[i] is not None and len(names) <= depth:
        holder: Any = chain[i]
        held = chain[i - 1]
        owner = chain[i + 1] if i + 1 < len(chain) else None
        if isinstance(holder, dict) and owner is not None and getattr(owner, "__dict__", None) is holder:
            key = next((k for k, v in cast(dict, holder).items() if v is held), "?")
            names.append(f"{type(owner).__qualname__}.{key}")
            i += 2
        else:
            names.append(_label(holder, held))
            i += 1
    return names


def holders_said(lone: dict[str, Any]) -> str:
    if not lone.get("sample", []).__len__():
        return "none read"
    mb = 2**20
    return "; ".join(f"{path} {n:,} ({kept / mb:,.1f} MB)" for path, n, kept in holders(lone))
