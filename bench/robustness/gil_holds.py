"""How long the window's worker jobs hold Python's GIL at a stretch (issue 37: the event loop's stalls).

The window's thread needs the GIL for every Python callback Qt makes while it lays out and paints, and a worker
thread that runs one long C call without letting the GIL go keeps the window waiting for all of it: in the chaos
bench the GUI thread spent more of its stalls asleep, waiting, than working (bench/robustness/RESULTS.md, "Chaos in
the window"), and sampling which thread held the GIL (py-spy ``--gil``) found model loads holding it most.

Here the main thread stands in for the window's: it sleeps 0.5 ms and wakes, over and over, with the window's
switch interval (0.1 ms), while one worker thread runs one job the window's workers run: loading each model the
app loads by default (a Run history checkpoint of a MiniLM run loads as minilm-mlm does), and the queries of the
views, on one torch thread as the window's queries are. For each job: its wall time and the longest time the main
thread could not run (its longest gap less its sleep), medians over ``--rounds``. Python's automatic garbage
collection is off, as in the window's process (which collects on its own thread between events). The loads of Hugging Face
weights run both ways side by side, alternating: transformers' own read into memory (``disable_mmap``: safetensors
reads the whole file in one call) and ``engine.models.hf_memory.read_weights`` (a tensor at a time).

    python bench/robustness/gil_holds.py [--rounds 5] [--no-write]
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import machine, write_section  # noqa: E402

SLEEP_S = 0.0005
SWITCH_S = 0.0001  # the window's (explorer.tasks.SWITCH_INTERVAL_S)
LOADS = ["bert-tiny", "gpt-tiny", "elmo-tiny", "word2vec-sgns", "glove-6b-50d", "all-minilm-l6-v2", "minilm-mlm",
         "minilm-gpt", "tuned-lens-minilm-mlm"]
HF_READS = {"all-minilm-l6-v2", "minilm-mlm", "minilm-gpt", "tuned-lens-minilm-mlm"}  # read through hf_memory
SENTENCE = "She sat on the bank of the river and watched the water."


def longest_hold(job: Callable[[], Any], one_thread: bool) -> tuple[float, float]:
    """(wall s, the main thread's longest wait beyond its sleep, s) while a worker thread runs ``job``."""
    done = threading.Event()
    took: list[float] = []
    errors: list[BaseException] = []

    def work() -> None:
        if one_thread:
            from engine.api import one_thread_here

            one_thread_here()
        began = time.perf_counter()
        try:
            job()
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)
        took.append(time.perf_counter() - began)
        done.set()

    gc.collect()  # between jobs, not during one: the window collects on its own thread (explorer.garbage)
    worker = threading.Thread(target=work)
    last, worst = time.perf_counter(), 0.0
    worker.start()
    while not done.is_set():
        time.sleep(SLEEP_S)
        now = time.perf_counter()
        worst, last = max(worst, now - last - SLEEP_S), now
    worker.join()
    if errors:
        raise errors[0]
    return took[0], max(0.0, worst)


def transformers_read() -> Callable[[], None]:
    """Switch ``hf_memory.from_pretrained_in_memory`` to transformers' own read; the returned call switches it back."""
    from engine.models import hf_memory

    ours = hf_memory.from_pretrained_in_memory

    def theirs(auto: Any, folder: Any, **kwargs: Any) -> Any:
        return auto.from_pretrained(folder, **kwargs, **hf_memory.in_memory())

    hf_memory.from_pretrained_in_memory = theirs  # type: ignore[assignment]

    def back() -> None:
        hf_memory.from_pretrained_in_memory = ours  # type: ignore[assignment]

    return back


def queries(handles: dict[str, Any]) -> list[tuple[str, Callable[[], Any]]]:
    from engine import api

    return [
        ("fill-mask, minilm-mlm", lambda: handles["minilm-mlm"].fill_mask("She went to the [MASK] to buy milk.")),
        ("attention, minilm-mlm", lambda: handles["minilm-mlm"].attention(SENTENCE)),
        ("contextual vectors, bert-tiny", lambda: handles["bert-tiny"].contextual_vectors(SENTENCE)),
        ("contextual vectors, elmo-tiny", lambda: handles["elmo-tiny"].contextual_vectors(SENTENCE)),
        ("sentence score, gpt-tiny", lambda: handles["gpt-tiny"].score(SENTENCE)),
        ("lens grid, minilm-gpt", lambda: handles["minilm-gpt"].lens_grid(SENTENCE)),
        ("neighbours, glove-6b-50d", lambda: handles["glove-6b-50d"].static_neighbours("bank", 20)),
        ("300 occurrences of bank, bert-tiny", lambda: api.word_occurrences(handles["bert-tiny"], "bank")),
    ]


def measure(rounds: int) -> tuple[list[list[str]], str]:
    from engine import api

    sys.setswitchinterval(SWITCH_S)
    gc.disable()  # as the window's process: no collection in whichever thread allocates (explorer.garbage)
    handles = {name: api.load(name) for name in LOADS}  # warm: imports, caches, word indexes
    for _label, query in queries(handles):
        query()
    rows: dict[str, list[tuple[float, float]]] = {}
    for r in range(rounds):
        for variant in (("theirs", "ours") if r % 2 == 0 else ("ours", "theirs")):
            back = transformers_read() if variant == "theirs" else (lambda: None)
            try:
                for name in LOADS:
                    if variant == "theirs" and name not in HF_READS:
                        continue
                    label = f"load {name}" + (", transformers' read" if variant == "theirs" else "")
                    rows.setdefault(label, []).append(longest_hold(functools.partial(api.load, name), one_thread=False))
            finally:
                back()
        for label, query in queries(handles):
            rows.setdefault(label, []).append(longest_hold(query, one_thread=True))
        print(f"round {r + 1} of {rounds}", flush=True)
    table = []
    for label, runs in rows.items():
        wall = statistics.median(t for t, _ in runs)
        hold = statistics.median(h for _, h in runs)
        table.append([label, f"{wall * 1000:,.0f} ms", f"{hold * 1000:,.1f} ms", f"{max(h for _, h in runs) * 1000:,.1f} ms"])
    return table, f"{rounds} rounds"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args()
    table, what = measure(args.rounds)
    lines = ["| job (on a worker thread) | wall, median | longest GIL hold, median | worst |", "|---|---:|---:|---:|"]
    lines += ["| " + " | ".join(row) + " |" for row in table]
    body = "\n".join([
        "## Holding the GIL in the window's workers", "",
        f"Machine: {machine()}", "",
        f"`python bench/robustness/gil_holds.py --rounds {args.rounds}`: the main thread sleeps {SLEEP_S * 1000:g} ms and "
        f"wakes, over and over (the switch interval at the window's {SWITCH_S * 1000:g} ms), while a worker thread runs "
        "one job the window's workers run; the longest time the main thread could not run beyond its sleep is the "
        "longest stretch the job held the GIL (or kept it from the main thread); Python's automatic garbage collection "
        "off, as in the window's process. Loads of Hugging Face weights both "
        f"ways, alternating: transformers' own read into memory, and a tensor at a time (the app's); {what}, medians.",
        "", *lines, ""])
    print(body)
    if not args.no_write:
        write_section("gil-holds", body)


if __name__ == "__main__":
    main()
