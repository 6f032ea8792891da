"""Checking a model config before anything is built from it: the settings a file may hold (types, ranges,
choices), what is wrong with a config in words, and whether this machine can hold the model it asks for."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

from engine.config.settings import CHOICES, MODEL_CONFIGS
from engine.families import FAMILIES, family

MAX_SETTING = 10**7  # no count in any config is this large (vocabularies, lengths, sizes, layers)


def _checked_value(kind: str, field: dataclasses.Field, value: Any) -> Any:
    """A setting read from a file, checked against the type of its default (ValueError naming it)."""
    default = field.default
    name = field.name
    if value is None and default is None:
        return None
    expected = int if default is None else type(default)
    if expected is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{kind} setting '{name}' must be true or false, not {value!r}")
    elif expected is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{kind} setting '{name}' must be a whole number, not {value!r}")
        if abs(value) > MAX_SETTING:
            raise ValueError(f"{kind} setting '{name}' is {value:,}: no model of this kind is that large")
    elif expected is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{kind} setting '{name}' must be a number, not {value!r}")
        value = float(value)
    elif expected is str and not isinstance(value, str):
        raise ValueError(f"{kind} setting '{name}' must be text, not {value!r}")
    return value


def config_from_dict(kind: str, data: Any) -> Any:
    """Rebuild a model config from a file's settings: unknown fields (a foreign or newer file), wrong types
    and impossible values are refused with a ``ValueError`` that names the setting — before anything is
    built from it."""
    if kind not in MODEL_CONFIGS:
        raise ValueError(f"unknown model kind {kind!r} (known: {', '.join(sorted(MODEL_CONFIGS))})")
    if not isinstance(data, dict):
        raise ValueError(f"the {kind} settings must be a JSON object, not {type(data).__name__}")
    cls = MODEL_CONFIGS[kind]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(str(k) for k in data if k not in fields)
    if unknown:
        raise ValueError(f"unknown {kind} settings: {', '.join(unknown)}")
    cfg = cls(**{name: _checked_value(kind, fields[name], value) for name, value in data.items()})
    problems = check_config(kind, cfg)
    if problems:
        raise ValueError(f"{kind} settings: " + "; ".join(problems))
    needed, memory = 4 * estimated_parameters(kind, cfg), machine_memory()
    if needed > memory:
        raise ValueError(f"this {kind} needs about {needed / 2**30:,.1f} GB for its weights alone; this machine "
                         f"has {memory / 2**30:,.1f} GB")
    return cfg


def estimated_parameters(kind: str, cfg: Any) -> int:
    """About how many weights a config asks for (its family's declaration says: engine.families)."""
    return family(kind).parameters(cfg)


def machine_memory() -> int:
    """Bytes of memory this machine has (16 GB when the system does not say)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 16 * 2**30


# the least each setting may be (anything not named here: >= 0)
_AT_LEAST_ONE = {"accumulate", "order", "min_count", "context", "dim", "hidden", "epochs", "batch_size", "window", "vector_size",
                 "batch_pairs", "negative_group", "shared_negatives", "min_n", "max_n", "vocab_size", "layers",
                 "heads", "intermediate", "max_len", "seq_len", "char_dim", "proj", "max_chars", "max_vocab"}
_POSITIVE = {"lr", "alpha", "learning_rate", "x_max", "temperature"}
_FILTERS = re.compile(r"^\s*\d+\s*:\s*\d+\s*(,\s*\d+\s*:\s*\d+\s*)*$")


def check_config(kind: str, cfg: Any) -> list[str]:
    """What is wrong with a model config, in words (empty when it can train)."""
    problems: list[str] = []
    for f in dataclasses.fields(cfg):
        value, name = getattr(cfg, f.name), f.name
        if value is None:
            continue
        if isinstance(value, bool) or name in CHOICES:
            if name in CHOICES and value not in CHOICES[name]:
                problems.append(f"{name} must be one of {', '.join(map(str, CHOICES[name]))}, not {value!r}")
        elif isinstance(value, (int, float)):
            if value != value:
                problems.append(f"{name} is not a number")
            elif name in _AT_LEAST_ONE and value < 1:
                problems.append(f"{name} must be at least 1 (it is {value})")
            elif name in _POSITIVE and value <= 0:
                problems.append(f"{name} must be above 0 (it is {value})")
            elif value < 0:
                problems.append(f"{name} cannot be negative (it is {value})")
    def get(name: str) -> Any:
        return getattr(cfg, name, None)

    if get("order") is not None and not 1 <= get("order") <= 5:
        problems.append("order must be 1 to 5")
    for name in ("dropout", "mask_prob", "sample"):
        if get(name) is not None and not 0 <= get(name) < 1:
            problems.append(f"{name} must be at least 0 and below 1 (it is {get(name)})")
    if get("mask_prob") == 0:
        problems.append("mask_prob must be above 0: with nothing masked BERT has nothing to learn")
    if get("heads") and get("hidden") and get("hidden") % get("heads"):
        problems.append(f"hidden ({get('hidden')}) must be a multiple of heads ({get('heads')})")
    if get("seq_len") and get("max_len") and get("seq_len") > get("max_len"):
        problems.append(f"seq_len ({get('seq_len')}) cannot exceed max_len ({get('max_len')})")
    if get("min_n") and get("max_n") and get("min_n") > get("max_n"):
        problems.append(f"min_n ({get('min_n')}) cannot exceed max_n ({get('max_n')})")
    if get("min_alpha") is not None and get("alpha") is not None and get("min_alpha") > get("alpha"):
        problems.append("min_alpha cannot exceed alpha")
    if isinstance(get("filters"), str) and not _FILTERS.match(get("filters")):
        problems.append(f"filters must look like '1:32,2:64' (width:count), not {get('filters')!r}")
    if get("sense_pairs") and get("sense_batch") is not None and get("sense_batch") < 2:
        problems.append("sense_batch must be at least 2 (the loss compares the pairs of a batch)")
    if get("sense_pairs") and get("sense_batch") and get("sense_batch") > get("batch_size"):
        problems.append(f"sense_batch ({get('sense_batch')}) cannot exceed batch_size ({get('batch_size')}): each "
                        "step's pairs ride with its masked-LM windows")
    if str(get("init_from") or "").strip() and str(get("init_embeddings") or "").strip():
        problems.append("init_from and init_embeddings: not both (a run that goes on from another takes its "
                        "embeddings from it)")
    if kind in FAMILIES:  # what only this family asks of its settings (its declaration says)
        problems += FAMILIES[kind].problems(cfg)
    return problems
