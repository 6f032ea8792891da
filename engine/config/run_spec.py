"""What one training run is: its model family and settings, corpus, device, budget and whether it resumes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from engine.config.checks import check_config, config_from_dict
from engine.config.settings import MODEL_CONFIGS


@dataclass
class RunSpec:
    """Everything needed to start (or resume) one training run."""

    kind: str
    out: str
    corpus: str = "default"
    device: str | None = None  # None/"auto": cuda > mps > cpu
    seed: int = 0
    model: Any = None  # a *Config dataclass for ``kind``; defaults when None
    log_every: int = 50  # steps between StepMetrics events
    checkpoint_every: int = 0  # steps; 0 = end of each epoch only
    max_steps: int | None = None
    max_words: int | None = None  # cap on corpus words read (quick runs, tests)
    max_minutes: float | None = None  # stop resumably (as Stop does) after this much time
    budget_clock: str = "wall"  # what max_minutes counts: "wall" time or the process's own "cpu" time
    budget_schedule: bool = False  # the learning rate decays to 0 when max_minutes is spent (Cramming)
    resume: bool = False
    mixed_precision: bool = True
    compile: bool = False  # torch.compile the model the steps run (a GPU's speed-up; the first steps wait for it)

    def __post_init__(self) -> None:
        if self.kind not in MODEL_CONFIGS:
            known = ", ".join(sorted(MODEL_CONFIGS))
            raise ValueError(f"unknown model kind '{self.kind}' (known: {known})")
        if self.model is None:
            self.model = MODEL_CONFIGS[self.kind]()
        elif isinstance(self.model, dict):
            self.model = config_from_dict(self.kind, self.model)
        problems = check_config(self.kind, self.model)
        if self.max_minutes is not None and not (isinstance(self.max_minutes, (int, float)) and 0 < self.max_minutes < 1e6):
            problems.append(f"max minutes must be a positive number of minutes, not {self.max_minutes!r}")
        for name, value, least in (("max steps", self.max_steps, 1), ("max words", self.max_words, 1),
                                   ("log every", self.log_every, 1), ("checkpoint every", self.checkpoint_every, 0)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < least):
                problems.append(f"{name} must be a whole number of at least {least}, not {value!r}")
        if self.budget_schedule and not self.max_minutes:
            problems.append("a learning rate that follows the time budget needs a budget (max minutes)")
        if self.budget_clock not in ("wall", "cpu"):
            problems.append(f"the budget clock is 'wall' or 'cpu', not {self.budget_clock!r}")
        if problems:
            raise ValueError(f"{self.kind} settings: " + "; ".join(problems))

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        return d
