"""The seam between the engine and everything else (the explorer, the CLI, outside checks).

Plain data in, plain data out: numpy arrays and frozen dataclasses on the CPU, never tensors.

    handle = load("runs/w2v")             # a run folder, "glove-6b-50d", or a word2vec-format file
    handle.static_neighbours("bank", 10)  # -> [Neighbour(word, similarity), ...]
    for event in train(RunSpec("word2vec", out="runs/w2v")): ...
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cancel import cancellable
from engine.cli.launch import background_launch, cli_launcher, cli_settings
from engine.config.run_spec import RunSpec
from engine.config.settings import (
    BertConfig,
    ElmoConfig,
    GloveConfig,
    GPTConfig,
    NGramConfig,
    NNLMConfig,
    Word2VecConfig,
    model_config,
)
from engine.data.function_words import is_function_word
from engine.data.keyed_vectors import SEEN_AT_LEAST
from engine.data.text import word_spans, word_tokenize
from engine.errors import (
    Cancelled,
    CheckpointError,
    CorpusError,
    InputError,
    SaveError,
    UnknownWord,
    Unsupported,
    Word2BertError,
)
from engine.finetune.curves import (
    Curve,
    FinetuneCurves,
    curves_from_runs,
    read_curves,
    shipped_curves,
)
from engine.finetune.spec import STRATEGIES, FinetuneSpec
from engine.handles.continuation import NO_REPEAT
from engine.handles.continuation import TOP_P as SAMPLING_TOP_P
from engine.handles.history import (
    HELD_OUT_SCORES,
    KeptCheckpoint,
    run_history,
    tokens_seen,
    trainer_log,
    trainer_progress,
    trainer_saved_step,
)
from engine.handles.load import (
    BUILTIN_MODELS,
    catalog,
    default_checkpoints,
    load,
    loaded_name,
    model_names,
    preferred_models,
    sense_layer,
)
from engine.handles.protocol import ModelHandle
from engine.inspection.attention_stats import (
    STATISTICS,
    HeadStats,
    average_heads,
    corpus_head_table,
    downsample,
    head_table,
    rollout,
)
from engine.inspection.history_scores import checkpoint_scores, checkpoint_settling
from engine.inspection.lab import (
    causal_trace,
    direct_effects,
    head_ablation,
    head_positions,
    lens_grid,
    mlp_neurons,
    neuron_examples,
    token_attribution,
)
from engine.inspection.layer_similarity import LayerSimilarity, forget_read_words, layer_similarity
from engine.inspection.word_neurons import word_neurons
from engine.lab_results import (
    ATTRIBUTION_METHODS,
    LENS_MEASURES,
    Attribution,
    CausalTrace,
    DirectEffects,
    HeadAblation,
    HeadPositions,
    LensGrid,
    MlpNeurons,
    NeuronExample,
    NeuronExamples,
    WordNeurons,
)
from engine.query_threads import long_job_threads_here, one_thread_here
from engine.results import (
    Answer,
    AttentionMaps,
    Capability,
    Classification,
    ContextVectors,
    LogitLens,
    MaskCandidates,
    Neighbour,
    SentenceScore,
    Tagging,
    TokenCandidates,
)
from engine.training.continued import (
    continuable,
    continuable_family,
    kept_settings,
    said_settings,
    source_problem,
)
from engine.training.events import (
    METRICS,
    CheckpointSaved,
    EvalMetrics,
    ProbePredictions,
    RunFinished,
    RunStarted,
    StepMetrics,
    TrainEvent,
    metrics_text,
)
from engine.yield_points import hold_workers, release_workers, yield_at_modules, yield_point

if TYPE_CHECKING:  # resolved lazily by __getattr__ below (they import torch)
    from engine.inspection.bert_example import TrainingExample, bert_training_example
    from engine.inspection.corpus_index import CorpusIndex, Occurrence, build_corpus_index
    from engine.inspection.occurrences import (
        WordIndex,
        WordOccurrences,
        word_index,
        word_occurrences,
    )
    from engine.inspection.projection import OccurrenceMap, occurrence_map

VECTOR_SUFFIXES = {".txt", ".vec", ".w2v", ".bin", ".gz"}


def __getattr__(name: str) -> object:
    """Heavy names (they import torch) resolve on first use, so ``import engine.api`` stays light."""
    if name in ("CorpusIndex", "Occurrence", "build_corpus_index"):
        from engine.inspection import corpus_index

        return getattr(corpus_index, name)
    if name in ("TrainingExample", "bert_training_example"):
        from engine.inspection import bert_example

        return getattr(bert_example, name)
    if name in ("WordIndex", "WordOccurrences", "word_index", "word_occurrences"):
        from engine.inspection import occurrences

        return getattr(occurrences, name)
    if name in ("OccurrenceMap", "occurrence_map"):
        from engine.inspection import projection

        return getattr(projection, name)
    raise AttributeError(f"module 'engine.api' has no attribute {name!r}")


@dataclass(frozen=True)
class Setting:
    """One setting of a model family, for generated forms: ``type`` is bool, int, float or str."""

    name: str
    type: str
    value: Any  # the current value (of the preset, when one was given)
    optional: bool  # None is allowed (e.g. max_vocab: no cap)
    choices: tuple[Any, ...]  # empty: any value of the type
    help: str
    choice_names: tuple[str, ...] = ()  # how to show each choice


def model_settings(kind: str, preset: str | None = None, device: str | None = None) -> list[Setting]:
    """Every setting of a model family with its value under ``preset`` on a ``device`` of that type
    ("cuda", "mps", "cpu"; None: the CPU's values), its type, choices and help."""
    import dataclasses

    from engine.config.settings import CHOICE_NAMES, CHOICES, MODEL_CONFIGS, field_help
    from engine.families import device_settings

    cfg = model_config(kind, preset, **device_settings(kind, device))
    help_text = field_help(kind)
    out = []
    for f in dataclasses.fields(MODEL_CONFIGS[kind]):
        default = f.default
        type_name = type(default).__name__ if default is not None else "int"
        choices = CHOICES.get(f.name, ())
        names = tuple((f"{c}: {CHOICE_NAMES[f.name][c]}" if c != "" else CHOICE_NAMES[f.name][c])  # "" reads as its name
                      if f.name in CHOICE_NAMES else str(c) for c in choices)
        out.append(Setting(f.name, type_name, getattr(cfg, f.name), default is None, choices,
                           help_text.get(f.name, ""), names))
    return out


def check_settings(kind: str, settings: dict[str, Any]) -> list[str]:
    """What is wrong with these settings of a model family, in words (empty: they can train)."""
    from engine.config.checks import check_config

    settings = dict(settings)
    preset = settings.pop("preset", None)
    try:
        cfg = model_config(kind, preset, **settings)
    except ValueError as e:
        return [str(e)]
    return check_config(kind, cfg)


def model_presets(kind: str) -> list[str]:
    """The size presets of a model family ("tiny", "small", "base"; empty when it has none)."""
    from engine.config.settings import PRESETS

    return list(PRESETS.get(kind, {}))


def model_kinds() -> list[str]:
    """The trainable families, in the order of the lineage (engine.families declares them)."""
    from engine.families import FAMILIES

    return list(FAMILIES)


def default_steps(kind: str) -> int:
    """The step cap a family's training opens with in the app (its declaration says); 0: whole epochs."""
    from engine.families import family

    return family(kind).default_steps


def corpora() -> list[str]:
    from engine.data.corpora import corpus_names

    return corpus_names()


def sense_chance() -> float:
    """The sense-separation score of guessing (the Run history draws it as its chance line)."""
    from engine.inspection.quality import sense_chance as chance

    return chance()


def cache_folder() -> Path:
    """Where word2bert keeps what it builds once (``$WORD2BERT_CACHE`` or the platform's cache folder)."""
    from engine.data.cache import cache_dir

    return cache_dir()


def clear_cache() -> tuple[int, int]:
    """Empty the cache folder: (entries removed, bytes freed). Everything is built again when next needed."""
    from engine.data.cache import clear_cache as clear

    return clear()


def trained_text(info: dict[str, Any]) -> str:
    """What a run was trained on, in a few words (a handle's ``info`` or a run's config): the default
    corpus with the sources it had then, or a file's name."""
    from engine.data.corpora import corpus_label

    return corpus_label(info)


def corpus_sample(corpus: str = "default", n: int = 200, part: str = "heldout") -> list[str]:
    """``n`` sentences spread evenly over a corpus part (for statistics over "a sample of the corpus")."""
    from engine.data.corpora import spread_sample

    return spread_sample(corpus, n, part)


def runs_folder() -> Path:
    """Where the app puts the runs it starts (the user data folder, or $WORD2BERT_RUNS)."""
    import os

    override = os.environ.get("WORD2BERT_RUNS")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_data_dir("word2bert")) / "runs"


