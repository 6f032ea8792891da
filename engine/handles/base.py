"""The handle of static vectors and word-level language models (``BaseHandle``); the other families
subclass it.

A handle answers only what its model can; anything else raises ``Unsupported`` with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from engine.cancel import check_cancelled
from engine.data.keyed_vectors import StaticVectors
from engine.data.text import word_tokenize
from engine.errors import InputError, Unsupported
from engine.handles.continuation import NextWords, context_words, continue_words
from engine.results import Capability, ContextVectors, Neighbour, SentenceScore, TokenCandidates

MAX_CHARS = 20_000
MAX_WORDS = 2_000

Scorer = Callable[[list[list[str]]], list[np.ndarray]]  # tokenized sentences -> log-probs per token


MAX_K = 1000


Row = TypeVar("Row")


def padded_runs(rows: list[Row], length: Callable[[Row], int], most: int) -> Iterator[list[Row]]:
    """``rows`` by length, in runs to pad into one pass each: as many as keep rows × the run's longest within
    ``most`` (one at least). Cancellable between runs (engine.cancel)."""
    rows = sorted(rows, key=length)
    start = 0
    while start < len(rows):
        check_cancelled("scoring the sentences")
        end = start + 1
        while end < len(rows) and (end - start + 1) * length(rows[end]) <= most:
            end += 1
        yield rows[start:end]
        start = end


def check_text(text: object, what: str = "sentence") -> str:
    """The text a query may take: a non-empty string of at most MAX_CHARS characters. Lone surrogates
    (which JSON and Python strings allow, but no tokenizer or encoder takes) become U+FFFD."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"the {what} is empty: type some words")
    if len(text) > MAX_CHARS:
        raise InputError(f"the {what} is too long ({len(text):,} characters; at most {MAX_CHARS:,})")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def _whole(value: object, least: int) -> int | None:
    """``value`` as an int where it is a whole number (not a bool) of at least ``least``; else None."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < least:
        return None
    return int(value)


def check_samples(samples: object, most: int = 10) -> int:
    """Causal tracing's noise draws: a whole number of at least 1 (more than ``most`` are taken as ``most``)."""
    n = _whole(samples, 1)
    if n is None:
        raise InputError(f"samples (how many noise draws to average) must be a whole number of at least 1, not "
                         f"{samples!r}")
    return min(n, most)


def check_k(k: object, most: int = MAX_K) -> int:
    """How many candidates a query returns: a whole number from 1 to ``most``."""
    n = _whole(k, 1)
    if n is None or n > most:
        raise InputError(f"k (how many to show) must be a whole number from 1 to {most}, not {k!r}")
    return n


def check_generation(tokens: object, temperature: object, seed: object, no_repeat: object
                     ) -> tuple[int, float, int, int]:
    """A continuation's settings: how many tokens (a whole number of at least 1; at most 200 are written), the
    temperature (a number of at least 0; 0 is greedy), the seed of its draws (a whole number of at least 0) and
    the run that may not repeat (a whole number of at least 0; 0: any may)."""
    n, draw, run = _whole(tokens, 1), _whole(seed, 0), _whole(no_repeat, 0)
    if n is None:
        raise InputError(f"tokens (how many to write) must be a whole number of at least 1, not {tokens!r}")
    if isinstance(temperature, bool) or not isinstance(temperature, int | float | np.number) \
            or not math.isfinite(float(temperature)) or float(temperature) < 0:
        raise InputError(f"temperature must be a number of at least 0 (0: greedy), not {temperature!r}")
    if draw is None:
        raise InputError(f"seed must be a whole number of at least 0, not {seed!r}")
    if run is None:
        raise InputError(f"no_repeat (the run of tokens never written twice) must be a whole number of at least 0 "
                         f"(0: any may repeat), not {no_repeat!r}")
    return min(n, 200), float(temperature), draw, run


def check_min_count(n: object) -> int:
    """How often a word must have been seen for a neighbour list to show it: a whole number of at least 1."""
    count = _whole(n, 1)
    if count is None:
        raise InputError(f"min_count (how often a word must have been seen) must be a whole number of at least 1, "
                         f"not {n!r}")
    return count


