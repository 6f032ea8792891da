"""What a fine-tuning run is: the pre-trained model, the task, the strategy and the optimisation settings.

Light on purpose (no torch): the app builds and checks specs on its GUI thread.

Strategies (the seed lectures' "frozen features vs fine-tuning", and GPT Table 5's ablation):
    full      every weight learns (BERT/GPT fine-tuning)
    frozen    the encoder is fixed, only the head (and ELMo's scalar mix) learns: feature-based, as ELMo
    top-N     the top N layers and the head learn; the embeddings and the layers below stay frozen
    scratch   the same architecture from random weights: what the task gets without pre-training
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

STRATEGIES = ("full", "frozen", "top-N", "scratch")
_TOP = re.compile(r"^top-(\d+)$")
DEFAULT_LR = {"frozen": 1e-3}  # the others: 2e-4 (tiny models; BERT-base prefers 2e-5 to 5e-5)


@dataclass
class FinetuneSpec:
    model: str  # a run folder, a Hugging Face folder, or a shipped default ("bert-tiny")
    task: str  # bbc-topics | polarity | twitter-ner | a CSV/TSV, CoNLL or SQuAD-style JSON file
    out: str
    strategy: str = "full"  # full | frozen | top-N | scratch
    validation: str | None = None  # a validation file (else a fixed split of the task)
    epochs: int = 3
    lr: float | None = None  # None: 1e-3 for frozen, 2e-4 otherwise
    batch_size: int = 32
    max_len: int = 128  # tokens per example; longer ones are truncated (and counted)
    warmup: float = 0.1  # fraction of the steps with linear warmup, then linear decay
    weight_decay: float = 0.01
    clip: float = 1.0
    dropout: float = 0.1  # before the head
    lm_weight: float = 0.0  # GPT's auxiliary LM loss weight λ (GPT used 0.5); 0 = off
    eval_every: int = 0  # steps between validations (0: about 8 per run)
    log_every: int = 5  # steps between StepMetrics events
    probes: list[str] = field(default_factory=list)  # sentences predicted during training
    probe_every: int = 0  # steps (0: at each validation)
    max_train: int | None = None  # use only the first N training examples (quick runs)
    max_steps: int | None = None
    seed: int = 0
    device: str | None = None
    resume: bool = False
    mixed_precision: bool = True

    def learning_rate(self) -> float:
        return self.lr if self.lr is not None else DEFAULT_LR.get(self.strategy, 2e-4)

    def top_layers(self) -> int | None:
        match = _TOP.match(self.strategy)
        return int(match.group(1)) if match else None

    def problems(self) -> list[str]:
        out = []
        if self.strategy not in ("full", "frozen", "scratch") and self.top_layers() is None:
            out.append(f"strategy must be full, frozen, scratch or top-N (N layers learn), not {self.strategy!r}")
        for name in ("epochs", "batch_size", "max_len", "log_every"):
            if getattr(self, name) < 1:
                out.append(f"{name} must be at least 1")
        if self.max_len < 8:
            out.append("max_len must be at least 8 tokens")
        if self.lr is not None and not self.lr > 0:
            out.append("lr must be above 0")
        if not 0 <= self.warmup < 1:
            out.append("warmup is a fraction of the steps: at least 0 and below 1")
        if not 0 <= self.dropout < 1:
            out.append("dropout must be at least 0 and below 1")
        if self.lm_weight < 0:
            out.append("lm_weight cannot be negative")
        if self.probe_every < 0 or self.eval_every < 0:
            out.append("probe_every and eval_every cannot be negative")
        if self.max_steps is not None and self.max_steps < 1:
            out.append("max_steps must be at least 1")
        return out

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FinetuneSpec:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
