"""Shared by the bench scripts: machine description and writing a section of the RESULTS.md beside the
script (bench/speed, quality, robustness, studies; the GPU check's in bench/RESULTS.md)."""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path

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
    return (f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python "
            f"{platform.python_version()}, torch {torch.__version__} ({default_threads()} threads), {gpu}")


def results_file(script: str | Path) -> Path:
    """The RESULTS.md of a bench script's group (bench/RESULTS.md for a script at the top of bench/)."""
    folder = Path(script).resolve().parent
    return folder / "RESULTS.md" if folder.parent == BENCH else BENCH / "RESULTS.md"


def write_section(name: str, body: str, script: str | Path | None = None) -> None:
    """Write (or replace) section ``name`` of the RESULTS.md of ``script`` (default: the caller's file)."""
    results = results_file(script or sys._getframe(1).f_code.co_filename)
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    text = results.read_text() if results.exists() else "# Benchmark results\n\nEach section is written by the bench script it names.\n"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    results.write_text(text)


def default_threads() -> int:
    """torch's own thread count (the app's query thread runs on one, which later threads would inherit)."""
    import torch

    from engine import api

    return api._DEFAULT_THREADS[0] if api._DEFAULT_THREADS else torch.get_num_threads()
