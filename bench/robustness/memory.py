"""Memory under many queries (issue 17: 1,000 mixed queries, RSS growth < 5%): bert-tiny, gpt-tiny and
elmo-tiny answer fill-mask, next-token, attention, contextual vectors and sentence scores for texts of
varied length (up to ~400 words), as the app's query thread does; RSS after a 100-query warm-up vs after
1,000 more. Run twice: as the engine does by itself, and with ``api.release_memory()`` after each query
(glibc's malloc_trim gives the allocator's freed pages back; the app's query thread calls it after a
query at most every 2 s, so that a keystroke's second query does not wait for it).

    python bench/robustness/memory.py [--queries 1000]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402
from bench.robustness.glibc_arenas import HEAP_ALIGN, arenas_mb  # noqa: E402
from bench.robustness.glibc_pages import page_account_mb  # noqa: E402

WORDS = ["the", "river", "bank", "was", "muddy", "after", "the", "rain", "and", "the", "children", "played", "by", "the", "water", "while", "their", "parents", "deposited", "money", "at", "the", "bank", "in", "town", "before", "the", "match", "began", "on", "the", "green", "field"]


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def rss_parts_mb() -> dict[str, float]:
    """RSS split as the kernel counts it: anonymous memory (the heap, tensors: what a leak grows) and
    file-backed pages (memory-mapped caches and libraries: the kernel's to drop when memory is short)."""
    parts = {"anon": float("nan"), "file": float("nan"), "shmem": float("nan")}
    with open(f"/proc/{os.getpid()}/status", encoding="ascii") as f:
        for line in f:
            for key, name in (("RssAnon:", "anon"), ("RssFile:", "file"), ("RssShmem:", "shmem")):
                if line.startswith(key):
                    parts[name] = int(line.split()[1]) / 1024
    return parts


@contextlib.contextmanager
def every_object() -> Iterator[list[Any]]:
    """Every object the collector tracks, those the app froze included (it freezes its long-lived objects with
    gc.freeze, and get_objects does not list frozen ones); afterwards they are frozen again as the app does at a
    quiet moment: collected, then frozen."""
    import gc

    garbage = sys.modules.get("explorer.garbage")  # the window's: frozen again by its freeze, which its collector counts
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    try:
        yield gc.get_objects()
    finally:
        if frozen and garbage:
            garbage.freeze_now()
        elif frozen:
            gc.collect()
            gc.freeze()


def _arrays_mb(counted: set[int]) -> float:
    """The bytes of the numpy arrays that own their memory (not a file's mapping) and that an object the collector
    tracks refers to, directly or through containers it does not track (arrays are not tracked, nor is a dict that
    holds only arrays and strings): vectors, indexes, results kept in caches. An array whose data is a storage in
    ``counted`` (torch.from_numpy's, a tensor's .numpy()) is not counted again."""
    import gc
    import warnings

    np = sys.modules.get("numpy")
    if np is None:
        return 0.0
    seen: set[int] = set()
    total = 0
    with every_object() as everything, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # isinstance on torch's deprecated module attributes warns
        stack = [ref for obj in everything for ref in gc.get_referents(obj) if not gc.is_tracked(ref)]
        while stack:
            ref = stack.pop()
            if isinstance(ref, np.ndarray):
                owner = ref
                while isinstance(owner.base, np.ndarray):
                    owner = owner.base
                ptr = owner.ctypes.data
                if owner.base is None and ptr not in seen and ptr not in counted:  # owns its data (not a mapping)
                    seen.add(ptr)
                    total += owner.nbytes
            elif type(ref) in (dict, list, tuple, set, frozenset):  # untracked: only atomic values and arrays
                stack.extend(gc.get_referents(ref))
    return total / 2**20


def census_mb() -> dict[str, float]:
    """Where anonymous memory is, at a quiet moment: the bytes of the tensors Python can still reach (each
    storage once: model weights, caches; "tensors"), of the weights packed for oneDNN ("packed"), of the numpy
    arrays that own their memory ("arrays"), the loaded model handles alive ("handles", counted,
    unloaded ones included if something still holds them), and glibc's own account (mallinfo2, every arena):
    bytes in use from the heap ("heap_used"), freed but kept by the allocator ("heap_free": fragmentation,
    what malloc_trim could not give back) and in mmapped blocks ("mmapped"); and glibc's arenas read in place
    (bench/robustness/glibc_arenas.py), every anonymous page accounted for (bench/robustness/glibc_pages.py)."""
    import warnings

    # the allocator first, at the instant the caller read the RSS: the walk over every object below allocates lists of
    # millions of pointers, and what it frees stays in the arenas (the thirty-seventh session's census read ~100 MB
    # more in the arenas than the RSS read just before it held)
    allocator = mallinfo_mb() | resident_anon_mb() | python_arenas_mb() | arenas_mb() | page_account_mb()
    out: dict[str, float] = {}
    torch = sys.modules.get("torch")
    if torch is not None:
        seen: set[int] = set()
        total = 0
        handles = 0
        from engine.handles.base import BaseHandle

        with every_object() as everything, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # isinstance on torch's deprecated module attributes warns
            objects = [o for o in everything if isinstance(o, (torch.Tensor, BaseHandle))]
        packed = 0
        for obj in objects:
            if isinstance(obj, torch.Tensor):
                try:
                    if obj.device.type != "cpu" or obj.is_meta:
                        continue
                    if obj.is_mkldnn:  # a weight packed for oneDNN (engine/models/packed_linear.py): no storage
                        packed += obj.numel() * obj.element_size()
                        continue
                    storage = obj.untyped_storage()
                    ptr = storage.data_ptr()
                except (RuntimeError, NotImplementedError):
                    continue
                if ptr and ptr not in seen:
                    seen.add(ptr)
                    total += storage.nbytes()
            else:
                handles += 1
        del objects
        out |= {"tensors": total / 2**20, "packed": packed / 2**20, "handles": float(handles),
                "arrays": _arrays_mb(seen)}

    return out | allocator


def mallinfo_mb() -> dict[str, float]:
    """glibc's own account (``mallinfo2``, every arena): bytes in use from the heap ("heap_used"), freed but kept by
    the allocator ("heap_free") and in mmapped blocks ("mmapped"). Empty where there is no ``mallinfo2``."""
    import ctypes
    import ctypes.util

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                         "fsmblks", "uordblks", "fordblks", "keepcost")]

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallinfo2.restype = MallInfo2
        info = libc.mallinfo2()
    except (OSError, AttributeError):
        return {}
    return {"heap_used": info.uordblks / 2**20, "heap_free": info.fordblks / 2**20, "mmapped": info.hblkhd / 2**20}


