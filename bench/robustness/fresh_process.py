"""Run a bench's measurement in a fresh Python process: settings read once when a process starts (the C and
Python allocators, oneDNN's cache) can only be compared that way."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]


def in_fresh_process(module: str, call: str, env: dict[str, str], label: str,
                     timeout_s: float = 1800) -> dict[str, Any]:
    """``call`` (say ``one(45)``) from ``module`` in a new interpreter with environment ``env``; what it returns,
    which must be JSON. Raises RuntimeError with the end of the child's stderr (and ``label``) when it fails."""
    code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); from {module} import {call.split('(')[0]}; "
            f"print('RESULT', json.dumps({call}))")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout_s)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{label}: {done.stderr.strip().splitlines()[-5:]}")
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT "):])
    return result


def alternating_rounds(names: list[str], rounds: int, run: Callable[[str], dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """``run(name)`` for every name, ``rounds`` times: a round of every name, then the next, the order reversed every
    other round (so neither side always runs first, on a machine warming up or cooling down)."""
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else list(reversed(names)):
            results[name].append(run(name))
            print(name, results[name][-1], flush=True)
    return results
