"""Loaded models behind one interface (``ModelHandle``), and the loaders of each run-folder kind.

A handle answers only what its model can; anything else raises ``Unsupported`` with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engine.checkpoint import check_shapes, read_tensors, register_loader
from engine.config import config_from_dict
from engine.errors import InputError, Unsupported
from engine.keyed_vectors import StaticVectors
from engine.results import Capability, ContextVectors, Neighbour, SentenceScore
from engine.text import word_tokenize
from engine.vocab import Vocab

MAX_CHARS = 20_000
MAX_WORDS = 2_000

Scorer = Callable[[list[list[str]]], list[np.ndarray]]  # tokenized sentences -> log-probs per token


def check_text(text: object, what: str = "sentence") -> str:
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"the {what} is empty: type some words")
    if len(text) > MAX_CHARS:
        raise InputError(f"the {what} is too long ({len(text):,} characters; at most {MAX_CHARS:,})")
    return text


class ModelHandle:
    """A loaded model: static vectors and/or a sentence scorer, with what it can do."""

    def __init__(self, kind: str, name: str, path: str | None, info: dict[str, Any], *,
                 vectors: StaticVectors | None = None, scorer: Scorer | None = None,
                 lowercase: bool = True, subwords: bool = False) -> None:
        self.kind, self.name, self.path = kind, name, path
        self.info = dict(info)
        self._vectors, self._scorer = vectors, scorer
        self.lowercase = lowercase
        caps = Capability.NONE
        if vectors is not None:
            caps |= Capability.STATIC
        if scorer is not None:
            caps |= Capability.SENTENCE_SCORE
        if subwords:
            caps |= Capability.SUBWORDS
        self.capabilities = caps
        if vectors is not None:
            self.info.setdefault("vocabulary_size", len(vectors))
            self.info.setdefault("dim", vectors.dim)

    def __repr__(self) -> str:
        return f"<ModelHandle {self.kind} {self.name!r}>"

    def missing(self, capability: Capability) -> str:
        """Why this model cannot do ``capability``, in words ("" when it can): panels show it beside
        the control they disable."""
        if capability in self.capabilities:
            return ""
        contextual = Capability.CONTEXTUAL in self.capabilities
        who = f"{self.name} ({self.kind})"
        reasons = {
            Capability.STATIC: f"{who} gives one vector per occurrence, not one per word",
            Capability.CONTEXTUAL: f"{who} gives every word one vector whatever the sentence: it has no context",
            Capability.ATTENTION: f"{who} has no attention: only Transformers (GPT, BERT) have attention heads",
            Capability.MASKED_LM: f"{who} has no masked-LM head: only BERT-style models fill [MASK]",
            Capability.NEXT_TOKEN: f"{who} does not predict the next token: that needs a left-to-right language "
                                   "model (n-gram, NNLM, ELMo, GPT)",
            Capability.SENTENCE_SCORE: f"{who} is not a language model: it cannot score sentences",
            Capability.NEXT_SENTENCE: f"{who} has no next-sentence head: only BERT pre-trained with NSP has one",
            Capability.SUBWORDS: f"{who} has no sub-word units: unknown words get no vector",
            Capability.CLASSIFY: f"{who} is not a fine-tuned classifier: fine-tune it on a classification task first",
            Capability.TAG: f"{who} is not a fine-tuned tagger: fine-tune it on a tagging task first",
            Capability.ANSWER: f"{who} does not extract answers: fine-tune it on a span task first",
        }
        if not contextual and capability is Capability.ATTENTION:
            reasons[capability] = f"{who} is a static model: it has no attention (only Transformers do)"
        return reasons.get(capability, f"{who} cannot do {capability.name}")

    # ------------------------------------------------------------ static vectors

    def static_vectors(self) -> StaticVectors:
        if self._vectors is None:
            raise Unsupported(f"{self.name} ({self.kind}) has no static word vectors")
        return self._vectors

    def _word(self, word: object) -> str:
        if not isinstance(word, str) or not word.strip():
            raise InputError("type a word")
        word = word.strip()
        if len(word) > 100:
            raise InputError("that is not a word (over 100 characters)")
        return word.lower() if self.lowercase else word

    def vocabulary(self, limit: int | None = None) -> list[str]:
        words = self.static_vectors().words
        return words[:limit] if limit else list(words)

    def vector(self, word: str) -> np.ndarray:
        return self.static_vectors().vector(self._word(word))

    def static_neighbours(self, word: str, k: int = 10) -> list[Neighbour]:
        return [Neighbour(w, s) for w, s in self.static_vectors().neighbours(self._word(word), k)]

    def analogy(self, a: str, b: str, c: str, k: int = 5) -> list[Neighbour]:
        """a : b :: c : ?"""
        vec = self.static_vectors()
        return [Neighbour(w, s) for w, s in vec.analogy(self._word(a), self._word(b), self._word(c), k)]

    def contextual_vectors(self, sentence: str) -> ContextVectors:
        """For a static model: its one vector per word as a single layer (zeros for unknown words)."""
        vec = self.static_vectors()
        words = word_tokenize(check_text(sentence), lowercase=self.lowercase)
        if not words:
            raise InputError("the sentence has no words")
        if len(words) > MAX_WORDS:
            raise InputError(f"the sentence is too long ({len(words)} words; at most {MAX_WORDS})")
        rows, known = [], []
        for w in words:
            try:
                rows.append(vec.vector(w))
                known.append(True)
            except KeyError:
                rows.append(np.zeros(vec.dim, np.float32))
                known.append(False)
        return ContextVectors(tuple(words), np.stack(rows)[None].astype(np.float32), tuple(known))

    # ------------------------------------------------------------ language models

    def score(self, sentence: str) -> SentenceScore:
        if self._scorer is None:
            raise Unsupported(f"{self.name} ({self.kind}) is not a language model: it cannot score sentences")
        words = word_tokenize(check_text(sentence), lowercase=self.lowercase)
        if not words:
            raise InputError("the sentence has no words")
        if len(words) > MAX_WORDS:
            raise InputError(f"the sentence is too long ({len(words)} words; at most {MAX_WORDS})")
        lp = self._scorer([words])[0]
        total = float(lp.sum())
        return SentenceScore(tuple([*words, "</s>"]), tuple(float(x) for x in lp), total,
                             math.exp(-total / len(lp)))

    def perplexity(self, sentences: list[str]) -> float:
        """Per-token perplexity over ``sentences`` (the held-out evaluation of every language model)."""
        if self._scorer is None:
            if not self.capabilities & Capability.SENTENCE_SCORE:
                raise Unsupported(f"{self.name} ({self.kind}) cannot score sentences")
            total = count = 0.0  # contextual models: one score() per sentence
            for s in sentences:
                if s.strip():
                    r = self.score(s)
                    total += r.logprob
                    count += len(r.token_logprobs)
            if not count:
                raise InputError("no sentences to score")
            return math.exp(-total / count)
        tokenized = [w for w in (word_tokenize(s, self.lowercase) for s in sentences) if w]
        if not tokenized:
            raise InputError("no sentences to score")
        lps = self._scorer(tokenized)
        n = sum(len(x) for x in lps)
        return math.exp(-sum(float(x.sum()) for x in lps) / n)

    # ------------------------------------------------------------ what static models cannot do

    def attention(self, sentence_or_pair: Any) -> Any:
        raise Unsupported(f"{self.name} ({self.kind}) has no attention: only Transformer models (GPT, BERT) do")

    def fill_mask(self, text: str, k: int = 10) -> Any:
        raise Unsupported(f"{self.name} ({self.kind}) has no masked-LM head: only BERT-style models fill [MASK]")

    def next_token(self, text: str, k: int = 10) -> Any:
        raise Unsupported(f"{self.name} ({self.kind}) does not predict next tokens here")

    def generate(self, text: str, tokens: int = 20, temperature: float = 0.0, seed: int = 0) -> str:
        """A continuation word by word from ``next_token``: greedy (temperature 0) or sampled from the
        50 likeliest words (Transformers override this with sampling from the whole vocabulary)."""
        if Capability.NEXT_TOKEN not in self.capabilities:
            raise Unsupported(self.missing(Capability.NEXT_TOKEN))
        rng = np.random.default_rng(seed)
        words: list[str] = []
        for _ in range(max(1, min(int(tokens), 200))):
            candidates = self.next_token(" ".join([check_text(text), *words]), k=50)
            if temperature <= 0:
                words.append(candidates.tokens[0])
            else:
                logits = np.log(np.maximum(np.asarray(candidates.probs), 1e-12)) / temperature
                p = np.exp(logits - logits.max())
                words.append(candidates.tokens[int(rng.choice(len(p), p=p / p.sum()))])
        return " " + " ".join(words)

    def next_sentence(self, a: str, b: str) -> float:
        raise Unsupported(f"{self.name} ({self.kind}) has no next-sentence head: only BERT does")


# ---------------------------------------------------------------- loaders per run-folder kind

def _info(run_dir: Path, config: dict) -> dict[str, Any]:
    keys = ("corpus", "corpus_words", "vocabulary_size", "device", "metrics", "trained_steps")
    return {"path": str(run_dir), **{k: config[k] for k in keys if k in config}}


@register_loader("word2vec")
def load_word2vec(run_dir: Path, config: dict) -> ModelHandle:
    from engine.models.word2vec import Word2VecModel, ngram_rows

    cfg = config_from_dict("word2vec", config["model"])
    vocab = Vocab.load(run_dir / "vocab.txt")
    model = Word2VecModel.__new__(Word2VecModel)
    model.vocab, model.cfg = vocab, cfg
    rows = len(vocab) + (cfg.subword_buckets + 1 if cfg.subword_buckets else 0)
    out_rows = max(len(vocab) - 1, 1) if cfg.hs else len(vocab)
    expected = {"vectors": (len(vocab), cfg.vector_size), "syn0": (rows, cfg.vector_size), "syn1": (out_rows, cfg.vector_size)}
    tensors = read_tensors(run_dir, config, expected)
    vectors = tensors["vectors"].float().numpy()
    oov = None
    if cfg.subword_buckets:
        syn0 = tensors["syn0"].float().numpy()

        def oov(word: str) -> np.ndarray | None:
            grams = ngram_rows(word, cfg, len(vocab))
            return syn0[grams].mean(0) if grams else None

    return ModelHandle("word2vec", run_dir.name, str(run_dir), _info(run_dir, config),
                       vectors=StaticVectors(vocab.words, vectors, run_dir.name, oov),
                       lowercase=cfg.lowercase, subwords=bool(cfg.subword_buckets))


@register_loader("glove")
def load_glove(run_dir: Path, config: dict) -> ModelHandle:
    cfg = config_from_dict("glove", config["model"])
    vocab = Vocab.load(run_dir / "vocab.txt")
    tensors = read_tensors(run_dir, config, {"vectors": (len(vocab), cfg.vector_size)})
    return ModelHandle("glove", run_dir.name, str(run_dir), _info(run_dir, config),
                       vectors=StaticVectors(vocab.words, tensors["vectors"].float().numpy(), run_dir.name),
                       lowercase=cfg.lowercase)


@register_loader("ngram")
def load_ngram(run_dir: Path, config: dict) -> ModelHandle:
    from engine.models.ngram import UNK, NGramLM

    cfg = config_from_dict("ngram", config["model"])
    vocab = Vocab.load(run_dir / "vocab.txt")
    tensors = read_tensors(run_dir, config)
    expected = {}
    for m in range(1, cfg.order + 1):
        n = len(vocab) if m == 1 else tensors.get(f"order{m}.keys", np.zeros(0)).shape[0]
        for part in ("keys", "counts", "cont"):
            expected[f"order{m}.{part}"] = (n,)
    check_shapes(tensors, expected, str(run_dir))
    lm = NGramLM(vocab, cfg)
    lm.load_tensors({k: v.numpy() for k, v in tensors.items()})
    unk = vocab.index[UNK]

    def scorer(sentences: list[list[str]]) -> list[np.ndarray]:
        return lm.token_logprobs([[vocab.index.get(w, unk) for w in s] for s in sentences])

    info = _info(run_dir, config) | {"order": cfg.order, "smoothing": cfg.smoothing}
    return ModelHandle("ngram", run_dir.name, str(run_dir), info, scorer=scorer, lowercase=cfg.lowercase)


@register_loader("nnlm")
def load_nnlm(run_dir: Path, config: dict) -> ModelHandle:
    import torch

    from engine.models.ngram import BOS, EOS, UNK
    from engine.models.nnlm import NNLM, token_logprobs

    cfg = config_from_dict("nnlm", config["model"])
    vocab = Vocab.load(run_dir / "vocab.txt")
    model = NNLM(len(vocab), cfg)
    state = model.state_dict()
    tensors = read_tensors(run_dir, config, {k: tuple(v.shape) for k, v in state.items()})
    model.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=True)
    model.eval()
    device = torch.device("cpu")
    unk, bos, eos = vocab.index[UNK], vocab.index[BOS], vocab.index[EOS]

    def scorer(sentences: list[list[str]]) -> list[np.ndarray]:
        return token_logprobs(model, [[vocab.index.get(w, unk) for w in s] for s in sentences], bos, eos, device)

    keep = [i for i, w in enumerate(vocab.words) if w not in (UNK, BOS, EOS)]
    vectors = StaticVectors([vocab.words[i] for i in keep], model.C.weight.detach().numpy()[keep], run_dir.name)
    return ModelHandle("nnlm", run_dir.name, str(run_dir), _info(run_dir, config), vectors=vectors,
                       scorer=scorer, lowercase=cfg.lowercase)
