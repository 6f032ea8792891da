"""Head statistics against hand computations on a made-up attention matrix."""

import numpy as np
import pytest

from engine import api

TOKENS = ("[CLS]", "the", "bank", ",", "river", "[SEP]")


def made_up() -> np.ndarray:
    """Two layers of two heads on 6 tokens: head (0,0) looks at the previous token, (0,1) at [CLS],
    (1,0) is uniform, (1,1) splits between itself and [SEP]."""
    n = len(TOKENS)
    w = np.zeros((2, 2, n, n))
    for i in range(n):
        w[0, 0, i, max(i - 1, 0)] = 1.0
        w[0, 1, i, 0] = 1.0
        w[1, 0, i] = 1.0 / n
        w[1, 1, i, i] += 0.5
        w[1, 1, i, n - 1] += 0.5
    return w


def test_statistics_match_a_hand_computation():
    table = {(h.layer, h.head): h for h in api.head_table(made_up(), TOKENS)}
    assert len(table) == 4 and api.STATISTICS[0] == "entropy"
    prev = table[0, 0]
    assert prev.to_previous == 1.0 and prev.entropy == 0.0 and prev.to_cls == pytest.approx(2 / 6)
    assert table[0, 1].to_cls == 1.0 and table[0, 1].to_self == pytest.approx(1 / 6)
    uniform = table[1, 0]
    assert uniform.entropy == pytest.approx(np.log2(6)) and uniform.to_punct == pytest.approx(1 / 6)
    assert uniform.to_next == pytest.approx(1 / 6) and uniform.to_sep == pytest.approx(1 / 6)
    split = table[1, 1]
    # five rows split 0.5/0.5 (1 bit); the [SEP] row puts all on itself (0 bits)
    assert split.entropy == pytest.approx(5 / 6) and split.to_sep == pytest.approx((5 * 0.5 + 1) / 6)
    assert split.to_self == pytest.approx((5 * 0.5 + 1) / 6)


def test_average_rollout_and_downsampling():
    w = made_up()
    avg = api.average_heads(w)
    assert avg.shape == (2, 6, 6) and np.allclose(avg.sum(-1), 1)
    flow = api.rollout(w)
    assert flow.shape == (2, 6, 6) and np.allclose(flow.sum(-1), 1, atol=1e-5)
    first = 0.5 * avg[0] + 0.5 * np.eye(6)
    assert np.allclose(flow[0], first / first.sum(-1, keepdims=True))
    assert np.allclose(flow[1], (0.5 * avg[1] + 0.5 * np.eye(6)) @ flow[0], atol=1e-6)
    big = np.random.default_rng(0).random((300, 300))
    small = api.downsample(big, 64)
    assert small.shape == (60, 60) and small.mean() == pytest.approx(big.mean(), rel=1e-6)
    assert api.downsample(big[:10, :10], 64).shape == (10, 10)
    with pytest.raises(ValueError, match="6 tokens"):
        api.head_table(w[..., :5], TOKENS)


def test_real_attention_rows_sum_to_one_and_corpus_statistics_average(contextual_runs):
    bert = api.load(str(contextual_runs["bert"][0]))
    maps = bert.attention(("The bank of the river.", "She sat there."))
    assert np.allclose(maps.weights.sum(-1), 1, atol=1e-4) and 1 in maps.segments
    table = api.corpus_head_table(bert, ["A piano on stage.", "The car stopped.", "He ate a peach."])
    assert len(table) == 2 * 2 and all(h.sentences == 3 for h in table)
    assert all(0 <= h.to_cls <= 1 and h.entropy >= 0 for h in table)


def test_corpus_statistics_stopped_before_a_sentence_say_cancelled_and_none_given_say_so():
    import threading

    class NeverAsked:
        def attention(self, text):
            raise AssertionError("a stopped job must not compute")

    stop = threading.Event()
    stop.set()  # a new request came before the first sentence: the job ends as cancelled, not as a bug
    with pytest.raises(api.Cancelled):
        api.corpus_head_table(NeverAsked(), ["A piano on stage."], stop)
    with pytest.raises(api.InputError, match="no sentence"):
        api.corpus_head_table(NeverAsked(), [])


REPEATED = ("[CLS]", "a", "b", "c", "a", "b", "c", "[SEP]")  # a text that repeats itself: a b c a b c


def test_a_repeated_text_finds_the_induction_head_and_the_duplicate_token_head():
    """Rows 4-6 ("a b c" again) are the repeated tokens: an induction head looks from each at the token after its
    earlier copy (from the second "a" at the first "b"), a duplicate-token head at the copy itself, a previous-token
    head at neither; a text without repeats has nothing to measure (nan), and the corpus averages the repeats over
    the sentences that have them."""
    n = len(REPEATED)
    w = np.zeros((1, 3, n, n))
    for i in range(n):
        w[0, 0, i, max(i - 1, 0)] = 1.0  # previous token
        w[0, 1, i, i - 3 if 4 <= i <= 6 else i] = 1.0  # its earlier copy
        w[0, 2, i, i - 2 if 4 <= i <= 6 else i] = 1.0  # what followed its earlier copy
    table = {h.head: h for h in api.head_table(w, REPEATED)}
    assert table[2].induction == 1.0 and table[2].to_copy == 0.0
    assert table[1].to_copy == 1.0 and table[1].induction == 0.0
    assert table[0].induction == 0.0 and table[0].to_copy == 0.0 and table[0].to_previous == 1.0
    plain = api.head_table(made_up(), TOKENS)  # "the bank , river": no token twice
    assert all(np.isnan(h.to_copy) and np.isnan(h.induction) for h in plain)

    class Two:
        def attention(self, text):
            from engine.results import AttentionMaps

            tokens, weights = (REPEATED, w) if text == "repeats" else (TOKENS[:3], np.full((1, 3, 3, 3), 1 / 3))
            return AttentionMaps(tokens, weights, (0,) * len(tokens))

    averaged = {h.head: h for h in api.corpus_head_table(Two(), ["repeats", "plain"])}
    assert averaged[2].induction == 1.0 and averaged[2].sentences == 2  # (the plain sentence has no repeat)
    assert averaged[0].to_self == pytest.approx((1 / 8 + 1 / 3) / 2)
