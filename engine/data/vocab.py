"""Word vocabulary with the statistics word2vec needs: counts, ``min_count``, frequent-word
subsampling, the unigram^0.75 noise distribution, and Huffman codes for hierarchical softmax.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from engine.errors import CheckpointError, CorpusError


class Vocab:
    """Words sorted by count (most frequent first; ties alphabetical) and their counts."""

    def __init__(self, words: list[str], counts: np.ndarray) -> None:
        if len(words) != len(counts):
            raise ValueError("words and counts differ in length")
        self.words = list(words)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.index = {w: i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.index

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    @classmethod
    def build(
        cls,
        sentences: Iterable[list[str]],
        min_count: int = 5,
        max_vocab: int | None = None,
        reserved: tuple[str, ...] = (),
    ) -> Vocab:
        """Count words; keep those seen ``min_count`` times or more (at most ``max_vocab``).

        ``reserved`` words (e.g. "<unk>", "</s>") come first, with their count set by the caller later.
        """
        counter: Counter[str] = Counter()
        for words in sentences:
            counter.update(words)
        return cls.from_counts(counter, min_count, max_vocab, reserved)

    @classmethod
    def from_counts(cls, counter: Counter[str] | dict[str, int], min_count: int = 5, max_vocab: int | None = None,
                    reserved: tuple[str, ...] = ()) -> Vocab:
        """``build`` from words already counted (one pass over a corpus can count and encode at once)."""
        counter = Counter(counter)
        if not counter:
            raise CorpusError("the corpus is empty: no words were found in it")
        kept = [(w, c) for w, c in counter.items() if c >= min_count and w not in reserved]
        if not kept:
            top = counter.most_common(1)[0]
            raise CorpusError(
                f"no word occurs {min_count} times or more (the most frequent, '{top[0]}', occurs "
                f"{top[1]} times); lower min_count or use a larger corpus"
            )
        kept.sort(key=lambda wc: (-wc[1], wc[0]))
        if max_vocab is not None:
            kept = kept[: max(1, max_vocab - len(reserved))]
        words = list(reserved) + [w for w, _ in kept]
        counts = np.array([0] * len(reserved) + [c for _, c in kept], dtype=np.int64)
        return cls(words, counts)

    # ------------------------------------------------------------ word2vec statistics

    def keep_probabilities(self, sample: float) -> np.ndarray:
        """Probability of keeping each occurrence of a word under frequent-word subsampling.

        word2vec's formula (as in gensim): with t = sample * total,
        P(keep w) = (sqrt(c_w / t) + 1) * t / c_w, capped at 1. ``sample=0`` keeps everything.
        """
        counts = np.maximum(self.counts.astype(np.float64), 1.0)
        if sample <= 0:
            return np.ones(len(self), dtype=np.float64)
        threshold = sample * self.total
        return np.minimum(1.0, (np.sqrt(counts / threshold) + 1.0) * threshold / counts)

    def noise_distribution(self, exponent: float = 0.75) -> np.ndarray:
        """Negative-sampling distribution: P(w) proportional to count(w) ** exponent."""
        weights = self.counts.astype(np.float64) ** exponent
        return weights / weights.sum()

    def huffman(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Huffman tree over counts (as word2vec.c's CreateBinaryTree).

        Returns ``(codes, points, lengths)``: ``codes[w, :lengths[w]]`` are the 0/1 branch bits from
        the root to word w, ``points[w, :lengths[w]]`` the inner nodes on that path (0..V-2, root
        = V-2), padded with 0 past the length. Frequent words get short codes; the codes are prefix-free.
        """
        n = len(self)
        if n < 2:
            return np.zeros((n, 1), np.int8), np.zeros((n, 1), np.int32), np.ones(n, np.int32)
        # heap of (count, tiebreak, node); leaves 0..n-1, inner nodes n..2n-2
        heap = [(int(c), i, i) for i, c in enumerate(self.counts)]
        heapq.heapify(heap)
        parent = np.zeros(2 * n - 1, dtype=np.int64)
        branch = np.zeros(2 * n - 1, dtype=np.int8)
        next_node = n
        while len(heap) > 1:
            c1, _, a = heapq.heappop(heap)
            c2, _, b = heapq.heappop(heap)
            parent[a], branch[a] = next_node, 0
            parent[b], branch[b] = next_node, 1
            heapq.heappush(heap, (c1 + c2, next_node, next_node))
            next_node += 1
        root = 2 * n - 2
        code_lists: list[list[int]] = []
        point_lists: list[list[int]] = []
        for w in range(n):
            codes, points = [], []
            node = w
            while node != root:
                codes.append(int(branch[node]))
                node = int(parent[node])
                points.append(node - n)
            code_lists.append(codes[::-1])
            point_lists.append(points[::-1])
        lengths = np.array([len(c) for c in code_lists], dtype=np.int32)
        width = int(lengths.max())
        codes_arr = np.zeros((n, width), dtype=np.int8)
        points_arr = np.zeros((n, width), dtype=np.int32)
        for w in range(n):
            codes_arr[w, : lengths[w]] = code_lists[w]
            points_arr[w, : lengths[w]] = point_lists[w]
        return codes_arr, points_arr, lengths

    # ------------------------------------------------------------ files

    def save(self, path: str | Path) -> None:
        with open(path, "w", encoding="utf-8") as f:
            for w, c in zip(self.words, self.counts):
                f.write(f"{w}\t{int(c)}\n")

    @classmethod
    def load(cls, path: str | Path) -> Vocab:
        words: list[str] = []
        counts: list[int] = []
        try:
            with open(path, encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    line = line.rstrip("\n")
                    if not line:
                        continue
                    word, _, count = line.rpartition("\t")
                    if not word and not count.isdigit():
                        raise CheckpointError(f"{path}, line {lineno}: expected 'word<TAB>count'")
                    words.append(word)
                    counts.append(int(count))
        except (OSError, ValueError, UnicodeDecodeError) as e:
            raise CheckpointError(f"cannot read vocabulary {path}: {e}") from None
        return cls(words, np.array(counts, dtype=np.int64))
