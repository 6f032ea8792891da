"""Plain result types returned by engine.api (numpy arrays and frozen dataclasses, on the CPU)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np


class Capability(enum.Flag):
    NONE = 0
    STATIC = enum.auto()  # one vector per word: vector, static_neighbours, analogy
    CONTEXTUAL = enum.auto()  # one vector per occurrence, layer by layer
    ATTENTION = enum.auto()
    MASKED_LM = enum.auto()  # a masked-LM head (BERT): fill_mask, pseudo-log-likelihood
    NEXT_TOKEN = enum.auto()
    SENTENCE_SCORE = enum.auto()  # score(sentence): log-probability, perplexity
    NEXT_SENTENCE = enum.auto()
    SUBWORDS = enum.auto()  # unknown words still get a vector
    CLASSIFY = enum.auto()  # a fine-tuned classifier: classify(text[, text_b])
    TAG = enum.auto()  # a fine-tuned tagger: tag(text)
    ANSWER = enum.auto()  # a fine-tuned span extractor: answer(question, context)
    FILL_BLANK = enum.auto()  # fill_mask from the words on both sides: a masked LM, or ELMo's two LMs together


@dataclass(frozen=True)
class Neighbour:
    word: str
    similarity: float


@dataclass(frozen=True)
class SentenceScore:
    tokens: tuple[str, ...]  # what was scored, including the end-of-sentence token
    token_logprobs: tuple[float, ...]  # natural log
    logprob: float
    perplexity: float
    notice: str = ""  # e.g. only the first tokens of a long text were scored
    # per token, True where a word-level model does not know the word and scored its unknown-word class
    # (<unk>: one probability for every rare word at once); () where the model spells every word out
    unknown: tuple[bool, ...] = ()


@dataclass(frozen=True)
class ContextVectors:
    words: tuple[str, ...]
    vectors: np.ndarray  # float32 (layers, len(words), dim); layer 0 is the input layer
    known: tuple[bool, ...]  # False where a static model has no vector (the row is zeros)
    notice: str = ""  # e.g. "truncated to the first 512 tokens"


@dataclass(frozen=True)
class AttentionMaps:
    tokens: tuple[str, ...]  # the model's tokens, special ones included
    weights: np.ndarray  # float32 probabilities (layers, heads, q, k); each row sums to 1
    segments: tuple[int, ...]  # 0 for the first sentence, 1 for the second of a pair
    notice: str = ""


@dataclass(frozen=True)
class MaskCandidates:
    position: int  # index of the [MASK] among the model's tokens
    tokens: tuple[str, ...]  # best first; sub-word continuations keep their "##"
    probs: tuple[float, ...]
    # a model that fills the blank from one side at a time (ELMo): each side's own likeliest words, best first —
    # (("before", words), ("after", words)); () for a masked LM, which reads both sides at once
    sides: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class TokenCandidates:
    context: str
    tokens: tuple[str, ...]  # best first
    probs: tuple[float, ...]


@dataclass(frozen=True)
class LogitLens:
    """What every layer would predict at one position, read through the model's own output head (the
    logit lens): ``layers[0]`` is the embedding layer, ``layers[-1]`` the model's real prediction."""

    text: str
    position: int  # the token read: the [MASK] (masked LMs) or the last token (left-to-right LMs)
    layers: tuple[TokenCandidates, ...]
    note: str = ("only the last layer was trained to be read through the output head; the layers below "
                 "show what that head makes of them, not what they were trained to say")


@dataclass(frozen=True)
class Classification:
    text: str
    labels: tuple[str, ...]  # every label, most probable first
    probs: tuple[float, ...]
    notice: str = ""

    @property
    def label(self) -> str:
        return self.labels[0]

    @classmethod
    def ranked(cls, text: str, labels: tuple[str, ...], probs: np.ndarray, notice: str = "") -> Classification:
        """From a head's probabilities in its labels' order: every label, the most probable first."""
        order = np.argsort(-probs)
        return cls(text, tuple(labels[k] for k in order), tuple(float(probs[k]) for k in order), notice)


@dataclass(frozen=True)
class Tagging:
    words: tuple[str, ...]
    tags: tuple[str, ...]
    probs: tuple[float, ...]  # of each word's tag
    entities: tuple[tuple[str, str], ...]  # (type, the words) of each entity found
    notice: str = ""


@dataclass(frozen=True)
class Answer:
    text: str  # the span of the context
    start: int  # its characters in the context
    end: int
    score: float  # start logit + end logit
    notice: str = ""
