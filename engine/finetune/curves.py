"""Fine-tuning curves: the validation metric against examples seen, one curve per run — the picture of
what pre-training buys (pretrained vs from scratch, all weights vs frozen).

They come from fine-tuning run folders (their metrics.jsonl) or from a curves file, a small JSON that
keeps only the curves of runs made elsewhere (the app ships one, recorded by bench/quality/finetune_quality.py,
so a talk can show the curves without fine-tuning for minutes first):

    {"task": "bbc-topics", "model": "bert-tiny", "metric": "accuracy", "made_by": "...",
     "runs": [{"label": "pretrained, every weight learns", "strategy": "full",
               "examples": [320, 640, ...], "values": [0.31, 0.52, ...]}, ...]}

No torch: the app reads them on its GUI thread.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine.checkpoints.shipped import DEFAULT_CHECKPOINTS
from engine.errors import CheckpointError

SHIPPED_CURVES = DEFAULT_CHECKPOINTS.parent / "curves"
MAX_CURVES_BYTES = 2_000_000
MAX_POINTS = 10_000
LABELS = {"full": "pretrained, every weight learns", "frozen": "pretrained, frozen (features only)",
          "scratch": "the same network from scratch (no pre-training)"}


@dataclass
class Curve:
    label: str
    strategy: str
    examples: list[float]  # examples seen at each validation
    values: list[float]  # the validation metric there

    @property
    def best(self) -> float:
        return max(self.values) if self.values else float("nan")


@dataclass
class FinetuneCurves:
    task: str
    model: str
    metric: str
    runs: list[Curve]
    made_by: str = ""  # the command that recorded them
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, ensure_ascii=False) + "\n"


def label_for(strategy: str) -> str:
    if strategy.startswith("top-"):
        return f"pretrained, the top {strategy[4:]} layers learn"
    return LABELS.get(strategy, strategy)


def curve_from_run(run_dir: str | Path) -> tuple[Curve, dict[str, Any]]:
    """A fine-tuning run folder's validation curve (examples = validation step × batch size), and what
    its config says (task, model, metric)."""
    from engine.training.events import EvalMetrics, RunStarted, read_metrics

    folder = Path(run_dir)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        spec = config["spec"]
        events = read_metrics(folder)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CheckpointError(f"{folder} is not a fine-tuning run folder ({e})") from None
    metric = str(next((ev.info.get("metric") for ev in events if isinstance(ev, RunStarted)), "") or "")
    batch = int(spec.get("batch_size", 32)) if isinstance(spec, dict) else 32
    strategy = str(spec.get("strategy", "full")) if isinstance(spec, dict) else "full"
    examples, values = [], []
    for ev in events:
        if isinstance(ev, EvalMetrics) and metric in ev.metrics:
            examples.append(float(ev.step * batch))
            values.append(float(ev.metrics[metric]))
    info = {"task": spec.get("task", "") if isinstance(spec, dict) else "",
            "model": spec.get("model", "") if isinstance(spec, dict) else "", "metric": metric}
    return Curve(label_for(strategy), strategy, examples, values), info


def curves_from_runs(run_dirs: list[str | Path], made_by: str = "") -> FinetuneCurves:
    """The curves of several fine-tuning runs of one task, overlaid."""
    runs, infos = [], []
    for run_dir in run_dirs:
        curve, info = curve_from_run(run_dir)
        runs.append(curve)
        infos.append(info)
    if not runs:
        raise CheckpointError("no fine-tuning runs to draw")
    first = infos[0]
    return FinetuneCurves(str(Path(str(first["task"])).name), str(Path(str(first["model"])).name),
                          str(first["metric"]), runs, made_by)


def shipped_curves() -> list[str]:
    """Names of the curves files shipped with the app (each reads with ``read_curves(name)``)."""
    return sorted(p.stem for p in SHIPPED_CURVES.glob("*.json"))


def curves_file(name_or_path: str | Path) -> Path:
    """A curves file by path, or by the name of one shipped with the app ("bbc-topics-bert-tiny")."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    shipped = SHIPPED_CURVES / f"{name_or_path}.json"
    if shipped.is_file():
        return shipped
    known = ", ".join(shipped_curves()) or "none"
    raise CheckpointError(f"no curves file {name_or_path} (shipped: {known})")


def read_curves(name_or_path: str | Path) -> FinetuneCurves:
    """A curves file (or a fine-tuning run folder), checked: every run a label and equal-length numbers."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return curves_from_runs([path])
    path = curves_file(name_or_path)
    try:
        if path.stat().st_size > MAX_CURVES_BYTES:
            raise CheckpointError(f"{path} is larger than {MAX_CURVES_BYTES // 1_000_000} MB: not a curves file")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CheckpointError(f"{path} is not a curves file ({e})") from None
    return check_curves(data, str(path))


def _numbers(value: Any, where: str) -> list[float]:
    if not isinstance(value, list) or len(value) > MAX_POINTS or not all(
            isinstance(x, int | float) and not isinstance(x, bool) and x == x for x in value):
        raise CheckpointError(f"{where} must be a list of at most {MAX_POINTS:,} numbers")
    return [float(x) for x in value]


def check_curves(data: Any, origin: str) -> FinetuneCurves:
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or not data["runs"]:
        raise CheckpointError(f"{origin} is not a curves file (it needs a non-empty list of 'runs')")
    runs = []
    for i, run in enumerate(data["runs"]):
        where = f"{origin}, run {i + 1}"
        if not isinstance(run, dict):
            raise CheckpointError(f"{where} is not an object")
        examples, values = _numbers(run.get("examples"), f"{where}: 'examples'"), _numbers(run.get("values"),
                                                                                          f"{where}: 'values'")
        if len(examples) != len(values):
            raise CheckpointError(f"{where}: 'examples' and 'values' differ in length")
        strategy = str(run.get("strategy", ""))
        runs.append(Curve(str(run.get("label") or label_for(strategy)), strategy, examples, values))
    text = {k: str(data.get(k, "")) for k in ("task", "model", "metric", "made_by")}
    return FinetuneCurves(text["task"], text["model"], text["metric"], runs, text["made_by"])
