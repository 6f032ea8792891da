"""n-gram language model, orders 1-5, with add-one (Laplace) or interpolated Kneser-Ney smoothing.

Each sentence is padded with n-1 ``<s>`` and ends with ``</s>``; P(sentence) = prod_t P(w_t | h_t),
h_t the n-1 previous words.

Laplace (the seed lectures):   P(w | h) = (c(h w) + 1) / (c(h) + V)

Interpolated Kneser-Ney (Chen & Goodman 1998), discount D_m = n1 / (n1 + 2 n2) per order m:
    P_m(w | h) = max(c_m(h w) - D_m, 0) / c_m(h .) + D_m N1+(h .) / c_m(h .) * P_{m-1}(w | h')
where c_m is the raw count at the highest order and the continuation count N1+(. h w) below it,
h' drops the oldest word, and P_0 is uniform over the vocabulary. A history never seen falls back
to P_{m-1}.

Pruning (``prune`` k > 1) drops the m-grams (m > 1) seen fewer than k times, as SRILM's ``-gtNmin``
cut-offs do, after the statistics are counted on all of them: the discounts, c_m(h .) and the back-off
weight stay the full model's, and each dropped m-gram's share max(c_m(h w) - D_m, 0) / c_m(h .) goes to
its history's back-off, so every P_m(. | h) still sums to one. A dropped history's m-grams were all dropped
(none outlives its prefix: c(h w) <= c(h)); its back-off weight was then 1, which is what falling back to
P_{m-1} gives.

Storage is compact and not pickled: in memory the m-grams of each order are sorted int64 keys
``index_of_prefix * V + last_word`` (a trie flattened into arrays), found with ``np.searchsorted``; on disk each
order's last words (int32) and where each prefix's words start, the keys rebuilt when loaded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.config.settings import NGramConfig
from engine.data.vocab import Vocab

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
RESERVED = (UNK, BOS, EOS)


def flatten(sentences: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Lists of ids -> one flat id array and sentence starts (``starts[-1] == len(ids)``)."""
    lengths = np.fromiter((len(s) for s in sentences), np.int64, count=len(sentences))
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ids = np.fromiter((i for s in sentences for i in s), np.int64, count=int(starts[-1]))
    return ids, starts