def in_use_mb(moment: dict[str, float]) -> float:
    """Of a census, what malloc handed out and was not freed: glibc's heap in use and its mmapped blocks."""
    return moment.get("heap_used", 0.0) + moment.get("mmapped", 0.0)


GLIBC_HEAP_ALIGN = HEAP_ALIGN  # a thread arena's heaps are mapped at multiples of glibc's HEAP_MAX_SIZE (64-bit)


# "elsewhere" by the size of its mappings: glibc maps a block of its own above its threshold (128 kB, raised up to
# 32 MB by frees), a thread's stack is 8 MB, oneDNN's compiled kernels and Qt's images are mapped apart
ELSEWHERE_SIZES = ("under 1 MB", "1-8 MB", "8-64 MB", "64 MB or more")


def _size_class(size: int) -> str:
    mb = size / 2**20
    return ELSEWHERE_SIZES[0 if mb < 1 else 1 if mb < 8 else 2 if mb < 64 else 3]


def resident_anon_mb() -> dict[str, float]:
    """Resident anonymous memory by where it lies (Linux, /proc/self/smaps): in the main arena's heap ("[heap]",
    grown with brk), in the threads' arenas (their 64 MB heaps, aligned at 64 MB: a heap shrunk and grown again
    can be split into several mappings, all within its 64 MB), and elsewhere (big blocks mapped on their own,
    Python's small-object arenas, thread stacks, Qt's and torch's own mappings), with "elsewhere" also by the size
    of its mappings. With glibc's bytes in use, the first two say how much of an arena's resident memory is free
    and kept."""
    parts = {"anon_main_arena": 0.0, "anon_thread_arenas": 0.0, "anon_elsewhere": 0.0}
    parts |= {f"elsewhere_{size}": 0.0 for size in ELSEWHERE_SIZES}
    mappings: list[tuple[int, int, str, float]] = []  # (start, end, name, resident anonymous MB)
    huge = 0.0
    try:
        with open("/proc/self/smaps", encoding="ascii", errors="replace") as f:
            for line in f:
                head = line.split()
                if not head:
                    continue
                if "-" in head[0] and not head[0].endswith(":"):  # a mapping's first line: its range and name
                    first, last = (int(x, 16) for x in head[0].split("-"))
                    mappings.append((first, last, head[5] if len(head) > 5 else "", 0.0))
                elif head[0] == "Anonymous:" and mappings:
                    first, last, name, _ = mappings[-1]
                    mappings[-1] = (first, last, name, int(head[1]) / 1024)
                elif head[0] == "AnonHugePages:":  # transparent huge pages (numpy asks for them for arrays of 4 MB or more)
                    huge += int(head[1]) / 1024
    except (OSError, ValueError, IndexError):
        return {}
    heaps = {first for first, _, name, _ in mappings if not name and first % GLIBC_HEAP_ALIGN == 0}
    for first, last, name, mb in mappings:
        if name == "[heap]":
            parts["anon_main_arena"] += mb
        elif name:  # a file, the stack, vdso…
            continue
        elif first - first % GLIBC_HEAP_ALIGN in heaps and last <= first - first % GLIBC_HEAP_ALIGN + GLIBC_HEAP_ALIGN:
            parts["anon_thread_arenas"] += mb
        else:
            parts["anon_elsewhere"] += mb
            parts[f"elsewhere_{_size_class(last - first)}"] += mb
    return parts | {"anon_huge": huge}


