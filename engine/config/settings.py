"""Typed configuration: one dataclass per model family, its presets and the choices a setting may take
(engine.config.checks checks a config; engine.config.run_spec says what one run trains).

Configs are saved with the weights (config.json) and rebuilt from it; nothing lives in globals.
Field names of Word2VecConfig mirror gensim's ``Word2Vec`` arguments, with the same defaults.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

FORMAT_VERSION = 1


@dataclass
class NGramConfig:
    order: int = 3  # 1..5
    smoothing: str = "kneser-ney"  # "kneser-ney" (interpolated) or "laplace" (add-one)
    min_count: int = 2  # rarer words become <unk>
    lowercase: bool = True
    # (a pruned n-gram's probability mass goes to its history's back-off: every distribution still sums to one)
    prune: int = 0  # Kneser-Ney only: drop the n-grams above the unigrams seen fewer times than this (0: keep all)


@dataclass
class Word2VecConfig:
    reads_word_ids: ClassVar[bool] = True  # trains on the corpus as word ids (engine.data.prefetch)
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
    # Hogwild threads share the hot rows (the Huffman root, frequent words): on a few cores, fewer
    # threads can be faster, hierarchical softmax above all
    workers: int = 0  # threads of the CPU kernel (gensim's name); 0: every core (beside the app: all but one)
    # GPU batching (ours, not gensim's): see engine/models/word2vec/model.py
    batch_pairs: int = 8192  # GPU: (input, output) pairs per step
    negative_group: int = 16  # GPU: consecutive pairs sharing one pool of noise words
    shared_negatives: int = 16  # GPU: noise words in each shared pool


@dataclass
class GloveConfig:
    reads_word_ids: ClassVar[bool] = True  # trains on the corpus as word ids (engine.data.prefetch)
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


# ---------------------------------------------------------------- contextual models

@dataclass
class PretrainSettings:
    """Optimisation settings shared by the contextual models (AdamW, warmup then linear decay)."""

    batch_size: int = 32
    lr: float = 5e-4
    warmup: int = 200  # steps of linear warmup
    weight_decay: float = 0.01
    clip: float = 1.0  # gradient-norm clipping
    epochs: int = 1  # passes over the corpus (--max-steps stops earlier)
    eval_every: int = 200  # steps between held-out evaluations (0: only at the end)
    keep_every: int = 500  # steps between checkpoints kept in checkpoints/step-N (0: none)
    accumulate: int = 1  # micro-batches of batch_size per optimiser step (effective batch: batch_size x accumulate)


@dataclass
class NNLMConfig(PretrainSettings):
    """Bengio et al. 2003's neural language model, trained by the one gradient loop (AdamW, clipping,
    resume mid-epoch) with its own defaults."""

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
    warmup: int = 0  # the rate falls linearly from the first step
    weight_decay: float = 0.0
    eval_every: int = 0  # the held-out perplexity at the end (and when stopped)
    keep_every: int = 0


@dataclass
class SenseSettings:
    """Word senses taught directly beside a masked LM (engine/training/sense_pairs.py): BERT and mlm-head."""

    sense_pairs: str = ""  # word-in-context pairs: "sense-train" (bundled: 34 words in two senses), a file (WiC's NAME.data.txt with NAME.gold.txt beside it, one TSV with a T/F column, or word/sense/sentence rows): beside the masked LM, a word's vectors in two sentences are pulled together when its sense is the same, pushed apart when not; "": none
    sense_weight: float = 1.0  # weight of that loss beside the masked LM's
    sense_batch: int = 16  # word-in-context pairs per step
    sense_layer: int = 0  # the layer whose states that loss shapes (0: the last; k: after layer k)


@dataclass
class BertConfig(SenseSettings, PretrainSettings):
    preset: str = "tiny"
    vocab_size: int = 8000  # WordPiece vocabulary trained on the corpus
    hidden: int = 256
    layers: int = 4
    heads: int = 4
    intermediate: int = 1024
    max_len: int = 512  # learned position embeddings
    seq_len: int = 128  # training sequence length ([CLS] A [SEP] B [SEP])
    dropout: float = 0.1
    lowercase: bool = True
    mask_prob: float = 0.15
    nsp: bool = True  # next-sentence prediction (off: MLM only, single segments)
    init_embeddings: str = ""  # "glove-6b-50d": token embeddings start from GloVe (projected); "": random
    init_from: str = ""  # a run of this family (folder or shipped name) to go on pretraining from, on this run's corpus: its weights, its tokenizer and its architecture, with a schedule of this run's own (continued pretraining: a model taken to new text); "": from nothing
    whole_word: bool = False  # mask every piece of a chosen word together (whole-word masking)
    teacher: str = ""  # distil from this encoder's per-word states (e.g. all-minilm-l6-v2), or from a masked LM run (e.g. minilm-mlm: its predictions too, in its vocabulary); "": no teacher
    distill_weight: float = 1.0  # weight of the teacher's word-state loss beside MLM (+ NSP)
    soft_weight: float = 1.0  # a masked-LM teacher: weight of its predictions at the masked positions (soft targets)
    temperature: float = 2.0  # a masked-LM teacher: softmax temperature of the soft targets (DistilBERT: 2)
    distill_map: str = "linear"  # how student states meet the teacher's: "linear" (a learned map, any width) or "identity" (hidden = the teacher's width: the student's own states learn the teacher's directions, which its nearest-neighbour views then read)


@dataclass
class GPTConfig(PretrainSettings):
    preset: str = "tiny"
    vocab_size: int = 8000
    tokenizer: str = "bpe"  # "bpe" (byte-level, as GPT-2) or "wordpiece"
    hidden: int = 256
    layers: int = 4
    heads: int = 4
    intermediate: int = 1024
    max_len: int = 512
    seq_len: int = 128
    dropout: float = 0.1
    lowercase: bool = True
    init_embeddings: str = ""  # "glove-6b-50d": token embeddings start from GloVe (projected); "": random
    init_from: str = ""  # a run of this family (folder or shipped name) to go on pretraining from, on this run's corpus: its weights, its tokenizer and its architecture, with a schedule of this run's own (continued pretraining: a model taken to new text); "": from nothing


@dataclass
class ElmoConfig(PretrainSettings):
    preset: str = "tiny"
    char_dim: int = 16
    filters: str = "1:32,2:32,3:64,4:128,5:256"  # width:count of the char-CNN filters (ELMo: up to 7:1024)
    highway: int = 2
    proj: int = 128  # token and LSTM projection size (ELMo: 512)
    hidden: int = 512  # LSTM cell size (ELMo: 4096)
    layers: int = 2
    max_chars: int = 50  # characters per word, with begin/end-of-word marks
    min_count: int = 3
    max_vocab: int = 30000  # output vocabulary (adaptive softmax)
    seq_len: int = 20  # tokens per training window (ELMo: 20)
    dropout: float = 0.1
    lowercase: bool = True
    init_from: str = ""  # a run of this family (folder or shipped name) to go on pretraining from, on this run's corpus: its weights, its vocabulary and its architecture, with a schedule of this run's own (continued pretraining: a model taken to new text); "": from nothing


@dataclass
class MlmHeadConfig(SenseSettings, PretrainSettings):
    """A masked-LM head for a pre-trained encoder that has none (e.g. all-MiniLM-L6-v2), trained here."""

    causal: ClassVar[bool] = False  # reads the whole sentence (not a setting: what the family is)
    base: str = "all-minilm-l6-v2"  # the encoder: a built-in name or a Hugging Face BERT-style folder
    train_layers: int = 2  # the top N encoder layers learn with the head (0: the head only)
    init_from: str = ""  # an mlm-head run (folder or shipped name) whose trained weights this run starts from
    seq_len: int = 128  # tokens per training window ([CLS] text [SEP])
    windows: str = "stream"  # "stream": the corpus as one stream cut every seq_len tokens (windows start mid-sentence); "sentences": whole sentences of one document packed up to seq_len, padded (every window starts a sentence, as a typed sentence does); "sentence": one sentence per window, padded (as the app asks a masked LM: one sentence, nothing around it)
    mask_prob: float = 0.15
    whole_word: bool = True  # mask every piece of a chosen word together (whole-word masking)
    unlikelihood: float = 0.0  # weight of a loss against copying: at each masked position, the probability on every word the window shows that is not the answer is pushed down (token-level unlikelihood, Welleck et al. 2020; all-MiniLM's states fill 'Paris is the capital of [MASK].' with paris); 0: off
    lr: float = 3e-4
    warmup: int = 100  # steps of linear warmup
    keep_every: int = 0  # steps between checkpoints kept in checkpoints/step-N (0: none)


@dataclass
class ClmHeadConfig(PretrainSettings):
    """A pre-trained encoder turned into a left-to-right language model (a GPT: causal attention, next-token
    head), trained here: its layers start from the encoder's weights, not from nothing."""

    causal: ClassVar[bool] = True  # reads left to right (not a setting: what the family is)
    base: str = "all-minilm-l6-v2"  # the encoder: a built-in name or a Hugging Face BERT-style folder
    train_layers: int = 6  # the top N layers learn with the head (causal attention is new to all of them)
    init_from: str = ""  # a clm-head run (folder or shipped name) whose trained weights this run starts from
    seq_len: int = 64  # tokens per training window ([CLS] before every sentence, as a GPT's start token)
    lr: float = 3e-4
    warmup: int = 100
    keep_every: int = 0


