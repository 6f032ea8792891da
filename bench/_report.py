"""Shared by the bench scripts: machine description and writing a section of the RESULTS.md beside the
script (bench/speed, quality, robustness, studies; the GPU check's in bench/RESULTS.md)."""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        text = Path("/proc/cpuinfo").read_text()
        m = re.search(r"model name\s*:\s*(.+)", text)
        cpu = m.group(1).strip() if m else cpu
    except OSError:
        pass
    import torch

    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    threads = default_threads()
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python "
            f"{platform.python_version()}, torch {torch.__version__} "
            f"({threads} thread{'s' if threads != 1 else ''}), {gpu}")


def results_file(script: str | Path) -> Path:
    """The RESULTS.md of a bench script's group (bench/RESULTS.md for a script at the top of bench/)."""
    folder = Path(script).resolve().parent
    return folder / "RESULTS.md" if folder.parent == BENCH else BENCH / "RESULTS.md"


MARKER = re.compile(r"<!-- (begin|end) (\S+) -->")


def replaced(text: str, name: str, body: str) -> str:
    """``text`` with section ``name`` replaced by ``body`` (added at the end when it has none). Refuses (ValueError,
    nothing written) a file whose markers for ``name`` are not one begin before one end, or where another section's
    marker lies between them: replacing from the first begin to the first end there would delete what lies between
    (a stray pair of markers once put 5,770 lines of the chaos bench's history inside "talk-hours")."""
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    counts = (text.count(begin), text.count(end))
    if counts == (0, 0):
        return text.rstrip() + "\n\n" + block + "\n"
    if counts != (1, 1) or text.index(end) < text.index(begin):
        raise ValueError(f"section {name!r}: {counts[0]} begin and {counts[1]} end markers, or its end before its "
                         "begin; fix the file by hand (nothing was written)")
    start, stop = text.index(begin), text.index(end) + len(end)
    inside = [m.group(0) for m in MARKER.finditer(text, start + len(begin), stop - len(end))]
    if inside:
        raise ValueError(f"section {name!r} holds another section's marker ({inside[0]}); fix the file by hand "
                         "(nothing was written)")
    return text[:start] + block + text[stop:]


def section(text: str, name: str) -> str | None:
    """The body of section ``name`` in ``text`` (None when it has none)."""
    begin, end = f"<!-- begin {name} -->\n", f"\n<!-- end {name} -->"
    if begin not in text or end not in text:
        return None
    return text[text.index(begin) + len(begin):text.index(end)]


def rows_replaced(body: str, rows: dict[str, str], note: str, new: tuple[str, ...] = ()) -> str:
    """A section's table with the rows whose first cell starts with a key of ``rows`` replaced by its value, the
    others kept, and ``note`` (which rows were re-run, when) said after the table. A key of ``new`` no row holds
    (a checkpoint shipped since) is added where its name sorts among the rows (``_place_of``); any other key no row holds is refused
    (ValueError): a row re-run alone replaces one that was there."""
    lines, found = body.split("\n"), set()
    for i, line in enumerate(lines):
        for key, row in rows.items():
            if line.startswith(f"| {key}"):
                lines[i] = row
                found.add(key)
    if set(rows) - found - set(new):
        raise ValueError(f"no row of {', '.join(sorted(set(rows) - found - set(new)))} in the section: run it whole")
    for key, row in rows.items():
        if key not in found:
            lines.insert(_place_of(lines, key), row)
    return notes_pruned("\n".join(lines).rstrip() + "\n\n" + note)


def _place_of(lines: list[str], key: str) -> int:
    """Where a new row ``key`` goes in a table of rows by name: before the first row below the header whose name
    sorts after it (a table in order by name stays so; a reference row kept last, such as Model quality's
    kn3-default, stays last when the new name sorts after it too), else after the last row."""
    rule = next((i for i, line in enumerate(lines) if line.startswith("|---")), -1)  # under the header
    rows = [i for i, line in enumerate(lines) if line.startswith("| ")]
    body = [i for i in rows if i > rule]
    for i in body:
        if lines[i][2:].split(" |", 1)[0].strip() > key:
            return i
    return (body or rows)[-1] + 1


RE_RUN_NOTE = "Rows re-run alone"  # how a note of rows_replaced begins: "… (how, where): row, row."


def notes_pruned(body: str) -> str:
    """``body`` without the notes of re-runs every row of which a later note names: each row keeps the note of
    its last re-run (five re-runs of one day read as five notes, four of them about figures no longer shown)."""
    paragraphs = body.split("\n\n")
    later: set[str] = set()
    kept: list[str] = []
    for paragraph in reversed(paragraphs):
        if paragraph.startswith(RE_RUN_NOTE) and ": " in paragraph:
            named = {row.strip() for row in paragraph.rsplit(": ", 1)[1].rstrip(".").split(", ")}
            if named <= later:
                continue
            later |= named
        kept.append(paragraph)
    return "\n\n".join(reversed(kept))


def write_section(name: str, body: str, script: str | Path | None = None) -> None:
    """Write (or replace) section ``name`` of the RESULTS.md of ``script`` (default: the caller's file), atomically
    as checkpoints are (a bench killed while writing leaves the old file)."""
    from engine.checkpoints.files import atomic_write_bytes

    results = results_file(script or sys._getframe(1).f_code.co_filename)
    text = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n\nEach section is written by the bench script it names.\n"
    atomic_write_bytes(results, replaced(text, name, body).encode())


def loaded_models(names: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """(name, handle) for each model of ``names`` that loads; one that does not is named on stderr and left out (a
    bench of several models still writes the others' rows)."""
    from engine import api

    for name in names:
        try:
            handle = api.load(name)
        except api.Word2BertError as e:
            print(f"skipping {name}: {e}", file=sys.stderr)
            continue
        yield name, handle


def default_threads() -> int:
    """torch's own thread count (the app's query thread runs on one, which later threads would inherit)."""
    import torch

    from engine.query_threads import DEFAULT_THREADS

    return DEFAULT_THREADS[0] if DEFAULT_THREADS else torch.get_num_threads()