def python_arenas_mb() -> dict[str, float]:
    """The bytes of Python's small-object allocator's arenas ("py_arenas": objects of up to 512 bytes, kept by
    the arena until every object in it is freed) and of the objects alive in them ("py_objects"), read from
    ``sys._debugmallocstats`` (it writes to C's stderr)."""
    import re

    from explorer.python_allocator import malloc_stats

    text = malloc_stats()
    if not text:
        return {}
    out: dict[str, float] = {}
    for key, pattern in (("py_arenas", r"arenas \* \d+ bytes/arena\s*=\s*([\d,]+)"),
                         ("py_objects", r"# bytes in allocated blocks\s*=\s*([\d,]+)")):
        found = re.search(pattern, text)
        if found:
            out[key] = int(found.group(1).replace(",", "")) / 2**20
    return out


OWNER_MODULES = ("explorer", "engine", "bench")


def _owner_path(obj: object, ignore: set[int], depth: int = 7) -> str:
    """The shortest chain of referrers from ``obj`` up to an object of word2bert's own (a panel, a handle, a
    cache; or a module), as type names: who keeps ``obj`` alive. "?" when none is found within ``depth``
    (held from C++ only, say, or through more than ``depth`` containers)."""
    import gc
    import types

    frontier = [(obj, [type(obj).__name__])]
    seen = {id(obj)}
    for _ in range(depth):
        nxt: list[tuple[object, list[str]]] = []
        ignore.add(id(nxt))
        for pair in frontier:
            ignore.add(id(pair))
        for item, path in frontier:
            for ref in gc.get_referrers(item):
                if id(ref) in seen or id(ref) in ignore or isinstance(ref, types.FrameType):
                    continue
                seen.add(id(ref))
                kind = type(ref)
                name = kind.__qualname__
                if isinstance(ref, types.ModuleType):
                    return " → ".join([f"module {ref.__name__}", *path[::-1]])
                if kind.__module__.split(".")[0] in OWNER_MODULES and not isinstance(ref, (dict, list, tuple)):
                    return " → ".join([f"{kind.__module__}.{name}", *path[::-1]])
                nxt.append((ref, [*path, name]))
        frontier = nxt[:2000]
    return "?"


def _array_base(a: Any) -> Any:
    """The array that owns a numpy array's memory (views share their base's)."""
    import numpy as np

    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _array_ptr(a: Any) -> int:
    """Where a numpy array's memory starts (of its base: views share it)."""
    return int(_array_base(a).__array_interface__["data"][0])


def _storages_of(handle: object, torch: Any, handle_type: type) -> set[int]:
    """The data pointers of every CPU tensor a handle reaches through its own objects (its model's weights,
    packed copies, caches), not through modules, classes, functions or other handles."""
    return set(_storage_sizes_of(handle, torch, handle_type))


