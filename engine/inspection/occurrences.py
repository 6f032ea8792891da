"""Occurrences on demand: a word's contextual neighbours without a corpus-wide build.

* ``word_index(corpus)``: word -> the corpus sentences it occurs in. No model involved: built in seconds
  on first use (every distinct sentence of 4-400 characters, tokenized once), memory-mapped from the
  cache folder afterwards. Every word of the corpus is there, however rare.
* ``word_occurrences(handle, word)``: one model's vectors of up to ``limit`` occurrences of one word,
  sampled evenly across the corpus, every layer, float16; encoded on the first click, then read from the
  cache folder (one file per model, corpus and word). A sentence holding the word twice counts once (its
  first occurrence).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.cancel import check_cancelled
from engine.data.cache import discard, notice, open_entry, write_entry
from engine.data.corpora import corpus_identity
from engine.errors import InputError, UnknownWord
from engine.inspection.corpus_index import (
    Cancelled,
    Occurrence,
    map_safetensors,
    model_key,
    write_safetensors,
)

WORD_INDEX_VERSION = 2  # 2: cache entries with checksums (engine/data/cache.py)
OCCURRENCES_VERSION = 2


class WordIndex:
    """word -> sentence numbers, over the distinct sentences of a corpus (in corpus order)."""

    def __init__(self, words: list[str], word_starts: np.ndarray, postings: np.ndarray, text: np.ndarray,
                 sentence_starts: np.ndarray, corpus: str) -> None:
        self.words, self.corpus = words, corpus
        self.word_id = {w: i for i, w in enumerate(words)}
        self.word_starts, self.postings = word_starts, postings  # postings[word_starts[i]:word_starts[i+1]]
        self.text, self.sentence_starts = text, sentence_starts  # UTF-8 bytes of all sentences, offsets

    def __len__(self) -> int:
        return len(self.sentence_starts) - 1

    def sentence(self, i: int) -> str:
        return bytes(self.text[self.sentence_starts[i] : self.sentence_starts[i + 1]]).decode("utf-8")

    def sentences_of(self, word: str) -> np.ndarray:
        """The numbers of the sentences holding ``word`` (lowercased), in corpus order."""
        i = self.word_id.get(word.lower())
        if i is None:
            raise UnknownWord(word, f"the corpus '{self.corpus}' (no sentence of it holds this word)")
        return np.asarray(self.postings[self.word_starts[i] : self.word_starts[i + 1]])

    def count(self, word: str) -> int:
        i = self.word_id.get(word.lower())
        return 0 if i is None else int(self.word_starts[i + 1] - self.word_starts[i])


def _folder(kind: str, *parts: str) -> Path:
    from engine.data.corpora import cache_dir

    return cache_dir().joinpath(kind, *parts)


def _corpus_key(corpus: str) -> str:
    # the identity, not the name: "default" made of other sources, or an edited file, is another text
    return f"{Path(corpus).name}-{hashlib.sha1(corpus_identity(corpus).encode()).hexdigest()[:10]}"


# word indexes opened from the cache, kept for the process: reading one parses its word list (JSON: the GIL held
# for the whole parse, 0.1-0.3 s for the default corpus) and makes a dict of every word, and the lens did both at
# every click (a py-spy profile of the chaos bench: the largest holder of the GIL besides the GUI thread). A
# cache entry written again since (its files' times or sizes changed) is opened again.
OPENED_KEPT = 4
_OPENED: dict[str, tuple[tuple[int, ...], WordIndex]] = {}
_OPENED_LOCK = threading.Lock()


def _stamp(folder: Path) -> tuple[int, ...]:
    return tuple(v for name in ("index.safetensors", "words.json")
                 for st in [(folder / name).stat()] for v in (st.st_mtime_ns, st.st_size, st.st_ino))


def word_index(corpus: str = "default", progress: Callable[[float, str], None] | None = None,
               use_cache: bool = True) -> WordIndex:
    """The word -> sentences index of ``corpus`` (built on first use, then memory-mapped from the cache)."""
    from engine.data.corpora import get_corpus
    from engine.data.text import word_tokenize

    folder = _folder("word-index", f"v{WORD_INDEX_VERSION}", _corpus_key(corpus))
    source = f"word index {WORD_INDEX_VERSION} of {corpus_identity(corpus)}"
    if use_cache and open_entry(folder, source) is not None:
        try:
            stamp = _stamp(folder)
            with _OPENED_LOCK:
                opened = _OPENED.get(str(folder))
            if opened is not None and opened[0] == stamp:
                return opened[1]
            a = map_safetensors(folder / "index.safetensors")
            words = json.loads((folder / "words.json").read_text(encoding="utf-8"))
            index = WordIndex(words, a["word_starts"], a["postings"], a["text"], a["sentence_starts"], corpus)
            with _OPENED_LOCK:
                _OPENED[str(folder)] = (stamp, index)
                while len(_OPENED) > OPENED_KEPT:
                    _OPENED.pop(next(iter(_OPENED)))
            return index
        except (OSError, ValueError, KeyError, InputError) as e:  # sound files of the wrong shape: build again
            notice(f"cache: the word index of '{corpus}' could not be read ({e}); building it again")
            discard(folder)
    if progress is not None:
        progress(0.0, f"indexing the words of the corpus '{corpus}'")
    seen: set[str] = set()
    chunks: list[bytes] = []
    starts = [0]
    pairs_word: list[int] = []
    pairs_sentence: list[int] = []
    ids: dict[str, int] = {}
    for sentence in get_corpus(corpus).sentences("all"):
        if not 4 <= len(sentence) <= 400 or sentence in seen:
            continue
        seen.add(sentence)
        n = len(starts) - 1
        if n % 5000 == 0:
            check_cancelled(f"indexing the words of the corpus '{corpus}'")
        for w in set(word_tokenize(sentence)):
            pairs_word.append(ids.setdefault(w, len(ids)))
            pairs_sentence.append(n)
        data = sentence.encode("utf-8")
        chunks.append(data)
        starts.append(starts[-1] + len(data))
    if not chunks:
        raise InputError(f"the corpus '{corpus}' has no sentences to index")
    words = list(ids)
    word_of = np.asarray(pairs_word, np.int64)
    order = np.lexsort((np.asarray(pairs_sentence, np.int64), word_of))  # by word, then sentence
    postings = np.asarray(pairs_sentence, np.int32)[order]
    word_starts = np.searchsorted(word_of[order], np.arange(len(words) + 1)).astype(np.int64)
    text = np.frombuffer(b"".join(chunks), dtype=np.uint8)
    sentence_starts = np.asarray(starts, np.int64)
    index = WordIndex(words, word_starts, postings, text, sentence_starts, corpus)
    if use_cache:
        arrays: dict[str, np.ndarray] = {"word_starts": word_starts, "postings": postings, "text": text,
                                         "sentence_starts": sentence_starts}
        write_entry(folder, source, {"index.safetensors": lambda p: write_safetensors(p, arrays),
                                     "words.json": lambda p: p.write_bytes(json.dumps(words).encode())})
    if progress is not None:
        progress(1.0, f"{len(words):,} words in {len(index):,} sentences")
    return index


@dataclass
class WordOccurrences:
    """One model's vectors of one word's sampled occurrences: (n, layers, dim) float16."""

    word: str
    sentences: list[str]
    positions: list[int]  # the word's index among each sentence's words
    vectors: np.ndarray
    total: int  # how many sentences of the corpus hold the word (``sentences`` is a sample of them)

    @property
    def layers(self) -> int:
        return int(self.vectors.shape[1]) if self.vectors.ndim == 3 else 0

    def layer_vectors(self, layer: int) -> np.ndarray:
        if not 0 <= layer < self.layers:
            raise InputError(f"layer {layer} does not exist (0-{self.layers - 1})")
        return np.asarray(self.vectors[:, layer], np.float32)

    def neighbours(self, queries: np.ndarray, layer: int, k: int = 10) -> list[Occurrence]:
        """The ``k`` occurrences closest (cosine) to any of ``queries`` (q, dim)."""
        v = self.layer_vectors(layer)
        if not len(v):
            return []
        units = v / (np.linalg.norm(v, axis=1, keepdims=True) + 1e-9)
        q = np.atleast_2d(np.asarray(queries, np.float32))
        q = q / (np.linalg.norm(q, axis=1, keepdims=True) + 1e-9)
        sims = units @ q.T
        best, which = sims.max(1), sims.argmax(1)
        top = np.argsort(-best)[: max(1, int(k))]
        return [Occurrence(self.sentences[i], self.word, self.positions[i], float(best[i]), int(which[i])) for i in top]


def word_occurrences(handle: Any, word: str, corpus: str = "default", *, limit: int = 300,
                     stop: threading.Event | None = None, progress: Callable[[float, str], None] | None = None,
                     use_cache: bool = True, index: WordIndex | None = None) -> WordOccurrences:
    """``handle``'s vectors of up to ``limit`` occurrences of ``word`` in ``corpus`` (sampled evenly), cached
    per (model, corpus, word). ``stop`` cancels (``Cancelled``; nothing is saved)."""
    from engine.data.text import word_tokenize

    key = word.strip().lower()
    if not key or len(key) > 100:
        raise InputError("type a word")
    name = hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]
    folder = _folder("occurrences", f"v{OCCURRENCES_VERSION}", model_key(handle), f"{_corpus_key(corpus)}-{limit}", name)
    source = f"occurrences {OCCURRENCES_VERSION} of '{key}' by {model_key(handle)} in {corpus_identity(corpus)}, {limit}"
    if use_cache and open_entry(folder, source) is not None:
        try:
            doc = json.loads((folder / "occurrences.json").read_text(encoding="utf-8"))
            vectors = map_safetensors(folder / "vectors.safetensors")["vectors"]
            return WordOccurrences(doc["word"], doc["sentences"], doc["positions"], vectors, doc["total"])
        except (OSError, ValueError, KeyError, TypeError, InputError) as e:
            notice(f"cache: the occurrences of '{key}' could not be read ({e}); encoding them again")
            discard(folder)
    index = index or word_index(corpus)
    found = index.sentences_of(key)
    chosen = found[np.linspace(0, len(found) - 1, min(limit, len(found))).astype(np.int64)] if len(found) else found
    chosen = np.unique(chosen)  # evenly across the corpus, each sentence once
    sentences, positions, rows = [], [], []
    batch_size = 32
    for start in range(0, len(chosen), batch_size):
        if stop is not None and stop.is_set():
            raise Cancelled(f"encoding the occurrences of '{word}' was cancelled")
        batch = [index.sentence(int(i)) for i in chosen[start : start + batch_size]]
        try:
            encoded = handle.contextual_vectors_batch(batch)
        except InputError:  # one sentence the model cannot read: encode them one by one
            encoded = []
            for s in batch:
                try:
                    encoded.append(handle.contextual_vectors(s))
                except InputError:
                    encoded.append(None)
        for s, cv in zip(batch, encoded, strict=True):
            tokens = word_tokenize(s)
            if cv is None or len(cv.words) != len(tokens) or key not in tokens:
                continue  # truncated by the model, or split differently
            p = tokens.index(key)
            sentences.append(s)
            positions.append(p)
            rows.append(np.asarray(cv.vectors[:, p], np.float16))  # (layers, dim)
        if progress is not None:
            done = min(start + batch_size, len(chosen))
            progress(done / max(len(chosen), 1), f"{handle.name}: {done} of {len(chosen)} occurrences of '{key}'")
    vectors = np.stack(rows) if rows else np.zeros((0, 1, 1), np.float16)
    result = WordOccurrences(key, sentences, positions, vectors, int(len(found)))
    if use_cache:
        doc = {"word": key, "sentences": sentences, "positions": positions, "total": result.total}
        write_entry(folder, source, {"vectors.safetensors": lambda p: write_safetensors(p, {"vectors": vectors}),
                                     "occurrences.json": lambda p: p.write_bytes(json.dumps(doc).encode())})
    return result
