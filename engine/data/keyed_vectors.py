"""Static word vectors as plain numpy: neighbours, analogies, and the word2vec text/binary formats.

Read-only and small, like gensim's ``KeyedVectors`` beside its training model. Files in the word2vec
formats are parsed here (never unpickled); GloVe's headerless text format is accepted too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from engine.data.word_list import WordList
from engine.errors import CheckpointError, InputError, UnknownWord

# the app's static neighbours leave out the words a model saw fewer times than this in training (where it kept its
# counts): chosen by the rule bench/quality/rare_neighbours.py declares (bench/quality/RESULTS.md: analogy accuracy
# of the shipped word2vec-sgns 0.179 among every word, 0.200 among the words seen 20 times or more)
SEEN_AT_LEAST = 20


class StaticVectors:
    """``words`` are kept as a ``WordList`` (one buffer, not a str per word: see there why); the row of a word that
    appears twice is its first. ``counts``: how often the model saw each word in training (a run's vocab.txt), where
    known: neighbours and analogies can then leave out the words seen too rarely for their vectors to mean much
    (``min_count``); vectors without counts (GloVe 6B, a vectors file) are never filtered."""

    def __init__(self, words: Sequence[str], vectors: np.ndarray, name: str = "vectors",
                 oov: Callable[[str], np.ndarray | None] | None = None, counts: np.ndarray | None = None) -> None:
        if vectors.ndim != 2 or len(words) != vectors.shape[0]:
            raise ValueError("need one vector per word")
        if counts is not None and len(counts) != len(words):
            raise ValueError("need one count per word")
        self.counts = None if counts is None else np.asarray(counts, dtype=np.int64)
        self.words = words if isinstance(words, WordList) else WordList.from_words(words)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        with np.errstate(over="ignore", invalid="ignore"):  # a diverged run's vectors: too long to measure is inf
            norms = np.linalg.norm(self.vectors, axis=1, keepdims=True)
            self.unit = self.vectors / np.maximum(norms, 1e-12)
        self.name = name
        self._oov = oov  # sub-word models build vectors for unknown words

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.words

    def vector(self, word: str) -> np.ndarray:
        if not isinstance(word, str) or not word.strip():
            raise InputError("type a word")
        i = self.words.find(word)
        if i is not None:
            return self.vectors[i].copy()
        if self._oov is not None:
            v = self._oov(word)
            if v is not None:
                return v
        raise UnknownWord(word, self.name)

    def count(self, word: str) -> int | None:
        """How often the model saw ``word`` in training: None where it kept no counts, 0 for a word it does not
        have."""
        if self.counts is None:
            return None
        i = self.words.find(word)
        return 0 if i is None else int(self.counts[i])

    def _unit(self, word: str) -> np.ndarray:
        v = self.vector(word)
        return v / max(float(np.linalg.norm(v)), 1e-12)

    def neighbours(self, word: str, k: int = 10, min_count: int = 1) -> list[tuple[str, float]]:
        """Nearest words by cosine similarity, excluding the word itself (and, where counts are known, the words
        seen fewer than ``min_count`` times)."""
        return self.nearest_to(self._unit(word), k, exclude={word}, min_count=min_count)

    def filters(self, min_count: int) -> bool:
        """Whether ``min_count`` leaves any word out (counts known, some word seen fewer times)."""
        return self.counts is not None and min_count > 1 and bool(len(self.counts)) and int(self.counts.min()) < min_count

    def nearest_to(self, direction: np.ndarray, k: int, exclude: set[str] = frozenset(),  # type: ignore[assignment]
                   min_count: int = 1) -> list[tuple[str, float]]:
        k = max(0, int(k))
        if k == 0:
            return []
        sims = self.unit @ (direction / max(float(np.linalg.norm(direction)), 1e-12))
        if self.filters(min_count):
            assert self.counts is not None
            sims[self.counts < min_count] = -np.inf
        take = min(len(sims), k + len(exclude))
        top = np.argpartition(-sims, take - 1)[:take]
        top = top[np.argsort(-sims[top])]
        out = [(self.words[i], float(sims[i])) for i in top if self.words[i] not in exclude and sims[i] > -np.inf]
        return out[:k]

    def analogy(self, a: str, b: str, c: str, k: int = 5, min_count: int = 1) -> list[tuple[str, float]]:
        """a is to b as c is to ?  (3CosAdd: nearest to b - a + c, excluding a, b, c and, where counts are known,
        the words seen fewer than ``min_count`` times)."""
        target = self._unit(b) - self._unit(a) + self._unit(c)
        return self.nearest_to(target, k, exclude={a, b, c}, min_count=min_count)

    def similarity(self, a: str, b: str) -> float:
        return float(self._unit(a) @ self._unit(b))

    def to_gensim(self):
        from gensim.models import KeyedVectors

        kv = KeyedVectors(self.dim)
        kv.add_vectors(list(self.words), self.vectors)
        return kv


# ---------------------------------------------------------------- word2vec formats

def save_word2vec_format(vectors: StaticVectors, path: str | Path, binary: bool = False) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(f"{len(vectors)} {vectors.dim}\n".encode())
        for w, v in zip(vectors.words, vectors.vectors):
            if binary:
                f.write(w.encode("utf-8") + b" " + v.astype("<f4").tobytes() + b"\n")
            else:
                f.write((w + " " + " ".join(f"{x:.6g}" for x in v) + "\n").encode("utf-8"))
    tmp.replace(path)


def _is_binary(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(4096)
    header, _, rest = head.partition(b"\n")
    try:
        rest.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def load_word2vec_format(path: str | Path, binary: bool | None = None, limit: int | None = None) -> StaticVectors:
    """Load vectors written by the original word2vec tool, gensim, fastText (.vec) or GloVe (no header)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no vectors file at {path}")
    if binary is None:
        binary = _is_binary(path)
    try:
        if binary:
            return _load_binary(path, limit)
        return _load_text(path, limit)
    except (ValueError, IndexError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path} is not a word2vec-format vectors file ({e})") from None


def _load_binary(path: Path, limit: int | None) -> StaticVectors:
    with open(path, "rb") as f:
        count, dim = (int(x) for x in f.readline().split())
        if limit:
            count = min(count, limit)
        words, rows = [], np.empty((count, dim), dtype=np.float32)
        for i in range(count):
            word = bytearray()
            while True:
                ch = f.read(1)
                if not ch:
                    raise ValueError(f"file ends after {i} of {count} vectors (truncated?)")
                if ch == b" ":
                    break
                if ch != b"\n":
                    word += ch
            data = f.read(4 * dim)
            if len(data) < 4 * dim:
                raise ValueError(f"file ends inside vector {i + 1} (truncated?)")
            rows[i] = np.frombuffer(data, dtype="<f4")
            words.append(word.decode("utf-8", errors="replace"))
    return StaticVectors(words, rows, name=path.name)


def _load_text(path: Path, limit: int | None) -> StaticVectors:
    with open(path, encoding="utf-8") as f:
        first = f.readline().rstrip("\n").split(" ")
        words: list[str] = []
        rows: list[np.ndarray] = []
        dim = None
        if len(first) == 2 and all(p.isdigit() for p in first):
            dim = int(first[1])
        else:  # GloVe: no header line
            words.append(first[0])
            rows.append(np.asarray(first[1:], dtype=np.float32))
            dim = len(first) - 1
        for line in f:
            if limit and len(words) >= limit:
                break
            parts = line.rstrip("\n").rstrip(" ").split(" ")
            if len(parts) != dim + 1:
                raise ValueError(f"line {len(words) + 2} has {len(parts) - 1} numbers, expected {dim}")
            words.append(parts[0])
            rows.append(np.asarray(parts[1:], dtype=np.float32))
    if not rows:
        raise ValueError("no vectors in file")
    return StaticVectors(words, np.stack(rows), name=path.name)