class BaseHandle:
    """A loaded model: static vectors and/or a sentence scorer, with what it can do."""

    def __init__(self, kind: str, name: str, path: str | None, info: dict[str, Any], *,
                 vectors: StaticVectors | None = None, scorer: Scorer | None = None,
                 lowercase: bool = True, subwords: bool = False,
                 knows: Callable[[str], bool] | None = None, next_words: NextWords | None = None) -> None:
        self.kind, self.name, self.path = kind, name, path
        self._knows = knows  # word-level language models: is a word in the vocabulary (else scored as <unk>)
        self.info = dict(info)
        self._vectors, self._scorer = vectors, scorer
        self._similarity: dict[str, float | None] | None = None  # word_similarity's, once measured
        self._next_words = next_words  # word-level language models: the next word's distribution
        self.lowercase = lowercase
        caps = Capability.NONE
        if vectors is not None:
            caps |= Capability.STATIC
        if scorer is not None:
            caps |= Capability.SENTENCE_SCORE
        if subwords:
            caps |= Capability.SUBWORDS
        if next_words is not None:
            caps |= Capability.NEXT_TOKEN
        self.capabilities = caps
        self.info.setdefault("vector_layers", 1)  # contextual_vectors: one layer (the static vectors)
        if vectors is not None:
            self.info.setdefault("vocabulary_size", len(vectors))
            self.info.setdefault("dim", vectors.dim)

    def __repr__(self) -> str:
        return f"<BaseHandle {self.kind} {self.name!r}>"

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
            Capability.FILL_BLANK: f"{who} cannot fill [MASK]: that needs the words on both sides of it (a BERT-style "
                                   "masked LM, or ELMo's two language models)",
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
        word = word.lower() if self.lowercase else word
        if self._vectors is not None and word not in self._vectors:
            # the word as the model's own tokenizer read it in training: "U.S." is "u.s" and a full stop
            words = [w for w in word_tokenize(word, lowercase=False) if any(c.isalnum() for c in w)]
            if len(words) == 1 and words[0] in self._vectors:
                return words[0]
        return word

    def vocabulary(self, limit: int | None = None) -> list[str]:
        words = self.static_vectors().words
        return words[:limit] if limit else list(words)

    def vector(self, word: str) -> np.ndarray:
        return self.static_vectors().vector(self._word(word))

    def static_neighbours(self, word: str, k: int = 10, min_count: int = 1) -> list[Neighbour]:
        """The k nearest words; where the model kept its training counts, only those it saw at least
        ``min_count`` times (a word seen a handful of times has a vector that means little)."""
        vectors = self.static_vectors()
        return [Neighbour(w, s) for w, s in vectors.neighbours(self._word(word), check_k(k), check_min_count(min_count))]

    def word_similarity(self) -> dict[str, float | None] | None:
        """How far its static vectors agree with people: the Spearman correlation of their cosines with WordSim-353's
        ratings of word pairs, and the share of pairs it knows ("spearman", "coverage"); kept once measured (the
        vectors do not change). None where the pairs are not installed (gensim's test data)."""
        if self._similarity is None:
            from engine.data.evaluation import quick_word_similarity

            try:
                self._similarity = quick_word_similarity(self.static_vectors(), "wordsim353")
            except OSError:
                return None
        return self._similarity

    def analogy(self, a: str, b: str, c: str, k: int = 5, min_count: int = 1) -> list[Neighbour]:
        """a : b :: c : ? (among the words seen at least ``min_count`` times, as static_neighbours)"""
        vec = self.static_vectors()
        return [Neighbour(w, s) for w, s in vec.analogy(self._word(a), self._word(b), self._word(c), check_k(k),
                                                        check_min_count(min_count))]

    def word_counts_known(self) -> bool:
        """Whether its static neighbours can leave out rare words (it kept how often it saw each word)."""
        return self._vectors is not None and self._vectors.counts is not None

    def word_count(self, word: str) -> int | None:
        """How often it saw ``word`` in training (0: never), or None where it kept no counts (GloVe 6B, a vectors
        file): a static vector learned from a few dozen sentences means far less than one learned from thousands."""
        return self.static_vectors().count(self._word(word))

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
        unknown = tuple(not self._knows(w) for w in words) + (False,) if self._knows is not None else ()
        return SentenceScore(tuple([*words, "</s>"]), tuple(float(x) for x in lp), total,
                             math.exp(-total / len(lp)), unknown=unknown)

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

    def _no_lens(self, lens: str) -> Unsupported:
        """Why this model has no lens: an NNLM's one hidden layer is its output's only input (nothing to read
        early), a static or counting model has no hidden layers at all."""
        if self.kind == "nnlm":
            return Unsupported(f"{self.name} (an NNLM) has one hidden layer, which only its output reads: there is no "
                               f"earlier layer for {lens} to read (a layered language model has: ELMo, GPT, BERT)")
        return Unsupported(f"{self.name} ({self.kind}) has no layers read through an output head: {lens} needs a "
                           "layered language model (ELMo, GPT, BERT)")

    def lens_grid(self, text: str, k: int = 5, lens: str = "logit") -> Any:
        raise self._no_lens("the lens")

    def causal_trace(self, text: str, subject: str, samples: int = 3, contrast: str | None = None) -> Any:
        raise Unsupported(f"{self.name} ({self.kind}): causal tracing restores a network's hidden states layer by "
                          "layer; it needs a layered language model (ELMo, GPT, BERT)")

    def token_attribution(self, text: str, target: str | None = None, foil: str | None = None) -> Any:
        if self.kind == "ngram":
            raise Unsupported(f"{self.name} (an n-gram model) counts, it has no gradients to follow: its next word "
                              "rests on its last n−1 words alone, all of them wholly (try an NNLM: the same window, "
                              "each word weighed)")
        raise Unsupported(f"{self.name} ({self.kind}): attribution follows gradients from a language model's "
                          "prediction to its input vectors; it needs a neural language model (NNLM, ELMo, GPT, BERT)")

    def head_ablation(self, text: str, target: str | None = None, foil: str | None = None,
                      mean_over: str = "text", contrast: str | None = None) -> Any:
        raise Unsupported(f"{self.name} ({self.kind}) has no attention heads to knock out: only Transformer "
                          "language models (GPT, BERT) have them")

    def direct_effects(self, text: str, target: str | None = None, foil: str | None = None) -> Any:
        return self.head_ablation(text, target, foil)  # (refused, with the same reason)

    def mlp_neurons(self, text: str, layer: int, target: str | None = None, foil: str | None = None) -> Any:
        return self.head_ablation(text, target, foil)  # (refused, with the same reason)

    def head_positions(self, text: str, layer: int, head: int, target: str | None = None,
                       foil: str | None = None, mean_over: str = "text", contrast: str | None = None) -> Any:
        return self.head_ablation(text, target, foil)  # (refused, with the same reason)

    def neuron_examples(self, layer: int, neuron: int, k: int = 10, corpus: str = "default",
                        progress: Any = None) -> Any:
        raise Unsupported(f"{self.name} ({self.kind}) has no MLP neurons to read: only Transformer language models "
                          "(GPT, BERT) have them")

    def logit_lens(self, text: str, k: int = 10) -> Any:
        raise self._no_lens("the logit lens")

    def next_token(self, text: str, k: int = 10) -> Any:
        """A word-level language model's likeliest next words after the text (</s>: the sentence ends)."""
        if self._next_words is None:
            raise Unsupported(f"{self.name} ({self.kind}) does not predict next tokens here")
        k = check_k(k)
        logp = self._next_words.log_probs(self._context(text))
        k = min(k, len(logp))
        top = np.argpartition(-logp, k - 1)[:k]
        top = top[np.argsort(-logp[top], kind="stable")]
        return TokenCandidates(text, tuple(self._next_words.words[int(i)] for i in top),
                               tuple(float(np.exp(logp[i])) for i in top))

    def generate(self, text: str, tokens: int = 20, temperature: float = 0.0, seed: int = 0,
                 no_repeat: int = 0) -> str:
        """A continuation of ``text``, greedy (temperature 0) or sampled, no run of ``no_repeat`` words repeated
        (0: any), written as text (engine.handles.continuation; Transformers write theirs token by token)."""
        if self._next_words is None:
            raise Unsupported(self.missing(Capability.NEXT_TOKEN))
        tokens, temperature, seed, no_repeat = check_generation(tokens, temperature, seed, no_repeat)
        return continue_words(self._next_words, self._context(text), tokens, temperature, seed, no_repeat)

    def _context(self, text: str) -> list[str]:
        """The text's words as a word-level language model reads them (engine.handles.continuation)."""
        context = context_words(check_text(text), self.lowercase)
        if not context:
            raise InputError("the sentence has no words")
        return context

    def next_sentence(self, a: str, b: str) -> float:
        raise Unsupported(f"{self.name} ({self.kind}) has no next-sentence head: only BERT does")

    def contextual_vectors_batch(self, sentences: list[str]) -> list[ContextVectors]:
        return [self.contextual_vectors(s) for s in sentences]

    # ------------------------------------------------------------ what only fine-tuned models do

    def classify(self, text: str, text_b: str | None = None) -> Any:
        raise Unsupported(self.missing(Capability.CLASSIFY))

    def classify_batch(self, texts: list[str], texts_b: list[str | None] | None = None) -> Any:
        raise Unsupported(self.missing(Capability.CLASSIFY))

    def tag(self, text: str) -> Any:
        raise Unsupported(self.missing(Capability.TAG))

    def answer(self, question: str, context: str) -> Any:
        raise Unsupported(self.missing(Capability.ANSWER))


def run_info(run_dir: Path, config: dict) -> dict[str, Any]:
    keys = ("corpus", "corpus_sources", "corpus_words", "vocabulary_size", "device", "metrics", "trained_steps")
    settings = config.get("model")
    pairs = settings.get("sense_pairs") if isinstance(settings, dict) else ""
    pairs = pairs if isinstance(pairs, str) else ""
    return {"path": str(run_dir), **{k: config[k] for k in keys if k in config},
            **({"sense_pairs": Path(pairs).name} if pairs else {})}  # word senses taught beside its objective
