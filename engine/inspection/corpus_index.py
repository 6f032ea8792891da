"""A corpus index of contextual vectors: up to ``per_word`` occurrences of every frequent word of a
corpus, every layer, in float16, so that "which occurrences in the corpus is this 'bank' closest to?"
answers in milliseconds.

Built once per (model, corpus, settings) with progress and cancel, saved as safetensors + JSON
(beside a word2bert run folder, else in the cache folder) and reused across sessions.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import Cancelled, InputError, UnknownWord, Word2BertError  # noqa: F401 - Cancelled re-exported

INDEX_VERSION = 3  # 2: sentences sampled evenly from the whole corpus; 3: a cache entry with checksums
SAMPLE_FROM = 20  # read up to this many times max_sentences candidate sentences, then sample


@dataclass(frozen=True)
class Occurrence:
    sentence: str
    word: str
    position: int  # the word's index among the sentence's words
    similarity: float  # cosine with the closest typed occurrence
    closest_to: int  # which typed occurrence (index into the queries) it is closest to


class CorpusIndex:
    def __init__(self, words: list[str], sentences: list[str], vectors: np.ndarray, occ_word: np.ndarray,
                 occ_sentence: np.ndarray, occ_position: np.ndarray, info: dict[str, Any]) -> None:
        self.words, self.sentences, self.info = words, sentences, info
        self.vectors = vectors  # (n, layers, dim) float16
        self.occ_word, self.occ_sentence, self.occ_position = occ_word, occ_sentence, occ_position
        self.word_index = {w: i for i, w in enumerate(words)}
        order = np.argsort(occ_word, kind="stable")
        bounds = np.searchsorted(occ_word[order], np.arange(len(words) + 1))
        self._rows = {w: order[bounds[i] : bounds[i + 1]] for i, w in enumerate(words)}
        self._unit: dict[tuple[str, int], np.ndarray] = {}

    @property
    def layers(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def rows(self, word: str) -> np.ndarray:
        key = word.lower()
        if key not in self._rows:
            raise UnknownWord(word, f"the corpus index (it holds the {len(self.words):,} most frequent words)")
        return self._rows[key]

    def occurrence_vectors(self, word: str, layer: int) -> tuple[np.ndarray, list[str], list[int]]:
        """(m, dim) float32 vectors of the indexed occurrences of ``word`` at ``layer``, their sentences
        and word positions (for maps)."""
        rows = self.rows(word)
        return (self.vectors[rows, layer].astype(np.float32), [self.sentences[i] for i in self.occ_sentence[rows]],
                [int(p) for p in self.occ_position[rows]])

    def _unit_vectors(self, word: str, layer: int) -> np.ndarray:
        key = (word.lower(), layer)
        if key not in self._unit:
            v = self.vectors[self.rows(word), layer].astype(np.float32)
            self._unit[key] = v / (np.linalg.norm(v, axis=1, keepdims=True) + 1e-9)
        return self._unit[key]

    def neighbours(self, word: str, queries: np.ndarray, layer: int, k: int = 10) -> list[Occurrence]:
        """The ``k`` indexed occurrences of ``word`` closest (cosine) to any of ``queries`` (q, dim)."""
        if not 0 <= layer < self.layers:
            raise InputError(f"layer {layer} does not exist (0-{self.layers - 1})")
        units = self._unit_vectors(word, layer)
        q = np.atleast_2d(np.asarray(queries, np.float32))
        q = q / (np.linalg.norm(q, axis=1, keepdims=True) + 1e-9)
        sims = units @ q.T  # (m, q)
        best, which = sims.max(1), sims.argmax(1)
        top = np.argsort(-best)[: max(1, int(k))]
        rows = self.rows(word)
        return [Occurrence(self.sentences[self.occ_sentence[rows[i]]], word, int(self.occ_position[rows[i]]),
                           float(best[i]), int(which[i])) for i in top]

    # ------------------------------------------------------------ files

    def save(self, path: Path, source: str) -> bool:
        """Write the index as a cache entry (engine/data/cache.py) built from ``source``; False where the
        cache folder cannot be written."""
        from engine.data.cache import write_entry

        arrays = {"vectors": self.vectors, "occ_word": self.occ_word, "occ_sentence": self.occ_sentence,
                  "occ_position": self.occ_position}
        doc = {"version": INDEX_VERSION, "words": self.words, "sentences": self.sentences, "info": self.info}
        return write_entry(path, source, {"index.safetensors": lambda p: write_safetensors(p, arrays),
                                          "index.json": lambda p: p.write_bytes(json.dumps(doc).encode())})

    @classmethod
    def load(cls, path: Path) -> CorpusIndex:
        """Open a saved index; its vectors are memory-mapped (read from disk as queries touch them)."""
        doc = json.loads((path / "index.json").read_text(encoding="utf-8"))
        if doc.get("version") != INDEX_VERSION:
            raise InputError("the cached corpus index is from another version; rebuild it")
        a = map_safetensors(path / "index.safetensors")
        return cls(doc["words"], doc["sentences"], a["vectors"], np.asarray(a["occ_word"]),
                   np.asarray(a["occ_sentence"]), np.asarray(a["occ_position"]), doc["info"])


# The index is written and read here in the safetensors layout (8-byte header size, JSON header, raw
# little-endian data) rather than through the safetensors package: writing in slices and mapping on
# load never holds the GIL for the whole 100+ MB, so a build in a worker thread does not freeze the app.
_DTYPES = {"F16": np.float16, "F32": np.float32, "I32": np.int32, "I16": np.int16, "I64": np.int64, "U8": np.uint8}
_CODES = {np.dtype(v): k for k, v in _DTYPES.items()}
_SLICE = 8 << 20


def write_safetensors(path: Path, arrays: dict[str, np.ndarray]) -> None:
    header: dict[str, Any] = {}
    offset = 0
    for name, array in arrays.items():
        size = array.size * array.dtype.itemsize
        header[name] = {"dtype": _CODES[array.dtype], "shape": list(array.shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little"))
        f.write(raw)
        for array in arrays.values():
            if array.size == 0:  # nothing to write (a word none of whose occurrences could be encoded)
                continue
            flat = memoryview(np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)).cast("B")  # type: ignore[arg-type]
            for start in range(0, len(flat), _SLICE):
                f.write(flat[start : start + _SLICE])


def map_safetensors(path: Path) -> dict[str, np.ndarray]:
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        if not 0 < size < 100_000_000:
            raise InputError(f"{path} is not a safetensors file")
        header = json.loads(f.read(size))
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        dtype = np.dtype(_DTYPES[entry["dtype"]]).newbyteorder("<")
        shape = tuple(entry["shape"])
        if end - start != int(np.prod(shape)) * dtype.itemsize:
            raise InputError(f"{path}: the size of '{name}' does not match its shape")
        out[name] = (np.memmap(path, dtype=dtype, mode="r", offset=8 + size + start, shape=shape)
                     if end > start else np.zeros(shape, dtype))
    return out


def index_folder(handle: Any, corpus: str, per_word: int, max_words: int, min_count: int = 5,
                 max_sentences: int = 40_000) -> Path:
    """In the cache folder (never inside a run folder or the source tree: the shipped defaults live in
    assets/), one folder per model (its path, and its weights' time stamp) and per settings."""
    from engine.data.corpora import cache_dir

    key = hashlib.sha1(_source(handle, corpus, per_word, max_words, min_count, max_sentences).encode()).hexdigest()[:12]
    return cache_dir() / "corpus-index" / model_key(handle) / f"{Path(corpus).name}-{key}"


def _source(handle: Any, corpus: str, per_word: int, max_words: int, min_count: int, max_sentences: int) -> str:
    """What an index is built from: the model (its weights' time stamp), the corpus's text, the settings."""
    from engine.data.corpora import corpus_identity

    return (f"corpus index {INDEX_VERSION} by {model_key(handle)} of {corpus_identity(corpus)}: {per_word} per word, "
            f"{max_words} words, min count {min_count}, {max_sentences} sentences")


def model_key(handle: Any) -> str:
    """A folder name for what is cached about a model: its name, where it lives and its weights' time
    stamp (a run trained further gets new caches)."""
    model_path = Path(handle.path) if handle.path else None
    stamp = ""
    if model_path is not None and (model_path / "model.safetensors").exists():
        stamp = str((model_path / "model.safetensors").stat().st_mtime_ns)
    ident = hashlib.sha1(f"{handle.path or handle.name}|{stamp}".encode()).hexdigest()[:12]
    return f"{handle.name}-{ident}"


_SAMPLES: dict[tuple[str, int, int, int], tuple[list[str], list[str]]] = {}
_SAMPLES_LOCK = threading.Lock()
SAMPLES_KEPT = 2  # corpora whose sample this process keeps (a few MB each)


def corpus_sample(corpus: str, max_sentences: int, min_count: int, max_words: int) -> tuple[list[str], list[str]]:
    """(the sentences an index reads, the words it indexes): up to ``max_sentences`` distinct sentences spread
    evenly over the corpus, and its ``max_words`` most frequent words seen ``min_count`` times. The same for every
    model, so kept for the process (the corpus's text by ``corpus_identity``): "Index all models" read and
    tokenized the corpus again for each model, seconds of pure Python holding the GIL the window needs."""
    from engine.data.corpora import corpus_identity, get_corpus
    from engine.data.text import word_tokenize

    key = (corpus_identity(corpus), max_sentences, min_count, max_words)
    with _SAMPLES_LOCK:
        if key in _SAMPLES:
            return _SAMPLES[key]
    candidates, seen = [], set()
    for s in get_corpus(corpus).sentences("all"):
        if 4 <= len(s) <= 400 and s not in seen:  # each distinct sentence once
            seen.add(s)
            candidates.append(s)
            if len(candidates) >= SAMPLE_FROM * max_sentences:  # a huge corpus: memory stays bounded
                break
    del seen
    # evenly spread over the corpus (not its first pages: the default one starts with encyclopedia
    # articles in title order, and its news articles have the money senses of "bank")
    step = max(1.0, len(candidates) / max_sentences)
    sentences = [candidates[int(i * step)] for i in range(min(max_sentences, len(candidates)))]
    del candidates
    counts: Counter[str] = Counter()
    for s in sentences:
        counts.update(word_tokenize(s))
    vocab = [w for w, c in counts.most_common() if c >= min_count and any(ch.isalpha() for ch in w)][:max_words]
    if not vocab:
        raise InputError(f"no word occurs {min_count} times in the corpus '{corpus}'")
    with _SAMPLES_LOCK:
        while len(_SAMPLES) >= SAMPLES_KEPT:
            del _SAMPLES[next(iter(_SAMPLES))]  # the oldest
        _SAMPLES[key] = (sentences, vocab)
    return sentences, vocab


def build_corpus_index(handle: Any, corpus: str = "default", *, per_word: int = 20, max_words: int = 4000,
                       min_count: int = 5, max_sentences: int = 40_000, stop: threading.Event | None = None,
                       progress: Callable[[float, str], None] | None = None, use_cache: bool = True) -> CorpusIndex:
    """Index the contextual vectors of up to ``per_word`` occurrences of the ``max_words`` most frequent
    words (seen at least ``min_count`` times) in the first ``max_sentences`` sentences of ``corpus``."""
    from engine.data.cache import discard, notice, open_entry
    from engine.data.text import word_tokenize

    folder = index_folder(handle, corpus, per_word, max_words, min_count, max_sentences)
    source = _source(handle, corpus, per_word, max_words, min_count, max_sentences)
    if use_cache and open_entry(folder, source) is not None:
        try:
            return CorpusIndex.load(folder)
        except (OSError, ValueError, KeyError, TypeError, InputError) as e:  # sound files, unreadable content
            notice(f"cache: the corpus index of {handle.name} could not be read ({e}); building it again")
            discard(folder)
    t0 = time.perf_counter()
    if progress is not None:
        progress(0.0, "reading the corpus")
    sentences, vocab = corpus_sample(corpus, max_sentences, min_count, max_words)
    wanted = {w: per_word for w in vocab}
    word_id = {w: i for i, w in enumerate(vocab)}
    kept_sentences: list[str] = []
    store: np.ndarray | None = None  # (per_word * words, layers, dim) float16, filled from the front
    filled = 0
    occ_word, occ_sentence, occ_position = [], [], []
    batched = getattr(handle, "contextual_vectors_batch", None)
    batch_size = 32 if batched is not None else 1
    for start in range(0, len(sentences), batch_size):
        if stop is not None and stop.is_set():
            raise Cancelled("building the corpus index was cancelled")
        batch = []
        for s in sentences[start : start + batch_size]:
            tokens = word_tokenize(s)
            if any(wanted.get(w, 0) > 0 for w in tokens):
                batch.append((s, tokens))
        if batch:
            try:
                vectors_of = batched([s for s, _ in batch]) if batched is not None else \
                    [handle.contextual_vectors(batch[0][0])]
            except InputError:
                vectors_of = []
                for s, _ in batch:  # find and skip the sentence the model cannot encode
                    try:
                        vectors_of.append(handle.contextual_vectors(s))
                    except InputError:
                        vectors_of.append(None)
            for (s, tokens), cv in zip(batch, vectors_of, strict=True):
                if cv is None or len(cv.words) != len(tokens):  # every word covered (not truncated)
                    continue
                need = [i for i, w in enumerate(tokens) if wanted.get(w, 0) > 0]
                picked = []
                for i in need:
                    w = tokens[i]
                    if wanted[w] > 0:
                        wanted[w] -= 1
                        picked.append(i)
                        occ_word.append(word_id[w])
                        occ_sentence.append(len(kept_sentences))
                        occ_position.append(i)
                if picked:
                    kept_sentences.append(s)
                    if store is None:  # reserved, not touched: the OS maps only the pages written
                        store = np.empty((per_word * len(vocab), *cv.vectors.shape[::2]), np.float16)
                    store[filled : filled + len(picked)] = cv.vectors[:, picked].transpose(1, 0, 2)  # (p, layers, dim)
                    filled += len(picked)
        if progress is not None and (start // batch_size) % 20 == 0:
            progress(start / len(sentences), f"{start:,} of {len(sentences):,} sentences")
        if not any(wanted.values()):
            break
    vectors = store[:filled] if store is not None else np.zeros((0, 1, 1), np.float16)
    info = {"model": handle.name, "corpus": corpus, "per_word": per_word, "words": len(vocab),
            "occurrences": int(vectors.shape[0]), "memory_mb": round(vectors.nbytes / 2**20, 1),
            "build_seconds": round(time.perf_counter() - t0, 1)}
    index = CorpusIndex(list(vocab), kept_sentences, vectors, np.asarray(occ_word, np.int32),
                        np.asarray(occ_sentence, np.int32), np.asarray(occ_position, np.int16), info)
    if use_cache and index.save(folder, source):  # where the cache cannot be written: in memory only
        # read back memory-mapped, as the next session reads it: the built arrays (hundreds of MB for a
        # 6-layer model) go, and the pages the lens touches are the kernel's to drop when memory is short
        try:
            index = CorpusIndex.load(folder)
        except (OSError, ValueError, KeyError, InputError) as e:
            notice(f"cache: the corpus index just saved could not be read back ({e}); kept in memory")
    if progress is not None:
        progress(1.0, f"indexed {len(index):,} occurrences of {len(vocab):,} words ({info['memory_mb']} MB)")
    return index
