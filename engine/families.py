"""Every model family, declared once (as Hugging Face's ``CONFIG_MAPPING`` declares a model type once):
its settings dataclass, its pretraining run, its loader and what its settings ask of memory. The training
loop, the loader, the config checks, the API and the CLI read ``FAMILIES``; adding a family is its
network, its run, its loader and one ``Family`` here (or ``register`` from outside the engine).

The run and the loader live in layers above this one (``engine.training``, ``engine.handles``): they are
named as ``"module:function"`` and imported when first asked for, so that this module, like
``engine.config.settings`` beside it, imports nothing above it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.config.settings import (
    MODEL_CONFIGS,
    BertConfig,
    ClmHeadConfig,
    ElmoConfig,
    GloveConfig,
    GPTConfig,
    MlmHeadConfig,
    NGramConfig,
    NNLMConfig,
    TunedLensConfig,
    Word2VecConfig,
)


def _no_weights(cfg: Any) -> int:
    return 0


def _no_problems(cfg: Any) -> list[str]:
    return []


def _ngram_problems(cfg: Any) -> list[str]:
    if cfg.prune > 1 and cfg.smoothing != "kneser-ney":
        return ["prune is for Kneser-Ney smoothing (add-one gives a pruned n-gram's share to no one)"]
    return []


@dataclass(frozen=True)
class Option:
    """A name for a combination of settings, as a family's users say it (word2vec's ``--arch skipgram``
    is ``sg=1``): each value the option takes, and the settings it stands for."""

    help: str
    values: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Family:
    """One model family. ``run`` and ``load`` name a function as ``"module:function"``: the run generator
    (``TrainContext -> Iterator[TrainEvent]``) and the loader (``(run folder, config.json) -> ModelHandle``).
    ``parameters``: about how many weights a config of it asks for (0 where vocabulary-sized tables come
    from the files, not the settings), checked against the machine's memory before anything is built."""

    kind: str
    config: type
    run: str
    load: str
    parameters: Callable[[Any], int] = _no_weights
    description: str = ""
    problems: Callable[[Any], list[str]] = _no_problems  # what only this family asks of its settings
    options: Mapping[str, Option] = field(default_factory=dict)  # the CLI's names for settings
    aliases: Mapping[str, str] = field(default_factory=dict)  # other CLI flags for a setting (--dim: vector_size)
    # the step cap the app's Train tab opens with; 0: whole epochs (a family that trains an epoch in seconds
    # to a minute here, where 300 steps would stop it before its vectors mean anything)
    default_steps: int = 300
    # "module:function" answering whether a run can train on the CPU without importing torch here
    # (word2vec's compiled kernel: numba installed); empty: never
    without_torch: str = ""
    # "module:function" writing a run as a transformers model: (config, tensors, tokenizer) -> (model,
    # state dict, tokenizer); empty: the family does not export (word2bert-export --hf)
    to_transformers: str = ""
    # "module:NAME" of its EncoderMaker (engine.finetune.encoders): the network as fine-tuning sees it,
    # from a loaded model or rebuilt from a fine-tuned run; empty: not fine-tunable
    encoder: str = ""
    # the weights a slim copy keeps (word2vec: its vectors, not its training matrices); None: all of them
    inference_weights: Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]] | None = None
    # a slim copy's floating-point weights in fp16 (False: as saved; an n-gram's back-off weights are
    # probabilities' shares, to keep every distribution summing to one)
    slim_fp16: bool = True
    # settings a fresh run trains with on a CUDA GPU unless the user gives them: the defaults are the CPU's
    # choice, and a GPU wants more work per step (each chosen by a declared rule: bench/RESULTS.md, GPU)
    on_gpu: Mapping[str, Any] = field(default_factory=dict)
    # the settings that shape its weights and vocabulary: a run that goes on from another's (``init_from``)
    # takes them from that run; empty: it cannot go on from another run that way
    architecture: tuple[str, ...] = ()
    # how it learned (its objective and the windows it read): a run that goes on from another's keeps the
    # earlier run's values of these unless it is given its own (the CLI's flags, the app's form)
    objective: tuple[str, ...] = ()

    def encoders(self) -> Any:
        return _resolve(self.encoder)

    def exporter(self) -> Callable[..., Any]:
        return _resolve(self.to_transformers)

    def trains_without_torch(self) -> bool:
        return bool(self.without_torch) and bool(_resolve(self.without_torch)())

    def run_generator(self) -> Callable[..., Any]:
        return _resolve(self.run)

    def loader(self) -> Callable[..., Any]:
        return _resolve(self.load)


