"""What a model knows, measured on the bundled public sets (engine/data/sets/):

* ``cloze``: the share of cloze sentences (everyday, news, general knowledge; one [MASK] each) whose
  accepted answer is the top prediction (top-1) or among the top ten (top-10).
* ``masked_word_scores``: the same top-1/top-10 at one random word of each of many held-out sentences
  (``masked_word_hits``: word by word, so two models' scores pair up).
* ``senses``: sense separation — each occurrence of a polysemous word (11 words × 2 senses × 8 sentences)
  gets the sense of its nearest other occurrence of the same word (cosine, leave-one-out); the share
  right, per layer (where several are equally near, the share of them with its sense). Chance is about 0.47
  (7 of the 15 others share a sense). A test set: what is chosen by senses (``clear_sense_layer``, the layer the
  lens opens a model at) is chosen on the development set ``sense_dev_items`` (24 other words × 2 senses × 8).
* ``glove_context_baseline``: the same with no contextual model at all — each occurrence is the mean of
  the GloVe vectors of the words within 10 of it. A contextual model should beat it.
* ``perplexity_per_word``: a left-to-right language model's perplexity per word, with words a word-level
  model does not know spelled out by a ``Spelling`` model, so that every model predicts the same text;
  ``sentence_logprobs`` keeps its terms sentence by sentence and ``perplexity_ratio`` compares two models on
  them with a paired interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from engine.cancel import check_cancelled
from engine.data.text import word_spans, word_tokenize
from engine.errors import Unsupported
from engine.results import Capability

SETS = Path(__file__).resolve().parent.parent / "data" / "sets"


@dataclass(frozen=True)
class ClozeItem:
    kind: str  # everyday, news, knowledge
    text: str  # with one [MASK]
    answers: tuple[str, ...]  # lowercase


@dataclass(frozen=True)
class SenseItem:
    word: str
    sense: str
    sentence: str


def _rows(name: str) -> list[list[str]]:
    lines = (SETS / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


def cloze_items() -> list[ClozeItem]:
    return [ClozeItem(kind, text, tuple(a.strip().lower() for a in answers.split("|"))) for kind, text, answers
            in _rows("cloze.tsv")]


def sense_items() -> list[SenseItem]:
    """The sense set every "sense separation" figure is reported on: a test set, nothing is chosen on it."""
    return [SenseItem(word, sense, sentence) for word, sense, sentence in _rows("senses.tsv")]


def sense_dev_items() -> list[SenseItem]:
    """The development sense set (24 other words × 2 senses × 8 sentences): what a choice is made on."""
    return [SenseItem(word, sense, sentence) for word, sense, sentence in _rows("senses_dev.tsv")]


def _guesses(tokens: tuple[str, ...]) -> list[str]:
    """A masked LM's candidates as words: lowercase, without WordPiece's "##" or byte-level BPE's "Ġ"."""
    return [t.lower().removeprefix("##").strip().removeprefix("ġ") for t in tokens]


def cloze_scores(handle: Any, items: list[ClozeItem] | None = None) -> dict[str, float]:
    """Top-1 and top-10 accuracy of a masked LM on the cloze set (a sub-word prediction counts as its text
    without the "##" mark; an answer the vocabulary can only spell in pieces is a miss), and how often its first
    guess is a wrong word the sentence itself shows ("Paris is the capital of [MASK]." -> paris: copied)."""
    if Capability.FILL_BLANK not in handle.capabilities:  # (a masked LM, or ELMo's two LMs: engine.handles.elmo_blank)
        raise Unsupported(handle.missing(Capability.FILL_BLANK))
    items = items if items is not None else cloze_items()
    top1 = top10 = copied = 0
    for item in items:
        check_cancelled("the cloze set")  # Stop, or the job's owner gone: between items (engine.cancel)
        candidates = handle.fill_mask(item.text, k=10)[0]
        guesses = _guesses(candidates.tokens)
        top1 += guesses[0] in item.answers
        top10 += any(g in item.answers for g in guesses)
        shown = {item.text[a:b].lower() for a, b in word_spans(item.text.replace("[MASK]", " " * 6))}
        copied += guesses[0] in shown and guesses[0] not in item.answers
    n = max(len(items), 1)
    return {"cloze_top1": top1 / n, "cloze_top10": top10 / n, "cloze_items": float(len(items)),
            "cloze_copied": copied / n}