@dataclass
class TunedLensConfig(PretrainSettings):
    """A tuned lens (Belrose et al. 2023) for a Transformer language model: one affine translator per layer,
    trained with the model frozen so that its output head reads each layer as the output's distribution."""

    base: str = "minilm-mlm"  # the model it reads: a shipped name, a run folder or a Hugging Face folder
    seq_len: int = 64  # tokens per sentence read (longer ones are cut)
    positions: int = 128  # token positions per batch the translators learn from (all layers at each)
    mask_prob: float = 0.15  # a masked LM reads its sentences with this share of words masked
    batch_size: int = 16
    lr: float = 1e-3
    warmup: int = 20
    weight_decay: float = 0.0
    eval_every: int = 100
    keep_every: int = 0


# preset -> settings; a preset fills every field it names, explicit settings then override
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "bert": {
        "tiny": {"hidden": 256, "layers": 4, "heads": 4, "intermediate": 1024},
        "small": {"hidden": 512, "layers": 4, "heads": 8, "intermediate": 2048},
        "base": {"hidden": 768, "layers": 12, "heads": 12, "intermediate": 3072, "vocab_size": 30522},
    },
    "gpt": {
        "tiny": {"hidden": 256, "layers": 4, "heads": 4, "intermediate": 1024},
        "small": {"hidden": 512, "layers": 6, "heads": 8, "intermediate": 2048},
        "base": {"hidden": 768, "layers": 12, "heads": 12, "intermediate": 3072, "vocab_size": 40000},
    },
    "elmo": {
        "tiny": {"proj": 128, "hidden": 512, "filters": "1:32,2:32,3:64,4:128,5:256"},
        "small": {"proj": 256, "hidden": 1024, "filters": "1:32,2:32,3:64,4:128,5:256,6:512"},
        "base": {"proj": 512, "hidden": 4096,
                 "filters": "1:32,2:32,3:64,4:128,5:256,6:512,7:1024"},
    },
}