def _resolve(reference: str) -> Callable[..., Any]:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def _get(cfg: Any, name: str) -> int:
    return int(getattr(cfg, name, 0) or 0)


def _transformer_weights(cfg: Any) -> int:
    h = _get(cfg, "hidden")
    return (_get(cfg, "vocab_size") * h + _get(cfg, "max_len") * h
            + _get(cfg, "layers") * (4 * h * h + 2 * h * _get(cfg, "intermediate")))


def _elmo_weights(cfg: Any) -> int:
    proj, hidden = _get(cfg, "proj"), _get(cfg, "hidden")
    return 2 * _get(cfg, "layers") * 4 * hidden * (proj + hidden) + _get(cfg, "max_vocab") * proj


def _nnlm_weights(cfg: Any) -> int:
    return _get(cfg, "context") * _get(cfg, "dim") * _get(cfg, "hidden")


def _word2vec_problems(cfg: Any) -> list[str]:
    if not cfg.hs and not cfg.negative:
        return ["negative must be at least 1 with negative sampling (or set hs=1)"]
    return []


def _bert_problems(cfg: Any) -> list[str]:
    problems = []
    if cfg.seq_len is not None and cfg.seq_len < 8:
        problems.append("seq_len must be at least 8 for BERT ([CLS] A [SEP] B [SEP])")
    if str(cfg.init_from or "").strip() and str(cfg.teacher or "").strip():
        problems.append("init_from and teacher: not both (a student reads in its teacher's vocabulary, a run that "
                        "goes on from another in that run's)")
    return problems


def _head_problems(cfg: Any) -> list[str]:
    problems = []
    if not str(cfg.base or "").strip():
        problems.append("base must name the encoder to give a language-model head (e.g. all-minilm-l6-v2)")
    if cfg.seq_len is not None and cfg.seq_len < 8:
        problems.append("seq_len must be at least 8")
    return problems


def _lens_problems(cfg: Any) -> list[str]:
    problems = []
    if not str(cfg.base or "").strip():
        problems.append("base (--model) must name the language model the lens reads (e.g. minilm-mlm)")
    if cfg.seq_len < 4:
        problems.append("seq_len must be at least 4")
    if cfg.positions < 1:
        problems.append("positions must be at least 1")
    return problems


def _word2vec_inference(config: Mapping[str, Any], tensors: Mapping[str, Any]) -> dict[str, Any]:
    """The vectors (and syn0 where sub-words spell unseen words): syn1 only trains."""
    subwords = bool(config.get("model", {}).get("subword_buckets"))
    return {k: v for k, v in tensors.items() if k == "vectors" or (k == "syn0" and subwords)}


_WORD2VEC_OPTIONS = {
    "arch": Option("cbow (default) or skipgram", {"cbow": {"sg": 0}, "skipgram": {"sg": 1}}),
    "loss": Option("ns: negative sampling (default); hs: hierarchical softmax", {"ns": {"hs": 0}, "hs": {"hs": 1}}),
}

_TRANSFORMER = ("preset", "vocab_size", "hidden", "layers", "heads", "intermediate", "max_len", "lowercase")
_LEARNED = ("seq_len", "dropout")  # what every pretraining family's objective keeps
_DIM = {"dim": "vector_size"}  # gensim's name, and the word2vec tool's -size, as the issue spelled it
_ENCODERS = "engine.finetune.encoders"
_STATIC_RUNS, _CONTEXTUAL_RUNS, _ADAPT_RUNS = ("engine.training.static_runs", "engine.training.contextual_runs",
                                               "engine.training.adapt_runs")