def handle_tensors_mb(handle: object, loaded: list[object]) -> float:
    """The MB of the tensors (their storages; numpy arrays too) that ``handle`` reaches and none of ``loaded``
    (other handles) does: what holding it costs beyond the models loaded. Packed weight copies are not counted
    (the census counts them apart)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return 0.0
    from engine.handles.base import BaseHandle

    shared: set[int] = set()
    for other in loaded:
        if other is not handle:
            shared |= _storages_of(other, torch, BaseHandle)
    own = _storage_sizes_of(handle, torch, BaseHandle)
    return sum(size for ptr, size in own.items() if ptr not in shared) / 2**20


def _storage_sizes_of(handle: object, torch: Any, handle_type: type) -> dict[int, int]:
    """``_storages_of``'s pointers, each with its storage's (or array's) bytes; packed copies (no storage) left out."""
    import gc
    import types

    import numpy as np

    skip = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.FrameType)
    out: dict[int, int] = {}
    seen = {id(handle)}
    frontier = [handle]
    while frontier:
        nxt = []
        for item in frontier:
            for ref in gc.get_referents(item):
                if id(ref) in seen or isinstance(ref, skip) or (isinstance(ref, handle_type) and ref is not handle):
                    continue
                seen.add(id(ref))
                if isinstance(ref, torch.Tensor):
                    with contextlib.suppress(RuntimeError, NotImplementedError):
                        storage = ref.untyped_storage()
                        out[storage.data_ptr()] = storage.nbytes()
                elif isinstance(ref, np.ndarray):
                    out[_array_ptr(ref)] = _array_base(ref).nbytes
                nxt.append(ref)
        frontier = nxt
    return out


def _root_path(obj: object, ignore: set[int], depth: int = 12) -> str:
    """A chain of referrers from ``obj`` up to a root: a module, or an object no Python object refers to (held
    from C++ — a Qt object's wrapper, a pool's queue — or from a frame), as type names (functions by name)."""
    import gc
    import types

    def name(o: object) -> str:
        if isinstance(o, types.FrameType):
            return f"frame of {o.f_code.co_qualname} ({o.f_code.co_filename.rsplit('/', 1)[-1]}:{o.f_lineno})"
        if isinstance(o, types.FunctionType):
            return f"function {o.__qualname__}"
        if isinstance(o, types.ModuleType):
            return f"module {o.__name__}"
        kind = type(o)
        return f"{kind.__module__}.{kind.__qualname__}" if kind.__module__.split(".")[0] in OWNER_MODULES else kind.__qualname__

    path = [name(obj)]
    seen = {id(obj)}
    frame = sys._getframe()
    while frame is not None:  # this census's own frames hold what it looks at: not holders
        seen.add(id(frame))
        frame = frame.f_back  # type: ignore[assignment]
    item = obj
    for _ in range(depth):
        refs = [r for r in gc.get_referrers(item) if id(r) not in seen and id(r) not in ignore]
        if not refs:
            return " → ".join(["(root)", *path[::-1]])
        ours = [r for r in refs if type(r).__module__.split(".")[0] in OWNER_MODULES or isinstance(r, types.ModuleType)]
        item = (ours or refs)[0]
        del refs, ours  # (our own lists: not referrers to look up next)
        seen.add(id(item))
        path.append(name(item))
        if isinstance(item, types.ModuleType):
            break
    return " → ".join(path[::-1])


