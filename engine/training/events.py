"""Events yielded by ``engine.api.train``: plain frozen dataclasses, also written to metrics.jsonl."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class RunStarted:
    run_dir: str
    kind: str
    device: str
    total: float  # units of work for the whole run (words, tokens or steps)
    unit: str
    resumed_step: int = 0
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StepMetrics:
    step: int
    epoch: int
    progress: float  # 0..1
    loss: float
    lr: float
    throughput: float  # units per second
    unit: str
    elapsed_s: float
    eta_s: float


@dataclass(frozen=True)
class EvalMetrics:
    step: int
    metrics: dict[str, float]


@dataclass(frozen=True)
class CheckpointSaved:
    step: int
    path: str


@dataclass(frozen=True)
class RunFinished:
    status: str  # "completed" | "stopped" | "diverged" | "failed"
    step: int
    run_dir: str
    message: str = ""
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbePredictions:
    """What a model being fine-tuned says about the user's probe sentences at this step."""

    step: int
    texts: list[str]
    labels: list[str]  # the predicted label (tagging: the words with their tags)
    probabilities: list[float]  # of that label (tagging: the mean of the words' tag probabilities)


TrainEvent = RunStarted | StepMetrics | EvalMetrics | CheckpointSaved | ProbePredictions | RunFinished

_NAMES = {RunStarted: "started", StepMetrics: "step", EvalMetrics: "eval", CheckpointSaved: "checkpoint",
          ProbePredictions: "probes", RunFinished: "finished"}
_TYPES = {v: k for k, v in _NAMES.items()}


COUNTS = ("_scored", "_items", "words")  # how the metrics that count things are named (logged as floats)


def metrics_text(metrics: dict[str, Any], digits: int = 3) -> str:
    """Metrics as a person reads them: "mlm_accuracy 0.375, sense_pairs_scored 224" (a count logged as a float
    stays a count; what is not a number is left out)."""
    parts = []
    for name, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        whole = isinstance(value, int) or name.endswith(COUNTS)
        shown = f"{value:,.0f}" if whole and math.isfinite(value) else f"{value:.{digits}f}"
        parts.append(f"{name} {shown}")
    return ", ".join(parts)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN/inf
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def event_to_dict(event: TrainEvent) -> dict[str, Any]:
    return {"event": _NAMES[type(event)], **_clean(dataclasses.asdict(event))}


def event_from_dict(data: dict[str, Any]) -> TrainEvent:
    data = dict(data)
    cls = _TYPES[data.pop("event")]
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {k: (float("nan") if v is None and k in ("loss",) else v) for k, v in data.items() if k in names}
    return cls(**kwargs)


METRICS = "metrics.jsonl"  # a run folder's events, one JSON object per line


def read_metrics(run_dir: str | Path) -> list[TrainEvent]:
    """Re-read a run's metrics.jsonl (a finished run can be re-plotted from disk)."""
    path = Path(run_dir) / METRICS
    events = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                try:
                    events.append(event_from_dict(json.loads(line)))
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut short by a crash
    return events