# in the order of the lineage: the order the app and the CLI list them in
FAMILIES: dict[str, Family] = {f.kind: f for f in (
    Family("ngram", NGramConfig, f"{_STATIC_RUNS}:run_ngram", "engine.handles.static:load_ngram",
           description="n-gram language model (Laplace or Kneser-Ney)", default_steps=0, problems=_ngram_problems,
           slim_fp16=False),
    Family("nnlm", NNLMConfig, f"{_STATIC_RUNS}:run_nnlm", "engine.handles.static:load_nnlm", _nnlm_weights,
           description="Bengio's neural language model"),
    Family("word2vec", Word2VecConfig, f"{_STATIC_RUNS}:run_word2vec", "engine.handles.static:load_word2vec",
           description="word2vec: skip-gram or CBOW, negative sampling or hierarchical softmax",
           problems=_word2vec_problems, options=_WORD2VEC_OPTIONS, aliases=_DIM, default_steps=0,
           without_torch="engine.models.word2vec.cpu:available", inference_weights=_word2vec_inference),
    Family("glove", GloveConfig, f"{_STATIC_RUNS}:run_glove", "engine.handles.static:load_glove",
           description="GloVe: global co-occurrence vectors", aliases=_DIM, default_steps=0),
    Family("elmo", ElmoConfig, f"{_CONTEXTUAL_RUNS}:run_elmo", "engine.handles.elmo:load_elmo", _elmo_weights,
           description="ELMo: character CNN and bidirectional LSTM language models",
           encoder=f"{_ENCODERS}:ELMO_ENCODER",
           # 40 s on an H200, held-out perplexity: 512 windows at 1e-3 227, 32 at 5e-4 408, 2048 at 2e-3 392
           on_gpu={"batch_size": 512, "lr": 1e-3},
           architecture=("preset", "char_dim", "filters", "highway", "proj", "hidden", "layers", "max_chars",
                         "min_count", "max_vocab", "lowercase"), objective=_LEARNED),
    Family("gpt", GPTConfig, f"{_CONTEXTUAL_RUNS}:run_gpt", "engine.handles.transformer:load_gpt",
           _transformer_weights, description="GPT: a left-to-right Transformer language model",
           to_transformers="engine.cli.export:gpt_to_transformers", encoder=f"{_ENCODERS}:GPT_ENCODER",
           architecture=(*_TRANSFORMER, "tokenizer"), objective=_LEARNED),
    Family("bert", BertConfig, f"{_CONTEXTUAL_RUNS}:run_bert", "engine.handles.transformer:load_bert",
           _transformer_weights, description="BERT: masked language model and next-sentence prediction",
           problems=_bert_problems, to_transformers="engine.cli.export:bert_to_transformers",
           encoder=f"{_ENCODERS}:BERT_ENCODER", architecture=_TRANSFORMER,
           objective=(*_LEARNED, "mask_prob", "whole_word", "nsp")),
    Family("mlm-head", MlmHeadConfig, f"{_ADAPT_RUNS}:run_mlm_head", "engine.handles.hf:load_mlm_head",
           description="a masked-LM head trained on a Hugging Face encoder", problems=_head_problems),
    Family("clm-head", ClmHeadConfig, f"{_ADAPT_RUNS}:run_clm_head", "engine.handles.hf:load_mlm_head",
           description="a causal-LM head trained on a Hugging Face encoder", problems=_head_problems),
    Family("tuned-lens", TunedLensConfig, "engine.training.tuned_lens_run:run_tuned_lens",
           "engine.handles.tuned:load_tuned_lens", problems=_lens_problems, aliases={"model": "base"},
           description="a tuned lens: per-layer translators that read a Transformer LM's layers (the model frozen)"),
)}
assert set(FAMILIES) == set(MODEL_CONFIGS), "a settings class without a family (or one without settings)"


def family(kind: str) -> Family:
    """The declaration of a family; a clear error naming the known ones for any other kind."""
    if kind not in FAMILIES:
        raise ValueError(f"unknown model kind {kind!r} (known: {', '.join(FAMILIES)})")
    return FAMILIES[kind]


def device_settings(kind: str, device_type: str | None) -> dict[str, Any]:
    """The settings a fresh run of ``kind`` trains with on a device of this type ("cuda", "mps", "cpu")
    where the user gives none of them: a family's ``on_gpu`` on CUDA (where they were measured), nothing
    elsewhere."""
    return dict(family(kind).on_gpu) if device_type == "cuda" else {}


def register(declaration: Family) -> None:
    """Add a family from outside the engine (a plugin, a test): its settings class joins the config
    table that RunSpec, the checks and the CLI read."""
    FAMILIES[declaration.kind] = declaration
    MODEL_CONFIGS[declaration.kind] = declaration.config


def unregister(kind: str) -> None:
    FAMILIES.pop(kind, None)
    MODEL_CONFIGS.pop(kind, None)