def apply_preset(kind: str, cfg: Any, preset: str) -> Any:
    table = PRESETS.get(kind, {})
    if preset not in table:
        raise ValueError(f"unknown {kind} preset '{preset}' (choose from {', '.join(table) or 'none'})")
    for key, value in table[preset].items():
        setattr(cfg, key, value)
    cfg.preset = preset
    return cfg


MODEL_CONFIGS: dict[str, type] = {
    "ngram": NGramConfig,
    "nnlm": NNLMConfig,
    "word2vec": Word2VecConfig,
    "glove": GloveConfig,
    "bert": BertConfig,
    "gpt": GPTConfig,
    "elmo": ElmoConfig,
    "mlm-head": MlmHeadConfig,
    "clm-head": ClmHeadConfig,
    "tuned-lens": TunedLensConfig,
}


def model_config(kind: str, preset: str | None = None, **settings: Any) -> Any:
    """The settings dataclass of a model family: its defaults, then the preset, then ``settings``
    (the API, the CLI and the tests build configs this one way)."""
    if kind not in MODEL_CONFIGS:
        raise ValueError(f"unknown model kind '{kind}' (known: {', '.join(sorted(MODEL_CONFIGS))})")
    cfg = MODEL_CONFIGS[kind]()
    if preset:
        apply_preset(kind, cfg, preset)
    for key, value in settings.items():
        if not hasattr(cfg, key):
            raise ValueError(f"{kind} has no setting '{key}'")
        setattr(cfg, key, value)
    return cfg


