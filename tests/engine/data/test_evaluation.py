"""Word-similarity scores: the numpy one that runs at the end of training equals gensim's own."""

import pytest

from engine import api
from engine.data.evaluation import quick_word_similarity, word_similarity


@pytest.mark.parametrize("dataset", ["wordsim353", "simlex999"])
def test_the_quick_spearman_equals_gensims(dataset):
    vectors = api.load("glove-6b-50d").static_vectors()
    quick, gensim = quick_word_similarity(vectors, dataset), word_similarity(vectors, dataset)
    assert quick["spearman"] == pytest.approx(gensim["spearman"], abs=1e-9)
    assert quick["coverage"] == pytest.approx(gensim["coverage"], abs=1e-9)


def test_too_few_known_pairs_give_no_correlation():
    import numpy as np

    from engine.data.keyed_vectors import StaticVectors

    tiny = StaticVectors(["zzzqx", "qqqzx"], np.eye(2, dtype=np.float32))  # no pair of the set is known
    assert quick_word_similarity(tiny)["spearman"] is None
