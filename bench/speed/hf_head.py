"""A Hugging Face model's queries without its LM head where they read no logits (engine/models/wrappers/hf.py).

A masked or causal LM loaded from a Hugging Face folder used to run whole for every query, its vocabulary head
included: an occurrence fetch's or index build's batch of 32 sentences computed 32 x T x 30,522 logits that
nothing read. Now vectors and attention take the network alone. Side by side in one process, alternating, for
each model: a batch of 32 held-out corpus sentences' contextual vectors (what the polysemy lens encodes per
batch), and a new 30-word text's attention (a keystroke in the attention panel); the time (median over the
rounds) and the resident memory the call added at its peak (sampled every 2 ms, after a trim).

    python bench/speed/hf_head.py [--rounds 7] [--models minilm-mlm,minilm-gpt]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

from bench._report import machine, write_section  # noqa: E402


def _anon_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    return 0.0


def timed(call: Any) -> tuple[float, float]:
    """Seconds and the peak of anonymous memory above the start (MB) of ``call()``."""
    from engine import api

    api.release_memory()
    start = _anon_mb()
    peak = [start]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.002):
            peak[0] = max(peak[0], _anon_mb())

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    began = time.perf_counter()
    call()
    seconds = time.perf_counter() - began
    done.set()
    watcher.join()
    return seconds, max(peak[0], _anon_mb()) - start


def whole_model(adapter: Any) -> Any:
    """The adapter's forward as it was: the whole model, head included, for every query (asking for the
    next-sentence output takes that path; these models have no such head, so it answers None)."""
    forward = adapter.forward

    def run(*args: Any, **kwargs: Any) -> Any:
        return forward(*args, **{**kwargs, "nsp": True})

    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--models", default="minilm-mlm,minilm-gpt")
    args = p.parse_args()
    from engine import api
    from engine.handles.transformer import TransformerHandle

    sentences = [s for s in api.corpus_sample("default", 400) if 12 <= len(s.split()) <= 40][:32]
    every_word = " ".join(api.corpus_sample("default", 400)).split()
    texts = iter([" ".join(every_word[i : i + 30]) for i in range(0, len(every_word) - 30, 7)])  # each call its own
    rows = []
    for name in args.models.split(","):
        handle = api.load(name)
        assert isinstance(handle, TransformerHandle), f"{name} is not a transformer"
        adapter = handle.adapter
        network_alone = adapter.forward
        paths = {"the whole model (before)": whole_model(adapter), "the network alone (now)": network_alone}
        work = {"32 sentences' vectors": lambda h=handle: h.contextual_vectors_batch(sentences),
                "a 30-word attention": lambda h=handle: h.attention(next(texts))}  # (a text seen before is cached)
        for task, call in work.items():
            figures: dict[str, list[tuple[float, float]]] = {path: [] for path in paths}
            for forward in paths.values():  # a first call each, not counted
                adapter.forward = forward  # type: ignore[method-assign]  # (the path timed)
                call()
            for _ in range(args.rounds):
                for path, forward in paths.items():
                    adapter.forward = forward  # type: ignore[method-assign]  # (the path timed)
                    figures[path].append(timed(call))
            adapter.forward = network_alone  # type: ignore[method-assign]  # (the path timed)
            for path, got in figures.items():
                rows.append((name, task, path, statistics.median(s for s, _ in got) * 1000,
                             statistics.median(m for _, m in got)))
            before, now = (statistics.median(s for s, _ in figures[path]) for path in paths)
            print(f"{name}, {task}: {before * 1000:.0f} -> {now * 1000:.0f} ms", flush=True)
        api.release_memory()
    table = "\n".join(f"| {m} | {t} | {p} | {ms:,.0f} ms | {mb:,.0f} MB |" for m, t, p, ms, mb in rows)
    write_section("hf-head", f"""## Hugging Face models: the LM head only where logits are read

Machine: {machine()}

`python bench/speed/hf_head.py --rounds {args.rounds}`: for each model, the same calls through the whole model
(head included, as every query ran before) and through the network alone, alternating, {args.rounds} rounds;
medians. The memory is what the call added to the process's anonymous resident memory at its peak (sampled
every 2 ms, after a trim).

| model | query | forward | time | memory at the peak |
|---|---|---|---:|---:|
{table}
""")


if __name__ == "__main__":
    main()
