"""Shared by the benches that compare two checkouts side by side (bench/speed/talk_build.py, model_change_cost.py,
action_gaps.py, zoom_lab.py, map_redraw.py, axis_switch.py, training_example.py): their command line, a bench's
measuring function run in a fresh process with another checkout's code, the rounds alternated between the two
checkouts, a checkout's label, and the table of their figures side by side.

The bench's own file is read by path in that process (the other checkout may not have it), so such a bench keeps
its module's top level to the standard library and imports this module inside its functions."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path


def run_in(checkout: Path, script: str, call: str, timeout: int = 1800) -> dict[str, list[float]]:
    """``call`` (say ``one(3, 0)``), a function of the bench file ``script``, run in a fresh offscreen process with
    ``checkout`` first on its path; what it returns (JSON)."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "QT_QPA_PLATFORM": "offscreen"}
    name = call.split("(", 1)[0]
    code = (f"import json, runpy, sys; sys.path.insert(0, {str(checkout)!r}); "
            f"{name} = runpy.run_path({script!r})[{name!r}]; print('RESULT', json.dumps({call}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{checkout}: {done.stderr.strip().splitlines()[-3:]}")
    return json.loads(lines[-1][len("RESULT "):])


def alternate(checkouts: list[Path], script: str, call: str, rounds: int) -> list[dict[str, list[float]]]:
    """``call`` run in each checkout ``rounds`` times, alternating (each run a fresh process); each checkout's
    figures pooled over its runs, by name. Prints the medians so far after each run."""
    results: list[dict[str, list[float]]] = [{} for _ in checkouts]
    for _ in range(rounds):
        for which, checkout in enumerate(checkouts):
            for key, values in run_in(checkout.resolve(), script, call).items():
                results[which].setdefault(key, []).extend(values)
            print(which, {k: round(statistics.median(v), 1) for k, v in results[which].items()}, flush=True)
    return results


def label(checkout: Path) -> str:
    """The checkout's commit, and whether its files differ from it."""
    def git(*words: str) -> str:
        return subprocess.run(["git", *words], cwd=checkout, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or checkout.name
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!*RESULTS.md")
    return f"`{commit}`" + (" with changes" if changed else "")


def side_by_side_parser(rounds: int = 2) -> argparse.ArgumentParser:
    """The command line such a bench starts from: the two checkouts and ``--rounds``; the bench adds its own."""
    p = argparse.ArgumentParser()
    p.add_argument("checkouts", nargs=2, type=Path, help="the code before and after (each a checkout's root)")
    p.add_argument("--rounds", type=int, default=rounds)
    return p


def side_by_side(args: argparse.Namespace, script: str, call: str) -> tuple[list[str], list[dict[str, list[float]]]]:
    """Each checkout's label and its figures: ``call`` of ``script`` run ``args.rounds`` times per checkout,
    alternating (``alternate``). The labels are read before the runs: writing the results changes a checkout."""
    names = [label(c) for c in args.checkouts]
    return names, alternate(args.checkouts, script, call, args.rounds)


def checkouts_said(args: argparse.Namespace) -> str:
    """The two checkouts and the rounds, as they were given on the command line."""
    return f"{' '.join(str(c) for c in args.checkouts)} --rounds {args.rounds}"


def spread(values: list[float], digits: int = 0) -> str:
    """"median / 90th percentile / worst" of ``values``."""
    ninetieth = sorted(values)[int(0.9 * (len(values) - 1))]
    return f"{statistics.median(values):.{digits}f} / {ninetieth:.{digits}f} / {max(values):.{digits}f}"


def ratio_table(first: str, names: list[str], results: list[dict[str, list[float]]], digits: int = 0) -> list[str]:
    """A markdown table: a row per figure (``first`` heads their column), each checkout's ``spread`` and the ratio
    of the medians, before over after."""
    lines = [f"| {first} | {names[0]} | {names[1]} | median ratio |", "|---|---:|---:|---:|"]
    for key in results[0]:
        old, new = results[0][key], results[1][key]
        lines.append(f"| {key} | {spread(old, digits)} | {spread(new, digits)} | "
                     f"{statistics.median(old) / statistics.median(new):.1f}× |")
    return lines
