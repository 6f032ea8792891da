"""Layer similarity (linear CKA): what it must not care about (rotation, scale, a shift, the width), what it must
tell apart, its debiased form against the textbook estimator, and two real models' layers word by word."""

import numpy as np
import pytest

from engine import api
from engine.inspection.layer_similarity import cka_matrix, layer_similarity, linear_cka


def _rotation(d, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    return q


def test_cka_ignores_rotation_scale_shift_and_width_but_not_a_new_arrangement():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 20)) @ rng.normal(size=(20, 20))
    turned = 7.5 * x @ _rotation(20, 1) + 3.0
    wider = np.hstack([turned, np.zeros((300, 12))])  # a wider layer holding the same arrangement
    assert linear_cka(x, turned) == pytest.approx(1.0, abs=1e-9)
    assert linear_cka(x, wider) == pytest.approx(1.0, abs=1e-9)
    shuffled = x[rng.permutation(300)]  # the same vectors given to other words
    assert linear_cka(x, shuffled) < 0.2
    half = np.hstack([x[:, :10], rng.normal(size=(300, 10)) * x[:, 10:].std()])  # half the directions kept
    assert 0.2 < linear_cka(x, half) < 0.95


def _unbiased_hsic(gram_x, gram_y):
    """Song et al. (2012), eq. 5, from the n × n Gram matrices: written out independently of the feature-space form."""
    n = len(gram_x)
    k, m = gram_x.copy(), gram_y.copy()
    np.fill_diagonal(k, 0.0)
    np.fill_diagonal(m, 0.0)
    one = np.ones(n)
    return (np.trace(k @ m) + (one @ k @ one) * (one @ m @ one) / ((n - 1) * (n - 2))
            - 2.0 / (n - 2) * (one @ k @ m @ one)) / (n * (n - 3))


def test_debiased_cka_is_the_unbiased_hsic_estimator_and_sits_near_zero_for_unrelated_layers():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(60, 40)), rng.normal(size=(60, 50))
    xc, yc = x - x.mean(0), y - y.mean(0)
    gx, gy = xc @ xc.T, yc @ yc.T
    expected = _unbiased_hsic(gx, gy) / np.sqrt(_unbiased_hsic(gx, gx) * _unbiased_hsic(gy, gy))
    assert linear_cka(x, y, debiased=True) == pytest.approx(expected, abs=1e-9)
    # few words beside the widths: the plain estimate of two unrelated layers is far above 0, the debiased one is not
    assert linear_cka(x, y) > 0.3
    assert abs(linear_cka(x, y, debiased=True)) < 0.1


def test_every_layer_against_every_layer_and_bad_shapes_said():
    rng = np.random.default_rng(3)
    a = [rng.normal(size=(50, 8)) for _ in range(3)]
    m = cka_matrix(a, [a[2], a[0]])
    assert m.shape == (3, 2)
    assert m[2, 0] == pytest.approx(1.0) and m[0, 1] == pytest.approx(1.0) and m[1, 0] < 0.5
    with pytest.raises(api.InputError, match="same examples"):
        linear_cka(a[0], a[1][:40])
    assert np.isnan(linear_cka(np.ones((10, 3)), a[0][:10]))  # every word one vector: nothing to compare


@pytest.fixture(scope="module")
def sentences(topic_corpus):
    lines = [line for line in topic_corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines[:24]


def test_a_model_against_itself_and_against_another_family(contextual_runs, sentences):
    bert = api.load(contextual_runs["bert"][0])
    gpt = api.load(contextual_runs["gpt"][0])
    seen = []
    same = layer_similarity(bert, bert, sentences, progress=lambda f, m: seen.append(f))
    layers = bert.contextual_vectors(sentences[0]).vectors.shape[0]
    assert same.cka.shape == (layers, layers)
    np.testing.assert_allclose(np.diag(same.cka), 1.0, atol=1e-6)
    assert same.words > 100 and same.sentences == len(sentences) and same.skipped == 0
    assert seen == sorted(seen) and seen[-1] >= 0.9
    other = layer_similarity(bert, gpt, sentences)
    assert other.cka.shape == (layers, gpt.contextual_vectors(sentences[0]).vectors.shape[0])
    assert np.all(other.cka[:, 1:] < 0.999)  # two models trained apart do not arrange the words alike
    assert list(other.best_match()) == list(other.cka.argmax(1))


def test_a_checkpoint_against_the_last_one_changed_most_where_training_moved_it(contextual_runs, sentences):
    run_dir = contextual_runs["bert"][0]
    kept = api.run_history(run_dir)
    assert kept[0].step < kept[-1].step  # (the fixture keeps every 20 of its 40 steps)
    first, last = api.load(kept[0].path), api.load(kept[-1].path)
    r = layer_similarity(first, last, sentences)
    assert np.all(np.diag(r.cka) < 0.9999)  # 20 more steps moved every layer
    assert np.all(np.diag(r.cka) > 0.1)  # … but not out of all likeness


def test_a_static_model_and_empty_text_are_refused_with_why(contextual_runs, runs, sentences):
    bert = api.load(contextual_runs["bert"][0])
    with pytest.raises(api.Unsupported):
        layer_similarity(bert, api.load(runs["word2vec"][0]), sentences)
    with pytest.raises(api.InputError, match="no sentences"):
        layer_similarity(bert, bert, ["", "  "])


def _count_reads(handle, calls):
    read = handle.contextual_vectors_batch

    def batch(sentences):
        calls.append(len(sentences))
        return read(sentences)

    handle.contextual_vectors_batch = batch


def test_a_models_words_are_read_once_for_the_next_comparison_and_let_go_with_the_model(contextual_runs, sentences):
    import gc

    from engine.inspection import layer_similarity as module

    bert = api.load(contextual_runs["bert"][0])
    elmo = api.load(contextual_runs["elmo"][0])
    calls = []
    _count_reads(bert, calls)
    first = layer_similarity(bert, elmo, sentences)
    assert sum(calls) == len(sentences)
    again = layer_similarity(bert, api.load(contextual_runs["gpt"][0]), sentences)  # A against another B
    assert sum(calls) == len(sentences)  # A was not read again
    np.testing.assert_array_equal(first.cka[:, 0], layer_similarity(bert, elmo, sentences).cka[:, 0])
    layer_similarity(bert, elmo, sentences[:-1])  # other sentences: read anew
    assert sum(calls) == 2 * len(sentences) - 1
    assert again.cka.shape[0] == first.cka.shape[0]
    assert any(entry.handle() is bert for entry in module._ENCODED.values())
    del bert
    gc.collect()
    assert module._ENCODED and all(entry.handle() is not None for entry in module._ENCODED.values())  # (gone with it)
