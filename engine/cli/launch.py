"""The command lines that start word2bert-train and word2bert-finetune as processes: a run's settings as flags,
the launcher of a source install or a packaged app, and the lowered priority of the app's background runs."""

from __future__ import annotations

from typing import Any


def cli_settings(kind: str, cfg: Any) -> list[str]:
    """The word2bert-train flags that reproduce the settings of ``cfg`` (a family's config dataclass)."""
    import dataclasses

    flags: list[str] = []
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        name = "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            flags.append(name if value else "--no-" + f.name.replace("_", "-"))
        elif value is not None:
            flags += [name, str(value)]
    return flags


def cli_launcher(command: str) -> list[str]:
    """The arguments after the Python executable that start ``word2bert-train`` (``command`` "train") or
    ``word2bert-finetune`` ("finetune") as a process; a packaged (frozen) app has no ``-m``: it runs
    its own executable with ``--train-cli`` / ``--finetune-cli`` (see explorer/__main__.py)."""
    import sys

    if command not in ("train", "finetune"):
        raise ValueError(f"unknown command {command!r}")
    if getattr(sys, "frozen", False):
        return [f"--{command}-cli"]
    return ["-m", "engine.cli" if command == "train" else "engine.cli.finetune"]


def background_launch(command: str, args: list[str]) -> tuple[str, list[str]]:
    """The program and its arguments that start ``word2bert-train`` (``command`` "train") or
    ``word2bert-finetune`` ("finetune") with ``args`` as a background process, as the app starts its runs: at a
    lower priority from its first instruction where POSIX's ``nice`` is at hand. ``--background`` lowers a
    run's priority as well, but only once Python has started and the command's modules are imported: 0.3-0.4 s
    of a core at the caller's own priority at each start, while the window had its own work to do (the chaos
    bench's stalls after a training's start, bench/robustness/CHAOS-HISTORY.md)."""
    import os
    import shutil
    import sys

    from engine.cli.runner import BACKGROUND_NICE

    program, arguments = sys.executable, [*cli_launcher(command), *args, "--background"]
    nice = shutil.which("nice") if os.name == "posix" else None
    if nice is None:
        return program, arguments
    return nice, ["-n", str(BACKGROUND_NICE), program, *arguments]

