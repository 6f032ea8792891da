"""Weight averaging: the uniform mean of the weights of several saves of one model — checkpoint averaging
(Vaswani et al. 2017 averaged a run's last checkpoints) and a "uniform soup" (Wortsman et al. 2022: models
fine-tuned from one pre-trained start averaged). Saves that started from one point lie in one basin of
the loss, and their mean often predicts held-out text as well as the best of them or better, for nothing
but the time to read them.

Only saves that share a start are averaged: an encoder adapted here (``mlm-head``, ``clm-head``: every such
run starts from its base encoder's weights) with runs of the same base, any other run with its own kept
checkpoints (``RUN/checkpoints/step-N``), and saves of one lineage of continued pretraining (``--init-from``:
a run with the save it went on from, or two runs that went on from one save). Two models trained from random
starts are refused: their units are not in the same order, and their mean is noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from engine.checkpoints.files import HISTORY
from engine.checkpoints.reading import read_config, read_tensors
from engine.errors import CheckpointError

SHARED_START = ("mlm-head", "clm-head")  # kinds whose every run starts from its base encoder's weights


def _run_of(folder: Path) -> Path:
    """The run a save belongs to: RUN for RUN and for RUN/checkpoints/step-N."""
    folder = folder.resolve()
    return folder.parent.parent if folder.parent.name == HISTORY else folder


def lineage(config: dict[str, Any], most: int = 32) -> set[str]:
    """The saves a save descends from by continued pretraining (``--init-from``), its own included, by save id: the
    save it went on from (its config.json's ``init_from_save``), and so on back through each one's folder
    (``init_from_folder``) as long as that folder still holds the save it names."""
    ids: set[str] = set()
    current: dict[str, Any] | None = config
    while current is not None and len(ids) < most:
        ids.add(str(current.get("save_id") or ""))
        parent, folder = str(current.get("init_from_save") or ""), current.get("init_from_folder")
        if not parent:
            break
        ids.add(parent)
        try:
            current = read_config(Path(str(folder))) if folder else None
        except CheckpointError:  # (gone, or another save there now: the lineage is known this far)
            break
        if current is not None and str(current.get("save_id") or "") != parent:
            break
    return ids - {""}


def check_shared_start(folders: Sequence[Path], configs: Sequence[dict[str, Any]]) -> None:
    """Refuse saves that cannot be averaged (another kind, another base, or no start in common)."""
    first, kind = folders[0], configs[0]["kind"]
    for folder, config in zip(folders[1:], configs[1:]):
        if config["kind"] != kind:
            raise CheckpointError(f"cannot average a {kind} ({first}) with a {config['kind']} ({folder})")
        if kind in SHARED_START:
            base, other = (c.get("model", {}).get("base") for c in (configs[0], config))
            if base != other:
                raise CheckpointError(f"cannot average encoders adapted from different bases: {base} ({first}) "
                                      f"and {other} ({folder})")
        elif _run_of(folder) != _run_of(first) and not lineage(config) & lineage(configs[0]):
            raise CheckpointError(
                f"{folder} and {first} are different {kind} runs: runs trained from random starts are not "
                "averaged (their units are in different orders); average a run with its own kept checkpoints "
                f"(RUN/{HISTORY}/step-N), or with the run it went on from (--init-from)")


def averaged_weights(folders: Sequence[str | Path]) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]]]:
    """The uniform mean (float32) of the saves' weights, and what each save was (path, steps), after checking
    they share a start and hold the same tensors in the same shapes."""
    paths = [Path(f) for f in folders]
    if len(paths) < 2:
        raise CheckpointError("averaging needs two saves or more")
    configs = [read_config(p) for p in paths]
    check_shared_start(paths, configs)
    total: dict[str, torch.Tensor] = {}
    for path, config in zip(paths, configs):
        tensors = read_tensors(path, config)
        if not total:
            total = {k: v.float().clone() for k, v in tensors.items()}
            continue
        if set(tensors) != set(total):
            odd = sorted(set(tensors) ^ set(total))
            raise CheckpointError(f"{path} holds other weights than {paths[0]} ({', '.join(odd[:3])}): "
                                  "a run that trained other layers cannot be averaged with it")
        for k, v in tensors.items():
            if tuple(v.shape) != tuple(total[k].shape):
                raise CheckpointError(f"{path}: {k} is {tuple(v.shape)}, {tuple(total[k].shape)} in {paths[0]}")
            total[k] += v.float()
    sources = [{"path": str(p), "trained_steps": int(c.get("trained_steps", 0) or 0)} for p, c in zip(paths, configs)]
    return {k: v / len(paths) for k, v in total.items()}, sources
