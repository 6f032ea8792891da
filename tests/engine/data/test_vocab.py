import numpy as np
import pytest

from engine.data.vocab import Vocab
from engine.errors import CorpusError


def zipf_vocab(n=200):
    counts = (10000 / np.arange(1, n + 1)).astype(np.int64) + 1
    return Vocab([f"w{i}" for i in range(n)], counts)


def test_huffman_codes_are_prefix_free_and_shorter_for_frequent_words():
    vocab = zipf_vocab()
    codes, points, lengths = vocab.huffman()
    strings = ["".join(map(str, codes[w, : lengths[w]])) for w in range(len(vocab))]
    assert len(set(strings)) == len(strings)
    for a in strings:
        for b in strings:
            assert a == b or not b.startswith(a)
    # the most frequent word has the shortest code; lengths never shrink as counts fall
    assert lengths[0] == lengths.min()
    assert all(np.diff(lengths) >= 0)
    # every path starts at the root (V-2) and visits inner nodes only
    assert (points[np.arange(len(vocab)), 0] == len(vocab) - 2).all()
    assert points.max() <= len(vocab) - 2


def test_huffman_expected_length_near_entropy():
    vocab = zipf_vocab()
    _, _, lengths = vocab.huffman()
    p = vocab.counts / vocab.counts.sum()
    entropy = -(p * np.log2(p)).sum()
    assert entropy <= (p * lengths).sum() < entropy + 1


def test_noise_distribution_matches_counts_to_the_075():
    vocab = zipf_vocab()
    noise = vocab.noise_distribution(0.75)
    expected = vocab.counts**0.75 / (vocab.counts**0.75).sum()
    np.testing.assert_allclose(noise, expected)
    # the power flattens the distribution: rare words gain share
    assert noise[-1] > vocab.counts[-1] / vocab.counts.sum()


def test_alias_table_draws_negatives_with_the_noise_distribution():
    """The CPU kernel draws a column uniformly and keeps it with accept[i], else takes alias[i]."""
    from engine.models.word2vec.cpu import alias_table

    noise = zipf_vocab(5000).noise_distribution(0.75)
    accept, alias = alias_table(noise)
    n = len(noise)
    implied = accept.astype(np.float64) / n
    np.add.at(implied, alias, (1.0 - accept) / n)
    np.testing.assert_allclose(implied, noise, rtol=1e-5, atol=1e-9)
    rng = np.random.default_rng(0)  # and drawn that way, the frequencies follow it
    cols = rng.integers(0, n, 400_000)
    drawn = np.where(rng.random(len(cols)) < accept[cols], cols, alias[cols])
    top = np.bincount(drawn, minlength=n)[:20] / len(drawn)
    np.testing.assert_allclose(top, noise[:20], rtol=0.06)


def test_subsampling_keeps_the_expected_share():
    vocab = zipf_vocab()
    sample = 1e-3
    keep = vocab.keep_probabilities(sample)
    t = sample * vocab.total
    # word2vec's formula, and rare words (count below the threshold) are always kept
    assert keep[0] == pytest.approx((np.sqrt(vocab.counts[0] / t) + 1) * t / vocab.counts[0])
    assert (keep[vocab.counts <= t] == 1).all()
    rng = np.random.default_rng(0)
    stream = np.repeat(np.arange(len(vocab)), vocab.counts)
    kept = rng.random(len(stream)) < keep[stream]
    share_the = kept[stream == 0].mean()
    assert share_the == pytest.approx(keep[0], abs=0.02)
    assert kept.sum() == pytest.approx((keep * vocab.counts).sum(), rel=0.02)


def test_build_applies_min_count_and_orders_by_frequency():
    sents = [["a", "b", "a"], ["a", "c", "b"], ["d"]]
    v = Vocab.build(sents, min_count=2)
    assert v.words == ["a", "b"]
    assert list(v.counts) == [3, 2]


def test_build_gives_clear_errors():
    with pytest.raises(CorpusError, match="empty"):
        Vocab.build([], min_count=1)
    with pytest.raises(CorpusError, match="min_count"):
        Vocab.build([["a", "b"]], min_count=5)


def test_save_load_round_trip(tmp_path):
    v = zipf_vocab(20)
    v.save(tmp_path / "vocab.txt")
    w = Vocab.load(tmp_path / "vocab.txt")
    assert w.words == v.words and (w.counts == v.counts).all()