def holders_mb(loaded: set[int], min_mb: float = 4.0, top: int = 12) -> list[tuple[str, float]]:
    """Who holds the big buffers at a quiet moment: every tensor storage and numpy buffer of ``min_mb`` or more
    that Python reaches and that is not a parameter or buffer of a loaded model (``loaded``: ids of the loaded
    handles), grouped by the chain from its nearest owner of word2bert's own (``_owner_path``); and every model
    handle alive that is not loaded, by its owner. The largest ``top`` groups, in MB (a handle counts 0 MB,
    named "handle: …")."""
    import gc
    import warnings

    import numpy as np

    torch = sys.modules.get("torch")
    if torch is None:
        return []
    from engine.handles.base import BaseHandle

    # every thread's frames as objects: a running function's locals are otherwise not seen as referrers
    running = sys._current_frames()
    with every_object() as objects:
        ignore = {id(objects), id(running)}
        in_models: set[int] = set()
        stray = []
        tensors = []
        for o in objects:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if isinstance(o, BaseHandle):
                    if id(o) in loaded:
                        in_models |= _storages_of(o, torch, BaseHandle)
                    else:
                        stray.append(o)
                elif isinstance(o, torch.Tensor):
                    tensors.append(o)
        arrays: dict[int, object] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for o in objects:
                for r in gc.get_referents(o):
                    if isinstance(r, np.ndarray):
                        base = _array_base(r)
                        if base.nbytes >= min_mb * 2**20 and _array_ptr(base) not in in_models:
                            arrays.setdefault(id(base), r)
        ignore |= {id(stray), id(tensors), id(arrays)}
        groups: dict[str, float] = {}
        seen_ptr: set[int] = set()
        for t in tensors:
            try:
                if t.device.type != "cpu" or t.is_meta:
                    continue
                storage = t.untyped_storage()
                ptr, size = storage.data_ptr(), storage.nbytes()
            except (RuntimeError, NotImplementedError):
                continue
            if not ptr or ptr in seen_ptr or ptr in in_models or size < min_mb * 2**20:
                continue
            seen_ptr.add(ptr)
            key = _owner_path(t, ignore)
            groups[key] = groups.get(key, 0.0) + size / 2**20
        for a in arrays.values():
            key = _owner_path(a, ignore)
            groups[key] = groups.get(key, 0.0) + a.nbytes / 2**20  # type: ignore[attr-defined]
        for h in stray:
            key = f"handle {getattr(h, 'name', '?')}: " + _root_path(h, ignore)
            groups[key] = groups.get(key, 0.0)
        del tensors, arrays, stray
        handles = sorted((k, v) for k, v in groups.items() if k.startswith("handle "))
        return sorted(((k, v) for k, v in groups.items() if not k.startswith("handle ")), key=lambda kv: -kv[1])[:top] + handles


def queries(handles: dict, n: int, rng: random.Random, release: bool) -> None:
    from engine import api

    for _ in range(n):
        length = rng.choice((5, 12, 30, 80, 200, 400))
        words = [rng.choice(WORDS) for _ in range(length)]
        text = " ".join(words)
        kind = rng.choice(("fill", "next", "attention", "vectors", "score"))
        try:
            if kind == "fill":
                words[rng.randrange(length)] = "[MASK]"
                handles["bert"].fill_mask(" ".join(words), k=8)
            elif kind == "next":
                handles[rng.choice(("gpt", "elmo"))].next_token(text, k=10)
            elif kind == "attention":
                handles[rng.choice(("bert", "gpt"))].attention(text)
            elif kind == "vectors":
                handles[rng.choice(("bert", "gpt", "elmo"))].contextual_vectors(text)
            else:
                handles[rng.choice(("gpt", "elmo"))].score(" ".join(words[:60]))
        except api.Word2BertError:
            pass
        if release:
            api.release_memory()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--queries", type=int, default=1000)
    args = p.parse_args()
    import torch

    from engine import api

    torch.set_num_threads(1)  # as the app's query thread
    handles = {"bert": api.load("bert-tiny"), "gpt": api.load("gpt-tiny"), "elmo": api.load("elmo-tiny")}
    rows = []
    for release in (False, True):
        rng = random.Random(0)
        queries(handles, 100, rng, release)  # warm-up: every shape class seen once
        before = rss_mb()
        queries(handles, args.queries, rng, release)
        after = rss_mb()
        growth = (after - before) / before
        rows.append(f"| {'with' if release else 'without'} `api.release_memory()` after each query | {before:,.0f} MB | "
                    f"{after:,.0f} MB | {growth:+.1%} | {'meets' if growth < 0.05 else 'misses'} |")
        print(rows[-1], flush=True)
    body = "\n".join(["## Memory under 1,000 mixed queries", "", f"Machine: {machine()}", "",
                      f"`python bench/robustness/memory.py`: bert-tiny, gpt-tiny and elmo-tiny; fill-mask, next token, attention, "
                      f"contextual vectors and sentence scores on texts of 5–400 words, one thread; RSS after a "
                      f"100-query warm-up and after {args.queries:,} more. Target: growth < 5%.", "",
                      "| run | RSS after warm-up | after the queries | growth | target |", "|---|---:|---:|---:|---|", *rows])
    write_section("memory", body)
    print(body)


if __name__ == "__main__":
    main()