def pad_flat(ids: np.ndarray, starts: np.ndarray, pad: int, bos: int, eos: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each sentence of a flat array as ``pad`` x <s>, its words, </s>: the padded ids, the sentence
    number of each position, and which positions are predicted (all but the <s> padding). Vectorised:
    no Python loop over sentences, so a streamed corpus of millions of words stays compact."""
    lengths = np.diff(starts)
    n = len(lengths)
    seg = lengths + pad + 1  # padded length of each sentence
    seg_start = np.concatenate([[0], np.cumsum(seg)[:-1]]).astype(np.int64)
    out = np.full(int(seg.sum()), bos, np.int64)
    word_pos = np.arange(len(ids), dtype=np.int64) + np.repeat(np.arange(n, dtype=np.int64) * (pad + 1) + pad, lengths)
    out[word_pos] = ids
    out[seg_start + pad + lengths] = eos
    sent = np.repeat(np.arange(n, dtype=np.int64), seg)
    target = (np.arange(len(out)) - np.repeat(seg_start, seg)) >= pad
    return out, sent, target


def pad_sentences(sentences: list[list[int]], order: int, bos: int, eos: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat padded ids, the sentence number of each position, and which positions are predicted."""
    return pad_flat(*flatten(sentences), order - 1, bos, eos)


@dataclass
class OrderTable:
    keys: np.ndarray  # (n_m,) sorted int64: prefix_index * V + last word
    counts: np.ndarray  # (n_m,) raw counts
    cont: np.ndarray  # (n_m,) continuation counts N1+(. g); unused at the top order


class NGramLM:
    def __init__(self, vocab: Vocab, cfg: NGramConfig) -> None:
        if not 1 <= cfg.order <= 5:
            raise ValueError("n-gram order must be 1 to 5")
        self.vocab, self.cfg = vocab, cfg
        self.V = len(vocab)
        self.tables: list[OrderTable] = []  # tables[m-1] holds the m-grams
        self._finish_called = False
        self.pruned = False

    # ------------------------------------------------------------ building

    def _lookup(self, m: int, prefix_idx: np.ndarray, word: np.ndarray) -> np.ndarray:
        """Index of each m-gram (given its (m-1)-gram prefix index and last word) in table m, or -1."""
        if m == 1:
            return word.astype(np.int64)
        table = self.tables[m - 1]
        keys = prefix_idx * self.V + word
        pos = np.searchsorted(table.keys, keys)
        pos_c = np.minimum(pos, max(len(table.keys) - 1, 0))
        found = (prefix_idx >= 0) & (len(table.keys) > 0) & (table.keys[pos_c] == keys) if len(table.keys) else np.zeros(len(keys), bool)
        return np.where(found, pos_c, -1)

    def fit(self, sentences: list[list[int]]) -> NGramLM:
        return self.fit_flat(*flatten(sentences))

    def fit_flat(self, flat_ids: np.ndarray, starts: np.ndarray) -> NGramLM:
        """Count every n-gram of the sentences held as one flat id array and their starts."""
        N, V = self.cfg.order, self.V
        bos, eos = self.vocab.index[BOS], self.vocab.index[EOS]
        ids, sent, _ = pad_flat(np.asarray(flat_ids, np.int64), starts, N - 1, bos, eos)
        n = len(ids)
        self.tables = [OrderTable(np.arange(V, dtype=np.int64), np.bincount(ids, minlength=V).astype(np.int64),
                                  np.zeros(V, np.int64))]
        prev = ids.astype(np.int64)  # index of the (m-1)-gram starting at each position
        for m in range(2, N + 1):
            valid = np.zeros(n, bool)
            valid[: n - m + 1] = (sent[: n - m + 1] == sent[m - 1 :]) & (prev[: n - m + 1] >= 0)
            keys = prev[: n - m + 1][valid[: n - m + 1]] * V + ids[m - 1 :][valid[: n - m + 1]]
            uniq, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
            self.tables.append(OrderTable(uniq, counts.astype(np.int64), np.zeros(len(uniq), np.int64)))
            cur = np.full(n, -1, np.int64)
            cur[np.flatnonzero(valid)] = inverse
            # continuation counts of the (m-1)-grams: distinct words seen before them = number of
            # distinct m-grams whose suffix they are; the suffix of the m-gram at s starts at s+1
            first = np.unique(inverse, return_index=True)[1]
            starts = np.flatnonzero(valid)[first]
            suffix_idx = self._suffix_indices(ids, sent, starts, m - 1)
            ok = suffix_idx >= 0
            self.tables[m - 2].cont += np.bincount(suffix_idx[ok], minlength=len(self.tables[m - 2].keys)).astype(np.int64)
            prev = cur
        self._finish()
        if self.cfg.prune > 1 and self.cfg.smoothing == "kneser-ney" and N > 1:
            self._prune(self.cfg.prune)
        return self

    def _prune(self, k: int) -> None:
        """Drop the m-grams (m > 1) seen fewer than ``k`` times; their mass goes to their history's back-off
        (see the module's note). The statistics were counted before, on every m-gram."""
        N, V = self.cfg.order, self.V
        keeps: list[np.ndarray] = [np.ones(V, bool)]
        for m in range(2, N + 1):  # the dropped mass, by the histories' indices before any is dropped
            t = self.tables[m - 1]
            keep = t.counts >= k
            stat = (t.counts if m == N else t.cont)[~keep].astype(np.float64)
            share = np.maximum(stat - self.discount[m - 1], 0.0)
            self.backoff[m - 1] = self.backoff[m - 1] + np.bincount(
                t.keys[~keep] // V, weights=share, minlength=len(self.backoff[m - 1]))
            keeps.append(keep)
        for m in range(2, N + 1):  # then the tables, each m-gram's prefix renumbered as its order was thinned
            t, keep, above = self.tables[m - 1], keeps[m - 1], keeps[m - 2]
            renumber = np.cumsum(above) - 1
            prefix, last = t.keys[keep] // V, t.keys[keep] % V
            self.tables[m - 1] = OrderTable(renumber[prefix] * V + last, t.counts[keep], t.cont[keep])
            self.hist_total[m - 1] = self.hist_total[m - 1][above]
            self.backoff[m - 1] = self.backoff[m - 1][above]
        self.pruned = True

    def _suffix_indices(self, ids: np.ndarray, sent: np.ndarray, starts: np.ndarray, length: int) -> np.ndarray:
        """Index (in table ``length``) of the ``length``-gram starting at each of ``starts`` + 1."""
        pos = starts + 1
        idx = ids[pos].astype(np.int64)
        for j in range(2, length + 1):
            idx = np.where(idx >= 0, self._lookup(j, np.where(idx >= 0, idx, 0), ids[pos + j - 1]), -1)
        return idx

    def _finish(self) -> None:
        """Per-order discounts and per-history totals (c(h .) and N1+(h .)) used when scoring."""
        N, V = self.cfg.order, self.V
        self.discount, self.hist_total, self.hist_types, self.laplace_hist = [], [], [], []
        self.backoff: list[np.ndarray] = []  # per history: D_m N1+(h .) (+ a pruned model's dropped shares)
        for m in range(1, N + 1):
            t = self.tables[m - 1]
            c = t.counts if m == N else t.cont
            n1, n2 = int((c == 1).sum()), int((c == 2).sum())
            self.discount.append(n1 / (n1 + 2 * n2) if n1 + 2 * n2 > 0 else 0.5)
            if m == 1:
                self.hist_total.append(np.array([c.sum()], np.int64))
                self.hist_types.append(np.array([(c > 0).sum()], np.int64))
                self.laplace_hist.append(np.array([t.counts.sum()], np.int64))
            else:
                prefix = t.keys // V
                size = len(self.tables[m - 2].keys)
                self.hist_total.append(np.bincount(prefix, weights=c, minlength=size).astype(np.int64))
                self.hist_types.append(np.bincount(prefix, weights=(c > 0), minlength=size).astype(np.int64))
                self.laplace_hist.append(np.bincount(prefix, weights=t.counts, minlength=size).astype(np.int64))
            self.backoff.append(self.discount[-1] * self.hist_types[-1].astype(np.float64))

    # ------------------------------------------------------------ scoring

    def token_logprobs(self, sentences: list[list[int]]) -> list[np.ndarray]:
        """Natural-log probability of every word and of ``</s>`` in each sentence."""
        if not sentences:
            return []
        bos, eos = self.vocab.index[BOS], self.vocab.index[EOS]
        ids, sent, target = pad_sentences(sentences, self.cfg.order, bos, eos)
        pos = np.flatnonzero(target)
        logp = self._logprobs(ids[pos], self._histories(ids, pos))
        bounds = np.cumsum([len(s) + 1 for s in sentences])[:-1]
        return np.split(logp, bounds)

    def next_word_logprobs(self, ids: list[int]) -> np.ndarray:
        """Natural-log probability of every word of the vocabulary (and of ``</s>``) after the words ``ids`` of a
        sentence begun: the model's whole next-word distribution, as ``token_logprobs`` scores each word."""
        N, V = self.cfg.order, self.V
        padded = np.asarray([self.vocab.index[BOS]] * (N - 1) + [int(i) for i in ids], np.int64)
        hist = {m: np.full(V, h[0], np.int64) for m, h in self._histories(padded, np.asarray([len(padded)])).items()}
        return self._logprobs(np.arange(V, dtype=np.int64), hist)

    def _histories(self, ids: np.ndarray, pos: np.ndarray) -> dict[int, np.ndarray]:
        """hist[m] = index of the (m-1)-gram of ``ids`` ending just before each of ``pos``, for m = 2..N (-1: unseen)."""
        hist: dict[int, np.ndarray] = {}
        for m in range(2, self.cfg.order + 1):
            start = pos - (m - 1)
            idx = ids[start].astype(np.int64)
            for j in range(2, m):
                idx = np.where(idx >= 0, self._lookup(j, np.where(idx >= 0, idx, 0), ids[start + j - 1]), -1)
            hist[m] = idx
        return hist

    def _logprobs(self, word: np.ndarray, hist: dict[int, np.ndarray]) -> np.ndarray:
        """log p(word | its history), smoothed as configured."""
        N = self.cfg.order
        if self.cfg.smoothing == "laplace":
            if N == 1:
                c_hw = self.tables[0].counts[word]
                c_h = np.full(len(word), self.laplace_hist[0][0])
            else:
                h = hist[N]
                g = self._lookup(N, np.where(h >= 0, h, 0), word)
                g = np.where(h >= 0, g, -1)
                c_hw = np.where(g >= 0, self.tables[N - 1].counts[np.maximum(g, 0)], 0)
                c_h = np.where(h >= 0, self.laplace_hist[N - 1][np.maximum(h, 0)], 0)
            p = (c_hw + 1.0) / (c_h + self.V)
        else:
            p = self._kneser_ney(word, hist)
        return np.log(np.maximum(p, 1e-300))

    def _kneser_ney(self, word: np.ndarray, hist: dict[int, np.ndarray]) -> np.ndarray:
        N = self.cfg.order
        t1 = self.tables[0]
        c1 = t1.counts if N == 1 else t1.cont
        D = self.discount[0]
        total, back = self.hist_total[0][0], self.backoff[0][0]
        p = np.maximum(c1[word] - D, 0) / total + back / total / self.V
        for m in range(2, N + 1):
            h = hist[m]
            has_h = h >= 0
            hs = np.maximum(h, 0)
            tot = np.where(has_h, self.hist_total[m - 1][hs], 0).astype(np.float64)
            bo = np.where(has_h, self.backoff[m - 1][hs], 0.0)
            g = np.where(has_h, self._lookup(m, hs, word), -1)
            t = self.tables[m - 1]
            c = t.counts if m == N else t.cont
            c_hw = np.where(g >= 0, c[np.maximum(g, 0)], 0).astype(np.float64)
            D = self.discount[m - 1]
            seen = tot > 0
            safe = np.where(seen, tot, 1.0)
            p = np.where(seen, np.maximum(c_hw - D, 0) / safe + bo / safe * p, p)
        return p

    def perplexity(self, sentences: list[list[int]]) -> float:
        lps = self.token_logprobs(sentences)
        n = sum(len(x) for x in lps)
        return math.exp(-sum(float(x.sum()) for x in lps) / max(n, 1))

    # ------------------------------------------------------------ state

    def _needed(self, m: int) -> tuple[str, ...]:
        """The counts of order ``m`` that scoring reads (a pruned Kneser-Ney model: the raw counts at the top order,
        the continuation counts below; the others were only needed to count the statistics it saves)."""
        if not self.pruned:
            return ("counts", "cont")
        return ("counts",) if m == self.cfg.order else ("cont",)

    def tensors(self) -> dict[str, np.ndarray]:
        """The tables as a trie of arrays: the m-grams of each order (m > 1) grouped by their (m-1)-gram prefix,
        each group's last words (``order{m}.words``, int32) and where each prefix's group starts in them
        (``order{m}.starts``); counts as int32 where they fit; a pruned model's statistics of the full one. (Each
        m-gram as one int64 key took twice the bytes: a file still written so loads as ever, ``load_tensors``.)"""
        out: dict[str, np.ndarray] = {}
        for m, t in enumerate(self.tables, 1):
            if m > 1:
                out[f"order{m}.words"] = (t.keys % self.V).astype(np.int32)
                groups = np.bincount(t.keys // self.V, minlength=len(self.tables[m - 2].keys))
                starts = np.concatenate([[0], np.cumsum(groups)])
                out[f"order{m}.starts"] = starts.astype(np.int32 if starts[-1] < 2**31 else np.int64)
            for part in self._needed(m):
                values = getattr(t, part)
                out[f"order{m}.{part}"] = values.astype(np.int32) if values.max(initial=0) < 2**31 else values
            if self.pruned:  # (float32 back-off: a relative error of 1e-7 on a weight below 1)
                total = self.hist_total[m - 1]
                out[f"order{m}.total"] = total.astype(np.int32) if total.max(initial=0) < 2**31 else total
                out[f"order{m}.backoff"] = self.backoff[m - 1].astype(np.float32)
        if self.pruned:
            out["discount"] = np.asarray(self.discount, np.float64)
        return out

    @staticmethod
    def tensor_shapes(order: int, sizes: list[int], pruned: bool, keys: bool = False) -> dict[str, tuple[int, ...]]:
        """The tensors a model of ``order`` with ``sizes[m-1]`` m-grams saves, and their shapes (``keys``: as
        files written before the trie were, every order's m-grams as int64 keys and both counts)."""
        shapes: dict[str, tuple[int, ...]] = {}
        for m in range(1, order + 1):
            if keys:
                parts: tuple[str, ...] = ("keys", "counts", "cont")
            else:
                if m > 1:
                    shapes[f"order{m}.words"] = (sizes[m - 1],)
                    shapes[f"order{m}.starts"] = (sizes[m - 2] + 1,)
                parts = ("counts", "cont") if not pruned else ("counts",) if m == order else ("cont",)
            for part in parts:
                shapes[f"order{m}.{part}"] = (sizes[m - 1],)
            if pruned:  # per history: the (m-1)-grams (one empty history for the unigrams)
                shapes[f"order{m}.total"] = shapes[f"order{m}.backoff"] = (1 if m == 1 else sizes[m - 2],)
        if pruned:
            shapes["discount"] = (order,)
        return shapes

    @staticmethod
    def sizes_of(tensors: dict[str, Any], order: int, vocabulary: int) -> list[int]:
        """How many m-grams of each order the saved ``tensors`` hold (either way of writing them)."""
        def size(m: int) -> int:
            for name in (f"order{m}.words", f"order{m}.keys"):
                if name in tensors:
                    return int(tensors[name].shape[0])
            return 0

        return [vocabulary if m == 1 else size(m) for m in range(1, order + 1)]

    def load_tensors(self, tensors: dict[str, np.ndarray]) -> None:
        self.pruned = "discount" in tensors
        tables = []
        for m in range(1, self.cfg.order + 1):
            if f"order{m}.keys" in tensors:  # written before the trie
                keys = np.asarray(tensors[f"order{m}.keys"], np.int64)
            elif m == 1:
                keys = np.arange(self.V, dtype=np.int64)
            else:
                starts = np.asarray(tensors[f"order{m}.starts"], np.int64)
                prefix = np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(starts))
                keys = prefix * self.V + np.asarray(tensors[f"order{m}.words"], np.int64)
            zeros = np.zeros(len(keys), np.int64)  # (a count scoring does not read, not saved)
            tables.append(OrderTable(keys, *(np.asarray(tensors[f"order{m}.{part}"], np.int64)
                                             if f"order{m}.{part}" in tensors else zeros for part in ("counts", "cont"))))
        self.tables = tables
        self._finish()
        if self.pruned:  # the full model's statistics, which the tables no longer give
            self.discount = [float(d) for d in np.asarray(tensors["discount"], np.float64)]
            self.hist_total = [np.asarray(tensors[f"order{m}.total"], np.int64) for m in range(1, self.cfg.order + 1)]
            self.backoff = [np.asarray(tensors[f"order{m}.backoff"], np.float64) for m in range(1, self.cfg.order + 1)]
