"""Shared by the bench scripts: machine description and writing a section of bench/RESULTS.md."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")


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


def write_section(name: str, body: str) -> None:
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\nEach section is written by the bench script it names.\n"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text)


def default_threads() -> int:
    """torch's own thread count (the app's query thread runs on one, which later threads would inherit)."""
    import torch

    from engine import api

    return api._DEFAULT_THREADS[0] if api._DEFAULT_THREADS else torch.get_num_threads()
