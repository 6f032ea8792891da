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

from bench.robustness.object_headers import UNTRACKED, fits, peek


def _objects_at(lone: dict[str, Any], tracked: dict[int, Any],
                types: dict[int, type]) -> list[tuple[int, str, float, str]]:
    """The sampled blocks that hold a Python object: (the object's address, its type's name, the page it keeps).
    An address is never made an object here (a block misread as one, made an object, was once given back to a C
    library as garbage: a crash): a tracked object is taken only where the collector lists one at that address,
    an untracked one only where its header and its length fit the block."""
    found: list[tuple[int, str, float, str]] = []
    for chunk, share in zip(lone.get("sample", []), lone.get("kept", []), strict=True):
        user = int(chunk) + 16
        usable = (ctypes.c_size_t.from_address(int(chunk) + 8).value & ~7) - 8
        for offset in (16, 32):  # a tracked object after its collector header (and a managed dict's two words)
            if user + offset in tracked:
                found.append((user + offset, type(tracked[user + offset]).__qualname__, float(share), ""))
                break
        else:
            count = ctypes.c_size_t.from_address(user).value
            cls = types.get(ctypes.c_size_t.from_address(user + 8).value)
            if cls in UNTRACKED and 0 < count < 2**32 and fits(cls, user, usable):
                found.append((user, cls.__qualname__, float(share), peek(cls, user)))
    return found


def _label(holder: Any, held: int) -> str:
    """A holder's type, with the key or attribute under which it holds the object at address ``held``."""
    name = type(holder).__qualname__
    if issubclass(type(holder), dict):  # (a dict's keys differ from entry to entry: the path would too)
        return "dict" if any(id(v) == held for v in holder.values()) else "dict (a key)"
    if not issubclass(type(holder), (list, tuple, set, frozenset)):
        slot = next((k for k, v in _attributes(holder).items() if id(v) == held), None)
        if slot is not None:
            return f"{name}.{slot}"
    return name


def _attributes(obj: Any) -> dict[str, Any]:
    try:
        found = object.__getattribute__(obj, "__dict__")
    except Exception:  # noqa: BLE001 - an object without one (or whose lookup fails) has none to name
        return {}
    return found if isinstance(found, dict) else {}


def holders(lone: dict[str, Any], depth: int = 3, top: int = 12) -> list[tuple[str, int, float]]:
    """The paths that hold the sampled lone objects, with how many of the sample each holds and the bytes of page
    those keep (scaled from the sample to all, like ``name_blocks``), most kept first. An instance's ``__dict__`` is
    named by the instance ("Monkey.log", not "dict['log'] ← Monkey")."""
    from bench.robustness.glibc_pages import _every_type
    from bench.robustness.memory import every_object

    every = lone.get("every", 1)
    with every_object() as everything:
        tracked = {id(o): o for o in everything}
        objects = _objects_at(lone, tracked, _every_type())
        # the collector does not track a dict or tuple that holds only ints, strs and the like, nor some C types'
        # own containers (functools.lru_cache's entries): reached through the objects it does track, they are
        # holders too
        untracked = {id(r): r for o in everything for r in gc.get_referents(o)
                     if type(r) not in UNTRACKED and not gc.is_tracked(r)}
        pool = [*everything, *untracked.values()]
        ours = {id(everything), id(objects), id(lone), id(tracked), id(untracked), id(pool)}
        # each chain: the object's address, then its holders (objects), nearest first
        chains: list[list[Any]] = [[address] for address, *_ in objects]
        for step in range(depth + 1):  # (one more step: an instance's dict is named by the instance)
            wanted: dict[int, list[int]] = {}
            for i, chain in enumerate(chains):
                if chain[-1] is not None:
                    wanted.setdefault(chain[-1] if step == 0 else id(chain[-1]), []).append(i)
            if not wanted:
                break
            found: dict[int, Any] = {}
            for candidate in pool:
                if id(candidate) in ours or type(candidate).__name__ == "frame":
                    continue
                for ref in gc.get_referents(candidate):
                    if id(ref) in wanted and id(ref) not in found:
                        found[id(ref)] = candidate
            for key, ids in wanted.items():
                for i in ids:
                    chains[i].append(found.get(key))
        kept: Counter[str] = Counter()
        held: Counter[str] = Counter()
        examples: dict[str, list[str]] = {}
        for (_, name, share, peek), chain in zip(objects, chains, strict=True):
            path = " ← ".join([name, *_path(chain, depth)])
            if path == name:  # no holder the collector can see: say what it holds
                path = f"{name}, no holder found"
                examples.setdefault(path, []).append(peek)
            kept[path] += share * every
            held[path] += every
        del chains, objects, tracked, untracked, pool
    return [(path + (f" (e.g. {'; '.join(examples[path][:: max(1, len(examples[path]) // 6)][:6])})"
                     if path in examples else ""), held[path], kept[path]) for path, _ in kept.most_common(top)]


def _path(chain: list[Any], depth: int) -> list[str]:
    """The holders' names, from ``chain`` = [address, holder, its holder, …]."""
    names: list[str] = []
    i = 1
    while i < len(chain) and chain[i] is not None and len(names) < depth:
        holder: Any = chain[i]
        held = chain[0] if i == 1 else id(chain[i - 1])
        owner = chain[i + 1] if i + 1 < len(chain) else None
        if issubclass(type(holder), dict) and owner is not None and _attributes(owner) is holder:
            key = next((k for k, v in cast(dict, holder).items() if id(v) == held), "?")
            names.append(f"{type(owner).__qualname__}.{key}")
            i += 2
        else:
            names.append(_label(holder, held))
            i += 1
    return names


def holders_said(lone: dict[str, Any]) -> str:
    if not len(lone.get("sample", [])):
        return "none read"
    mb = 2**20
    return "; ".join(f"{path} {n:,} ({kept / mb:,.1f} MB)" for path, n, kept in holders(lone))
