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
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

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


def census_mb() -> dict[str, float]:
    """Where anonymous memory is, at a quiet moment: the bytes of the tensors Python can still reach (each
    storage once: model weights, caches; "tensors"), the loaded model handles alive ("handles", counted,
    unloaded ones included if something still holds them), and glibc's own account (mallinfo2, every arena):
    bytes in use from the heap ("heap_used"), freed but kept by the allocator ("heap_free": fragmentation,
    what malloc_trim could not give back) and in mmapped blocks ("mmapped")."""
    import ctypes
    import ctypes.util
    import gc
    import warnings

    out: dict[str, float] = {}
    torch = sys.modules.get("torch")
    if torch is not None:
        seen: set[int] = set()
        total = 0
        handles = 0
        from engine.handles.base import BaseHandle

        frozen = gc.get_freeze_count()
        gc.unfreeze()  # the app freezes its long-lived objects (gc.freeze), which get_objects does not list
        with warnings.catch_warnings():  # isinstance on torch's deprecated module attributes warns
            warnings.simplefilter("ignore")
            objects = [o for o in gc.get_objects() if isinstance(o, (torch.Tensor, BaseHandle))]
        if frozen:  # frozen again as the app does at a quiet moment: collected, then frozen
            gc.collect()
            gc.freeze()
        for obj in objects:
            if isinstance(obj, torch.Tensor):
                try:
                    if obj.device.type != "cpu" or obj.is_meta:
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
        out |= {"tensors": total / 2**20, "handles": float(handles)}

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                         "fsmblks", "uordblks", "fordblks", "keepcost")]

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallinfo2.restype = MallInfo2
        info = libc.mallinfo2()
        out |= {"heap_used": info.uordblks / 2**20, "heap_free": info.fordblks / 2**20, "mmapped": info.hblkhd / 2**20}
    except (OSError, AttributeError):
        pass
    return out


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