def event_from_json(line: str) -> TrainEvent:
    """One line of ``word2bert-train --json-events`` (or of metrics.jsonl) back into an event."""
    import json

    from engine.training.events import event_from_dict

    return event_from_dict(json.loads(line))


def train_cli(argv: list[str]) -> int:
    """``word2bert-train`` with these arguments as a process's whole work (the packaged app runs its training
    processes this way): a Ctrl-C while it starts is caught, as by the console script."""
    from engine.cli.runner import catch_sigint_early
    from engine.cli.train import train_main

    catch_sigint_early("--json-events" in argv)
    return train_main(argv)


def finetune_cli(argv: list[str]) -> int:
    """``word2bert-finetune`` with these arguments as a process's whole work (the packaged app runs
    fine-tuning processes as itself): a Ctrl-C while it starts is caught, as by the console script."""
    from engine.cli.finetune import finetune_main
    from engine.cli.runner import catch_sigint_early

    catch_sigint_early("--json-events" in argv)
    return finetune_main(argv)


def release_memory() -> bool:
    """Return the allocator's freed memory to the system after a query (glibc; a no-op elsewhere)."""
    from engine.device import release_memory as release

    return release()


def warm_up_in_background() -> Any:
    """Compile word2vec's CPU kernel into numba's cache in a separate low-priority process (``python -m
    engine.cli.warm``), so that the first word2vec run after installing does not spend 15 s compiling.
    Returns the process (None in a packaged app, which has no source files to cache a compilation for).
    It needs nothing from the caller and ends by itself."""
    import subprocess
    import sys

    if getattr(sys, "frozen", False):
        return None
    return subprocess.Popen([sys.executable, "-m", "engine.cli.warm"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def device_settings(kind: str, device: str | None) -> dict[str, Any]:
    """The settings a fresh run of ``kind`` trains with on a device of this type unless given (a GPU's
    bigger steps: ELMo's batch and rate on CUDA); empty where the family's defaults hold."""
    from engine.families import device_settings as for_device

    return for_device(kind, device)


def device_type() -> str:
    """The type of the device training and inference use here: "cuda", "mps" or "cpu" (imports torch:
    call it off the GUI thread)."""
    from engine.device import pick_device

    return pick_device().type


def device_summary() -> str:
    """The device training and inference use here, in words (imports torch: call it off the GUI thread)."""
    from engine.device import device_name, pick_device

    return device_name(pick_device())


def train(spec: RunSpec, *, stop: threading.Event | None = None) -> Iterator[TrainEvent]:
    """Train a model; yields events (StepMetrics every ``spec.log_every`` steps, EvalMetrics,
    CheckpointSaved) and last a RunFinished. Setting ``stop`` saves a resumable checkpoint and ends."""
    from engine.training.loop import train as _train

    return _train(spec, stop, load=load)


def describe_run(run_dir: str | Path) -> str:
    """One line about a run folder (kind, preset, corpus, steps, last metrics) without loading weights."""
    from engine.checkpoints.reading import read_config
    from engine.data.corpora import corpus_label

    cfg = read_config(run_dir)
    model = cfg.get("model") or {}
    parts = [str(cfg.get("kind", "?")) + (f" {model['preset']}" if model.get("preset") else "")]
    if cfg.get("corpus"):
        parts.append(f"corpus {corpus_label(cfg)}")
    if cfg.get("trained_steps"):
        earlier = f" on from {cfg['init_from']} ({int(cfg.get('init_from_steps') or 0):,} before)" \
            if cfg.get("init_from") else ""
        parts.append(f"{cfg['trained_steps']:,} steps{earlier}")
    metrics = cfg.get("metrics") or {}
    parts += [f"{k} {v:.3g}" for k, v in list(metrics.items())[:2] if isinstance(v, (int, float))]
    return ", ".join(parts)


def finetune(spec: Any, *, stop: threading.Event | None = None) -> Iterator[TrainEvent]:
    """Fine-tune a pre-trained model on a task (a ``FinetuneSpec``); the same events as ``train`` plus
    ``ProbePredictions``. The run folder keeps the best validation checkpoint and loads with ``load``."""
    from engine.finetune.recipe import finetune as _finetune

    return _finetune(spec, stop, load=load)


def finetune_report(run_dir: str | Path) -> dict[str, Any]:
    """The evaluation of a fine-tuned run's best checkpoint: labels, metrics, and the confusion matrix
    (classification), per-type F1 (tagging) or example answers (spans)."""
    from engine.finetune.predict import read_report

    return read_report(run_dir)


def finetune_tasks() -> dict[str, str]:
    """The built-in fine-tuning datasets: name -> what it is."""
    from engine.data.tasks import builtin_tasks

    return builtin_tasks()


def task_preview(name_or_path: str, validation: str | None = None) -> Any:
    """Load a task's data (raises ``DataError`` with the reason): family, labels, counts, a preview."""
    from engine.data.tasks import load_task

    return load_task(name_or_path, validation)


def read_metrics(run_dir: str | Path) -> list[TrainEvent]:
    from engine.training.events import read_metrics as _read

    return _read(run_dir)


__all__ = [
    "SAMPLING_TOP_P",
    "NO_REPEAT",
    "METRICS",
    "SEEN_AT_LEAST",
    "AttentionMaps", "BUILTIN_MODELS", "Capability", "MaskCandidates", "TokenCandidates", "CheckpointError", "SaveError", "CheckpointSaved", "ContextVectors", "CorpusError",
    "BertConfig", "ElmoConfig", "EvalMetrics", "GPTConfig", "GloveConfig", "InputError", "ModelHandle", "NGramConfig", "NNLMConfig", "Neighbour",
    "RunFinished", "RunSpec", "RunStarted", "SentenceScore", "StepMetrics", "TrainEvent", "UnknownWord",
    "Unsupported", "Word2BertError", "Word2VecConfig", "continuable", "continuable_family", "default_checkpoints", "kept_settings", "said_settings", "source_problem", "describe_run", "load", "read_metrics", "metrics_text", "train",
    "word_spans", "word_tokenize", "is_function_word", "Cancelled", "CorpusIndex", "Occurrence", "OccurrenceMap", "build_corpus_index",
    "occurrence_map", "WordIndex", "WordOccurrences", "word_index", "word_occurrences", "STATISTICS", "HeadStats", "average_heads", "corpus_head_table", "downsample", "head_table", "rollout",
    "TrainingExample", "bert_training_example", "finetune", "finetune_report", "finetune_tasks", "task_preview",
    "FinetuneSpec", "ProbePredictions", "Classification", "LogitLens", "LensGrid", "CausalTrace", "LENS_MEASURES",
    "lens_grid", "causal_trace", "token_attribution", "Attribution", "head_ablation", "HeadAblation", "direct_effects", "DirectEffects", "mlp_neurons", "MlpNeurons", "neuron_examples", "NeuronExamples", "NeuronExample", "word_neurons", "WordNeurons", "head_positions", "HeadPositions", "ATTRIBUTION_METHODS", "LayerSimilarity", "layer_similarity", "forget_read_words", "Tagging", "Answer", "STRATEGIES", "corpus_sample", "model_config", "model_settings", "check_settings", "Setting", "model_kinds", "model_presets", "corpora", "runs_folder", "device_summary", "device_settings", "device_type", "one_thread_here", "long_job_threads_here", "event_from_json", "cli_settings", "train_cli", "finetune_cli", "cli_launcher", "background_launch", "catalog", "preferred_models", "sense_layer", "model_names", "loaded_name", "release_memory",
    "HELD_OUT_SCORES", "KeptCheckpoint", "run_history", "tokens_seen", "trainer_log", "trainer_progress", "trainer_saved_step", "checkpoint_scores", "checkpoint_settling",
    "cancellable", "Curve", "FinetuneCurves", "curves_from_runs", "read_curves", "shipped_curves",
    "hold_workers", "release_workers", "yield_at_modules", "yield_point",
]