def masked_word_scores(handle: Any, sentences: list[str], seed: int = 0) -> dict[str, float]:
    """Top-1 and top-10 accuracy of a masked LM at one word per held-out sentence, chosen at random
    (seeded; words of letters only): a larger, unpicked companion of the cloze set, the same for every
    model whatever its training windows, so checkpoints and models compare on it. As in the cloze set,
    a word the vocabulary spells only in pieces is a miss."""
    top1, top10 = masked_word_hits(handle, sentences, seed)
    return {"masked_top1": float(top1.mean()), "masked_top10": float(top10.mean()), "masked_items": float(len(top1))}


def masked_word_hits(handle: Any, sentences: list[str], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``masked_word_scores`` word by word: whether each masked word was the first guess, and whether it was
    among the ten (two boolean arrays, in the sentences' order). The same seed masks the same words for every
    model, so two models' hits pair up word for word."""
    if Capability.FILL_BLANK not in handle.capabilities:  # (a masked LM, or ELMo's two LMs: engine.handles.elmo_blank)
        raise Unsupported(handle.missing(Capability.FILL_BLANK))
    rng = np.random.default_rng(seed)
    top1: list[bool] = []
    top10: list[bool] = []
    for sentence in sentences:
        check_cancelled("the held-out masked words")
        spans = [(a, b) for a, b in word_spans(sentence) if sentence[a:b].isalpha()]
        if len(spans) < 4:
            continue
        a, b = spans[int(rng.integers(len(spans)))]
        candidates = handle.fill_mask(sentence[:a] + "[MASK]" + sentence[b:], k=10)[0]
        guesses = _guesses(candidates.tokens)
        word = sentence[a:b].lower()
        top1.append(guesses[0] == word)
        top10.append(word in guesses)
    if not top1:
        raise Unsupported("no sentences of four words or more to mask")
    return np.array(top1, dtype=bool), np.array(top10, dtype=bool)


def _occurrence(words: tuple[str, ...] | list[str], target: str) -> int:
    lowered = [w.lower() for w in words]
    return lowered.index(target) if target in lowered else -1


TIE = 1e-6  # cosines this close to a row's nearest are a tie (the same vector twice, rounded differently)


def _leave_one_out(vectors: np.ndarray, senses: list[str]) -> tuple[float, int]:
    """(right, counted): each row gets the sense of its most similar other row. Rows equally near share the
    choice: a row counts the share of them that have its sense, what a draw among them scores on average. (A
    left-to-right model gives two sentences that begin alike the same vector for the word; which of the two an
    argmax took was decided by the rounding of the machine's matrix product, and moved a model's score by 0.02
    from one CPU to another.)"""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.maximum(norms, 1e-9)
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)
    same = np.array(senses)[:, None] == np.array(senses)[None, :]
    nearest = sims >= sims.max(1, keepdims=True) - TIE
    return float(((same & nearest).sum(1) / nearest.sum(1)).sum()), len(senses)


def _by_word(items: list[SenseItem]) -> dict[str, list[SenseItem]]:
    groups: dict[str, list[SenseItem]] = {}
    for item in items:
        groups.setdefault(item.word, []).append(item)
    return groups


def sense_separation(handle: Any, items: list[SenseItem] | None = None) -> np.ndarray:
    """Leave-one-out 1-NN sense accuracy of the target word's vector at each layer: (layers,)."""
    right, counted = _sense_hits(handle, items)
    return right.sum(0) / counted.sum()


class LayerLead(NamedTuple):
    """A model's sense separation per layer on a sense set, and its best layer's lead over its last with the 95%
    interval of a bootstrap over the set's words (a word's sentences are not independent)."""

    scores: np.ndarray  # (layers,)
    best: int  # the best layer (the later one of a tie)
    top: int  # the last layer
    lead: float  # scores[best] - scores[top]
    low: float
    high: float

    @property
    def opens_at(self) -> int:
        """The layer a view of senses opens at: the best, only where its lead's interval lies above 0."""
        return self.best if self.low > 0 else self.top


def sense_layer_lead(handle: Any, items: list[SenseItem] | None = None, draws: int = 2000) -> LayerLead:
    """``LayerLead`` of ``handle`` on ``items`` (the development sense set unless given)."""
    right, counted = _sense_hits(handle, items if items is not None else sense_dev_items())
    scores = right.sum(0) / counted.sum()
    top = len(scores) - 1
    best = int(np.flatnonzero(np.round(scores, 6) == np.round(scores, 6).max())[-1])
    if best == top:
        return LayerLead(scores, best, top, 0.0, 0.0, 0.0)
    picks = np.random.default_rng(0).integers(0, len(counted), (draws, len(counted)))
    leads = (right[picks, best] - right[picks, top]).sum(1) / counted[picks].sum(1)
    low, high = np.quantile(leads, [0.025, 0.975])
    return LayerLead(scores, best, top, float(scores[best] - scores[top]), float(low), float(high))


def clear_sense_layer(handle: Any, items: list[SenseItem] | None = None, draws: int = 2000) -> int:
    """The layer a view of word senses should open ``handle`` at: its last, unless an earlier layer tells the senses
    apart better beyond the noise — the best layer's lead over the last stays above 0 in 95% of ``draws``
    resamplings of the set's words (``sense_layer_lead``). Measured on the development sense set
    (``sense_dev_items``), not on the sense set the models' scores are reported on: chosen there, a layer's score on
    it would be flattered by the choice."""
    return sense_layer_lead(handle, items, draws).opens_at


def _sense_hits(handle: Any, items: list[SenseItem] | None) -> tuple[np.ndarray, np.ndarray]:
    """Per word of the sense set: its sentences' right choices at each layer (words, layers), and how many it has."""
    if Capability.CONTEXTUAL not in handle.capabilities:
        raise Unsupported(handle.missing(Capability.CONTEXTUAL))
    right: list[np.ndarray] = []
    counted: list[int] = []
    for word, group in _by_word(items if items is not None else sense_items()).items():
        rows, senses = [], []
        for item in group:
            check_cancelled("the sense set")
            cv = handle.contextual_vectors(item.sentence)
            k = _occurrence(cv.words, word)
            if k >= 0:
                rows.append(cv.vectors[:, k])  # (layers, dim)
                senses.append(item.sense)
        if len(rows) < 3:
            continue
        stacked = np.stack(rows, 1).astype(np.float64)  # (layers, n, dim)
        right.append(np.array([_leave_one_out(stacked[layer], senses)[0] for layer in range(stacked.shape[0])]))
        counted.append(len(senses))
    if not right:
        raise Unsupported(f"{handle.name} found none of the sense set's words")
    return np.stack(right), np.array(counted, dtype=np.float64)


def sense_chance(items: list[SenseItem] | None = None) -> float:
    """What ``sense_separation`` scores by chance: the share of a word's other occurrences that share an
    occurrence's sense, over every occurrence (with 8 sentences per sense, 7 of 15: about 0.47, not 0.5)."""
    hits = counted = 0.0
    for group in _by_word(items if items is not None else sense_items()).values():
        senses = [item.sense for item in group]
        if len(senses) < 3:
            continue
        hits += sum((senses.count(s) - 1) / (len(senses) - 1) for s in senses)
        counted += len(senses)
    return hits / counted if counted else 0.5


def glove_context_baseline(glove: Any, items: list[SenseItem] | None = None, window: int = 10) -> float:
    """The same leave-one-out accuracy with the mean GloVe vector of the words within ``window`` of the
    target (the target itself left out): what the sentence says, with no contextual model."""
    right, counted = 0.0, 0
    for word, group in _by_word(items if items is not None else sense_items()).items():
        rows, senses = [], []
        for item in group:
            words = word_tokenize(item.sentence, lowercase=True)
            k = _occurrence(words, word)
            context = [w for i, w in enumerate(words) if i != k and abs(i - k) <= window]
            known = []
            for w in context:
                try:
                    known.append(glove.vector(w))
                except Exception:  # unknown words and punctuation: left out
                    continue
            if known:
                rows.append(np.mean(known, 0))
                senses.append(item.sense)
        if len(rows) >= 3:
            r, c = _leave_one_out(np.stack(rows).astype(np.float64), senses)
            right += r
            counted += c
    return right / max(counted, 1)


class Spelling:
    """A character bigram model of how words are spelled (add-one smoothing; one symbol for every
    character it never saw): what an open-vocabulary evaluation charges a word-level model for a word it
    does not know. Its <unk> class stands for every such word at once; p(<unk> | history) x p(spelling)
    is the probability of this one word, as a sub-word model must spell it out piece by piece. Fitted on
    word types (each word once), since the words a vocabulary leaves out are rare ones."""

    BEGIN, END, OTHER = "\x02", "\x03", "\x00"

    def __init__(self, words: list[str] | set[str]) -> None:
        types = {w.lower() for w in words if w}
        alphabet = sorted({c for w in types for c in w} | {self.END, self.OTHER})
        self.index = {c: i for i, c in enumerate(alphabet)}
        begin = len(alphabet)
        counts = np.ones((begin + 1, len(alphabet)))  # add-one; rows: previous symbol (+ the word's start)
        for w in types:
            prev = begin
            for c in [*w, self.END]:
                counts[prev, self.index[c]] += 1
                prev = self.index[c]
        self.begin = begin
        self.logp = np.log(counts / counts.sum(1, keepdims=True))

    def logprob(self, word: str) -> float:
        """Natural log-probability of spelling ``word`` (lowercased) and ending it."""
        other = self.index[self.OTHER]
        prev, total = self.begin, 0.0
        for c in [*word.lower(), self.END]:
            k = self.index.get(c, other)
            total += float(self.logp[prev, k])
            prev = k
        return total


class SentenceLogprobs(NamedTuple):
    """A left-to-right model's log-probabilities sentence by sentence (natural log), so that two models scored on
    the same sentences can be compared pair by pair: ``own`` in its own vocabulary (<unk> at its one
    probability), ``spelled`` with each unknown word's spelling paid for too (``own`` where no spelling was
    given), ``words`` the sentence's word count (word_tokenize's, the same for every model). Sentences with no
    words are left out."""

    own: np.ndarray
    spelled: np.ndarray
    words: np.ndarray
    unknown: int


def sentence_logprobs(handle: Any, sentences: list[str], spelling: Spelling | None = None) -> SentenceLogprobs:
    """Each sentence's total log-probability under a left-to-right language model (``perplexity_per_word``'s
    terms, kept apart): sub-word pieces summed, word models' </s> left out. A masked LM is refused."""
    if Capability.SENTENCE_SCORE not in handle.capabilities or Capability.MASKED_LM in handle.capabilities:
        raise Unsupported(f"{handle.name} ({handle.kind}) is not a left-to-right language model: no perplexity")
    own, spelled, counts = [], [], []
    unknown = 0
    for sentence in sentences:
        check_cancelled("the perplexity")
        n = len(word_tokenize(sentence, lowercase=False))
        if not n:
            continue
        result = handle.score(sentence)
        flags = result.unknown or (False,) * len(result.tokens)
        total = spelling_cost = 0.0
        for token, lp, unk in zip(result.tokens, result.token_logprobs, flags, strict=True):
            if token == "</s>":
                continue
            total += lp
            if unk:
                unknown += 1
                spelling_cost += spelling.logprob(token) if spelling is not None else 0.0
        own.append(total)
        spelled.append(total + spelling_cost)
        counts.append(n)
    return SentenceLogprobs(np.asarray(own, dtype=np.float64), np.asarray(spelled, dtype=np.float64),
                            np.asarray(counts, dtype=np.int64), unknown)


def perplexity_per_word(handle: Any, sentences: list[str], spelling: Spelling | None = None) -> dict[str, float]:
    """Perplexity per word of a left-to-right language model over ``sentences``: exp of minus the total
    log-probability of their words divided by their number of words (word_tokenize's count, the same
    for every model). Sub-word models (GPT) sum their pieces' log-probabilities, so a word costs what all
    its pieces cost; word models' end-of-sentence event (</s>) is left out, since GPT predicts none — both
    then score exactly the sentence's words. With ``spelling``, a word-level model pays for each word it
    scored as <unk> the cost of spelling it out (``Spelling``): open vocabulary, every model predicting the
    same text (and ``closed_perplexity_per_word`` is the figure without it, from the same pass). A masked LM's
    pseudo-likelihood is not a probability: refused."""
    each = sentence_logprobs(handle, sentences, spelling)
    words = int(each.words.sum())
    if not words:
        raise Unsupported("no sentences to score")
    scores = {"perplexity_per_word": float(np.exp(-each.spelled.sum() / words)), "words": float(words),
              "unknown_words": float(each.unknown)}
    if spelling is not None:  # (the same pass: its own vocabulary's figure, with <unk> at its one probability)
        scores["closed_perplexity_per_word"] = float(np.exp(-each.own.sum() / words))
    return scores


def perplexity_ratio(a: np.ndarray, b: np.ndarray, words: np.ndarray) -> tuple[float, float, float]:
    """How a's perplexity per word compares with b's on the same sentences (``a``, ``b``: each sentence's
    log-probability; ``words``: its word count): the ratio a / b and its 95% interval, paired over sentences
    (what a sentence costs both models cancels; the sentence, not the word, is the unit resampled, since a
    sentence's words are not independent). The log ratio is a ratio of sums, its standard error by the
    delta method."""
    if len(words) < 2:
        raise Unsupported("a paired interval needs two sentences or more")
    diff = b - a  # a's extra cost in nats, sentence by sentence
    per_word = diff.sum() / words.sum()  # log(ppl_a / ppl_b)
    spread = (diff - per_word * words).std(ddof=1)
    half = 1.96 * spread * np.sqrt(len(words)) / words.sum()
    return float(np.exp(per_word)), float(np.exp(per_word - half)), float(np.exp(per_word + half))