def config_fields(kind: str) -> list[dataclasses.Field]:
    """The settings of a model kind, for generated CLIs and forms."""
    return list(dataclasses.fields(MODEL_CONFIGS[kind]))


# settings with a fixed set of values (forms show them as choices)
CHOICES: dict[str, tuple[Any, ...]] = {
    "smoothing": ("kneser-ney", "laplace"),
    "tokenizer": ("bpe", "wordpiece"),
    "init_embeddings": ("", "glove-6b-50d"),
    "distill_map": ("linear", "identity"),
    "windows": ("stream", "sentences", "sentence"),
    "preset": ("tiny", "small", "base"),
    "sg": (0, 1),
    "hs": (0, 1),
    "cbow_mean": (0, 1),
}
# what the numbered choices mean (word2vec keeps gensim's 0/1 switches)
CHOICE_NAMES: dict[str, dict[Any, str]] = {
    "sg": {0: "CBOW", 1: "skip-gram"},
    "hs": {0: "negative sampling", 1: "hierarchical softmax"},
    "cbow_mean": {0: "sum of the context", 1: "mean of the context"},
    "init_embeddings": {"": "random", "glove-6b-50d": "GloVe 6B-50d, projected"},
    "distill_map": {"linear": "a learned linear map", "identity": "no map, the student's own states"},
    "windows": {"stream": "one stream, cut every seq_len tokens", "sentences": "whole sentences, padded",
                "sentence": "one sentence each, padded"},
}


def field_help(kind: str) -> dict[str, str]:
    """The comment beside each setting in this file, for tooltips (empty where the source is not shipped)."""
    return dict(_field_help(kind))


@functools.cache
def _field_help(kind: str) -> dict[str, str]:
    """Read once per family: the source of a loaded module does not change, and reading it was 4 of the 7 ms a
    change of model took on the Pretrain tab, on the window's thread."""
    import inspect

    help_text: dict[str, str] = {}
    for cls in reversed(MODEL_CONFIGS[kind].__mro__):
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):
            continue
        for match in re.finditer(r"^\s+(\w+): [^#\n]*#\s*(.+)$", source, flags=re.MULTILINE):
            help_text[match.group(1)] = match.group(2).strip()
    return help_text


__all__ = [
    "BertConfig",
    "ElmoConfig",
    "GPTConfig",
    "MlmHeadConfig",
    "PRESETS",
    "PretrainSettings",
    "apply_preset",
    "FORMAT_VERSION",
    "GloveConfig",
    "CHOICES",
    "CHOICE_NAMES",
    "MODEL_CONFIGS",
    "NGramConfig",
    "NNLMConfig",
    "Word2VecConfig",
    "config_fields",
    "field_help",
    "field",
]
