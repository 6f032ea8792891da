"""Typed configuration: one dataclass per model family, plus the RunSpec that says what to train.

Configs are saved with the weights (config.json) and rebuilt from it; nothing lives in globals.
Field names of Word2VecConfig mirror gensim's ``Word2Vec`` arguments, with the same defaults.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

FORMAT_VERSION = 1


@dataclass
class NGramConfig:
    order: int = 3  # 1..5
    smoothing: str = "kneser-ney"  # "kneser-ney" (interpolated) or "laplace" (add-one)
    min_count: int = 2  # rarer words become <unk>
    lowercase: bool = True


@dataclass
class NNLMConfig:
    context: int = 4  # n-1 previous words (Bengio 2003 used n=5 or 6)
    dim: int = 60  # word feature dimension m
    hidden: int = 100  # tanh units h
    direct: bool = True  # direct connections W from embeddings to output
    min_count: int = 3
    max_vocab: int = 20000
    lowercase: bool = True
    epochs: int = 3
    batch_size: int = 512
    lr: float = 2e-3
    weight_decay: float = 0.0


@dataclass
class Word2VecConfig:
    sg: int = 0  # 0: CBOW, 1: skip-gram (gensim's name; the CLI says --arch)
    hs: int = 0  # 1: hierarchical softmax; 0: negative sampling
    negative: int = 5
    ns_exponent: float = 0.75
    window: int = 5
    vector_size: int = 100
    min_count: int = 5
    max_vocab: int | None = None
    sample: float = 1e-3
    alpha: float = 0.025
    min_alpha: float = 0.0001
    epochs: int = 5
    cbow_mean: int = 1
    lowercase: bool = True
    # fastText-style sub-words: character n-grams hashed into buckets (0 = off)
    subword_buckets: int = 0
    min_n: int = 3
    max_n: int = 6
    # batching (ours, not gensim's): pairs per step; groups of negative_group pairs share a pool of
    # shared_negatives noise words (see engine/models/word2vec.py)
    batch_pairs: int = 8192
    negative_group: int = 16
    shared_negatives: int = 16


@dataclass
class GloveConfig:
    vector_size: int = 100
    window: int = 10
    min_count: int = 5
    max_vocab: int | None = None
    lowercase: bool = True
    x_max: float = 100.0
    alpha: float = 0.75  # weighting exponent
    learning_rate: float = 0.05  # AdaGrad
    epochs: int = 25
    batch_size: int = 65536


MODEL_CONFIGS: dict[str, type] = {
    "ngram": NGramConfig,
    "nnlm": NNLMConfig,
    "word2vec": Word2VecConfig,
    "glove": GloveConfig,
}


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
    resume: bool = False
    mixed_precision: bool = True

    def __post_init__(self) -> None:
        if self.kind not in MODEL_CONFIGS:
            known = ", ".join(sorted(MODEL_CONFIGS))
            raise ValueError(f"unknown model kind '{self.kind}' (known: {known})")
        if self.model is None:
            self.model = MODEL_CONFIGS[self.kind]()
        elif isinstance(self.model, dict):
            self.model = config_from_dict(self.kind, self.model)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        return d


def config_from_dict(kind: str, data: dict[str, Any]) -> Any:
    """Rebuild a model config, refusing unknown fields (a sign of a foreign or newer file)."""
    cls = MODEL_CONFIGS[kind]
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"unknown {kind} settings: {', '.join(unknown)}")
    return cls(**data)


def config_to_json(obj: Any) -> str:
    return json.dumps(dataclasses.asdict(obj), indent=2, sort_keys=True)


def spec_from_dict(data: dict[str, Any]) -> RunSpec:
    data = dict(data)
    return RunSpec(**data)


def config_fields(kind: str) -> list[dataclasses.Field]:
    """The settings of a model kind, for generated CLIs and forms."""
    return list(dataclasses.fields(MODEL_CONFIGS[kind]))


__all__ = [
    "FORMAT_VERSION",
    "GloveConfig",
    "MODEL_CONFIGS",
    "NGramConfig",
    "NNLMConfig",
    "RunSpec",
    "Word2VecConfig",
    "config_fields",
    "config_from_dict",
    "config_to_json",
    "field",
    "spec_from_dict",
]
