"""Pre-trained networks seen by fine-tuning: text into ids, ids into per-token states and a sentence vector.

    ours BERT   [CLS] A [SEP] B [SEP]   sentence vector: tanh(W_pool h_[CLS])        (BERT §4.1)
    ours GPT    <s> A <$> B <e>         sentence vector: the state at the last token  (GPT §3.3)
    ours ELMo   <s> w1..wn </s>         a learned scalar mix of the biLM layers, mean over words (ELMo §3.3)
    Hugging Face encoders like BERT, decoders like GPT, their base model (no LM head)

A Transformer's encoder is a view of the one wrapper its queries use (``TransformerEncoder`` over an
``engine.models.wrappers`` Adapter): the choices are made there, once. ELMo, whose queries go through
its own handle, keeps its encoder here.

``layer_of(name)`` places every parameter at a depth (0 = embeddings, 1..L = layers, L + 1 = what sits
on top: pooler, final norm) so the strategies can freeze the bottom of any of them the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from engine.data.inputs import Encoded, Specials, assemble, encode_text
from engine.data.text import word_spans
from engine.models.hf_lock import one_thread_in_transformers
from engine.models.wrappers.hf import HFAdapter
from engine.models.wrappers.ours import BertAdapter, GPTAdapter
from engine.models.wrappers.protocol import Adapter, reset_weights

HF_KIND = "hf"  # a Hugging Face model's encoder (its untrained network rebuilt from the run's hf/ folder)
CPU = torch.device("cpu")  # where a rebuilt encoder starts; the recipe moves it

_LAYER = re.compile(r"(?:^|\.)(?:layer|layers|h|blocks|lstms)\.(\d+)\.")
_EMBEDDING = re.compile(r"emb|wte|wpe|token_encoder|shared")


class Encoder(nn.Module):
    """The common part; subclasses set ``network``, ``dim``, ``max_len``, ``n_layers`` and the methods."""

    kind = ""
    network: Any  # the pre-trained nn.Module (typed Any: its own methods, encode/pooled/cfg, are called)
    dim: int
    max_len: int
    n_layers: int

    def encode(self, text: str | list[str], pair: str | None = None, max_len: int | None = None,
               truncate_first: bool = True) -> Encoded:
        raise NotImplementedError

    def states(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, T) -> (B, T, dim) final per-token states: ``combine(features(...))``."""
        return self.combine(self.features(ids, segments, mask))

    def features(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """What the pre-trained network computes (run without gradients when it is frozen)."""
        raise NotImplementedError

    def combine(self, features: torch.Tensor) -> torch.Tensor:
        """The part that always learns on top of the features (ELMo's scalar mix; otherwise nothing)."""
        return features

    def pooled(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, T, dim) -> (B, dim) the sentence vector."""
        raise NotImplementedError

    def layer_of(self, name: str) -> int:
        match = _LAYER.search(name)
        if match:
            return int(match.group(1)) + 1
        return 0 if _EMBEDDING.search(name) else self.n_layers + 1

    def reset(self) -> None:
        """Random weights, same architecture (the from-scratch ablation)."""
        reset_weights(self.network)

    def lm_loss(self, states: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
        """The language-model loss on the task's own text (GPT's auxiliary objective); None if unavailable."""
        return None

    def files(self) -> dict[str, Callable[[Path], None]]:
        return {}

    def save_network(self, folder: Path) -> None:
        """Write what rebuilds the network untrained into ``folder`` where its settings cannot say it."""
        return None

    def describe(self) -> dict[str, Any]:
        return {}


class TransformerEncoder(Encoder):
    """A Transformer as fine-tuning sees it: a view of its one wrapper (engine.models.wrappers), which
    makes every choice — the special tokens around a text or a pair, whether it reads left to right, how
    long a text it reads, its sentence vector, what trains — for queries and fine-tuning alike. ``kind``:
    the family's ("bert", "gpt"), or "hf" for a Hugging Face model."""

    def __init__(self, adapter: Adapter, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.network = adapter.body  # a submodule: its parameters are the encoder's
        self.adapter = adapter  # not a module: the network is registered once, above
        self.dim, self.max_len, self.n_layers = adapter.hidden_size, adapter.max_len, adapter.n_layers

    def encode(self, text: str | list[str], pair: str | None = None, max_len: int | None = None,
               truncate_first: bool = True) -> Encoded:
        limit = min(max_len or self.max_len, self.max_len)
        return encode_text(self.adapter.tokenizer, self.adapter.task_specials, text, pair, limit, truncate_first)

    def features(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.adapter.features(ids, segments, mask)

    def pooled(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.adapter.pooled(states, mask)

    def lm_loss(self, states: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
        return self.adapter.lm_loss(states, ids, mask)

    def reset(self) -> None:
        self.adapter.reset()

    def files(self) -> dict[str, Callable[[Path], None]]:
        return self.adapter.files()

    def save_network(self, folder: Path) -> None:
        self.adapter.save_network(folder)


class ElmoEncoder(Encoder):
    """Words in, the scalar mix of the three biLM layers out (the mix is learned in every strategy)."""

    kind = "elmo"

    def __init__(self, network: Any, vocab: Any) -> None:
        from engine.models.elmo import BOS_WORD, EOS_WORD, ScalarMix

        super().__init__()
        self.network, self.vocab = network, vocab
        cfg = network.cfg
        self.dim, self.max_len, self.n_layers = 2 * cfg.proj, 512, cfg.layers
        self.mix = ScalarMix(cfg.layers + 1)
        self.lowercase = cfg.lowercase
        self.types: dict[str, int] = {"": 0, BOS_WORD: 1, EOS_WORD: 2}  # "" = padding
        self._chars: list[list[int]] = []
        self._table: torch.Tensor | None = None
        for word in list(self.types):
            self._add_chars(word)

    def _add_chars(self, word: str) -> None:
        from engine.models.elmo import CHAR_PAD, word_chars

        max_chars = self.network.cfg.max_chars
        self._chars.append([CHAR_PAD] * max_chars if word == "" else word_chars(word, max_chars))

    def _type(self, word: str) -> int:
        word = word.lower() if self.lowercase else word
        if word not in self.types:
            self.types[word] = len(self.types)
            self._add_chars(word)
            self._table = None
        return self.types[word]

    def layer_of(self, name: str) -> int:
        if name.startswith("mix."):
            return self.n_layers + 1
        return super().layer_of(name)

    def encode(self, text: str | list[str], pair: str | None = None, max_len: int | None = None,
               truncate_first: bool = True) -> Encoded:
        class Words:  # the same shape as a tokenizers.Encoding
            def __init__(self, words: list[str], offsets: list[tuple[int, int]], owner: ElmoEncoder) -> None:
                self.ids = [owner._type(w) for w in words]
                self.word_ids, self.offsets = list(range(len(words))), offsets

        def words_of(t: str) -> Words:
            spans = word_spans(t)
            return Words([t[s:e] for s, e in spans], spans, self)

        a = Words(list(text), [(0, 0)] * len(text), self) if isinstance(text, list) else words_of(text)
        b = words_of(pair) if pair is not None else None
        bos, eos = self.types["<s>"], self.types["</s>"]
        limit = min(max_len or self.max_len, self.max_len)
        return assemble(a, b, Specials((bos,), (eos, bos), (eos,), 0), limit, truncate_first)

    def table(self, device: torch.device) -> torch.Tensor:
        if self._table is None or self._table.device != device or len(self._table) != len(self._chars):
            self._table = torch.tensor(self._chars, dtype=torch.long, device=device)
        return self._table

    def features(self, ids: torch.Tensor, segments: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        chars = self.table(ids.device)[ids]  # (B, T, C)
        return self.network.representations(chars, mask.sum(1))  # (L + 1, B, T, dim)

    def combine(self, features: torch.Tensor) -> torch.Tensor:
        return self.mix(features)  # learned even when the biLM is frozen (ELMo §3.3)

    def pooled(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask[..., None].to(states.dtype)
        return (states * m).sum(1) / m.sum(1).clamp(min=1)

    def files(self) -> dict[str, Callable[[Path], None]]:
        return {"vocab.txt": self.vocab.save}

    def describe(self) -> dict[str, Any]:
        w = self.mix.scalars.detach().softmax(0).cpu().tolist()
        return {"layer_weights": [round(x, 4) for x in w], "gamma": float(self.mix.gamma.detach())}


# ---------------------------------------------------------------- building

def encoder_from_handle(handle: Any) -> Encoder:
    """The trainable network inside a loaded model (api.load), wrapped for fine-tuning: by its family's
    declaration (``Family.encoder``), or a Hugging Face Transformer's."""
    from engine.errors import Unsupported
    from engine.families import FAMILIES

    declaration = FAMILIES.get(handle.kind)
    if declaration is not None and declaration.encoder:
        return declaration.encoders().from_handle(handle)
    if handle.kind.startswith("hf-"):
        return TransformerEncoder(handle.adapter, HF_KIND)
    raise Unsupported(f"{handle.name} ({handle.kind}) is not a contextual network: fine-tuning needs ELMo, GPT, "
                      "BERT or a Hugging Face Transformer")


@one_thread_in_transformers
def encoder_from_folder(run_dir: Path, base: dict[str, Any]) -> Encoder:
    """Rebuild the (untrained) encoder of a fine-tuned run folder; its weights come from model.safetensors."""
    from engine.families import FAMILIES

    declaration = FAMILIES.get(base["kind"])
    if declaration is not None and declaration.encoder:
        return declaration.encoders().from_folder(run_dir, base)
    import transformers
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    from engine.models.tokenizer_vocab import without_python_vocab

    transformers.logging.set_verbosity_error()
    folder = run_dir / HF_KIND
    config = AutoConfig.from_pretrained(folder, local_files_only=True)
    network = AutoModel.from_config(config, attn_implementation="eager")
    tokenizer = without_python_vocab(AutoTokenizer.from_pretrained(folder, local_files_only=True, use_fast=True))
    return TransformerEncoder(HFAdapter(network, tokenizer, "none", CPU, int(base.get("max_len", 512))), HF_KIND)


# ---------------------------------------------------------------- each family's (engine.families names them)

@dataclass(frozen=True)
class EncoderMaker:
    """How a family's network becomes an Encoder: from a loaded model, or rebuilt from a fine-tuned run
    folder (``base``: what the run's config.json says of its pre-trained model)."""

    from_handle: Callable[[Any], Encoder]
    from_folder: Callable[[Path, dict[str, Any]], Encoder]


def _bert_from_folder(run_dir: Path, base: dict[str, Any]) -> Encoder:
    from engine.config.checks import config_from_dict
    from engine.data.text import load_subword_tokenizer
    from engine.models.bert import Bert

    network, tokenizer = Bert(config_from_dict("bert", base["model"])), load_subword_tokenizer(run_dir / "tokenizer.json")
    return TransformerEncoder(BertAdapter(network, tokenizer, CPU), "bert")


def _gpt_from_folder(run_dir: Path, base: dict[str, Any]) -> Encoder:
    from engine.config.checks import config_from_dict
    from engine.data.text import load_subword_tokenizer
    from engine.models.gpt import GPT

    network, tokenizer = GPT(config_from_dict("gpt", base["model"])), load_subword_tokenizer(run_dir / "tokenizer.json")
    return TransformerEncoder(GPTAdapter(network, tokenizer, CPU), "gpt")


def _elmo_from_folder(run_dir: Path, base: dict[str, Any]) -> Encoder:
    from engine.config.checks import config_from_dict
    from engine.data.vocab import Vocab
    from engine.models.elmo import BiLM

    vocab = Vocab.load(run_dir / "vocab.txt")
    return ElmoEncoder(BiLM(config_from_dict("elmo", base["model"]), len(vocab)), vocab)


BERT_ENCODER = EncoderMaker(lambda handle: TransformerEncoder(handle.adapter, "bert"), _bert_from_folder)
GPT_ENCODER = EncoderMaker(lambda handle: TransformerEncoder(handle.adapter, "gpt"), _gpt_from_folder)
ELMO_ENCODER = EncoderMaker(lambda handle: ElmoEncoder(handle.model, handle.vocab), _elmo_from_folder)
