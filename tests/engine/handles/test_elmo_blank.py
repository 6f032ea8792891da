"""ELMo fills a [MASK] with its two language models: the forward LM's guess from the words before the blank times
the backward LM's from the words after it (engine.handles.elmo_blank)."""

import contextlib

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import api
from engine.errors import InputError, Word2BertError
from engine.handles.elmo_blank import elmo_fill_mask
from engine.models.ngram import BOS, EOS, UNK
from engine.results import Capability


@pytest.fixture(scope="module")
def elmo(contextual_runs):
    return api.load(contextual_runs["elmo"][0])


def _directions(elmo, words, blank):
    """The forward LM's distribution for word ``blank`` (from the words before it) and the backward LM's (from the
    words after it), read off the whole sentence's pass with the real word in place."""
    with torch.inference_mode():
        forward, backward = elmo.model.log_probs(elmo._chars(words))  # (T, V): row t predicts t + 1 / t - 1
    return forward[blank].float().cpu().numpy(), backward[blank + 2].float().cpu().numpy()  # (<s> is row 0: the word is row blank + 1)


@pytest.mark.parametrize("sentence, blank", [("the cat sat on the mat .", 5), ("the cat sat on the mat .", 0),
                                             ("the cat sat on the mat .", 6)])
def test_the_blank_is_the_two_directions_guesses_multiplied_over_the_words_prior(elmo, sentence, blank):
    words = sentence.split()
    masked = " ".join("[MASK]" if i == blank else w for i, w in enumerate(words))
    forward, backward = _directions(elmo, words, blank)  # (what stands in the blank changes neither)
    counts = np.asarray(elmo.counts, np.float64) + 1  # the word's share of the training corpus, in both guesses
    scores = forward + backward - np.log(counts / counts.sum())
    for marker in (BOS, EOS, UNK):
        scores[elmo.word_list.find(marker)] = -np.inf
    expected = np.exp(scores - np.logaddexp.reduce(scores))
    order = np.argsort(-expected)[:7]
    [answer] = elmo.fill_mask(masked, k=7)
    assert answer.position == blank
    assert answer.tokens == tuple(elmo.word_list[int(i)] for i in order)
    np.testing.assert_allclose(answer.probs, expected[order], rtol=1e-4, atol=1e-7)
    assert not {BOS, EOS, UNK} & set(answer.tokens)
    for side, alone in (("before", forward), ("after", backward)):  # each LM's own three likeliest, said beside it
        shown = [w for w in (elmo.word_list[int(i)] for i in np.argsort(-alone)) if w not in (BOS, EOS, UNK)][:3]
        assert dict(answer.sides)[side] == tuple(shown)
    plain = forward + backward  # the plain product (the study's other way)
    plain[[elmo.word_list.find(m) for m in (BOS, EOS, UNK)]] = -np.inf
    [product] = elmo_fill_mask(elmo, masked, 3, prior=False)
    np.testing.assert_allclose(product.probs, np.sort(np.exp(plain - np.logaddexp.reduce(plain)))[::-1][:3], rtol=1e-4)
    for sides, alone in (("before", forward), ("after", backward)):  # one LM's guess alone (the bench's ablation)
        alone = alone.copy()
        alone[[elmo.word_list.find(m) for m in (BOS, EOS, UNK)]] = -np.inf
        [one] = elmo_fill_mask(elmo, masked, 3, sides=sides)
        np.testing.assert_allclose(one.probs, np.sort(np.exp(alone - np.logaddexp.reduce(alone)))[::-1][:3], rtol=1e-4)


def test_the_words_after_the_blank_change_its_guess_as_the_backward_lm_reads_them(elmo):
    before = elmo.fill_mask("the cat sat on the [MASK] .", k=20)[0]
    after = elmo.fill_mask("the cat sat on the [MASK] of the river .", k=20)[0]
    assert before.tokens != after.tokens  # the same words before it: only the backward LM could tell them apart
    forward = elmo.next_token("the cat sat on the", k=20)
    assert before.tokens != forward.tokens  # nor is it the forward LM's next word alone


def test_one_blank_at_a_time_and_the_lab_points_to_the_next_token_view(elmo):
    assert Capability.FILL_BLANK in elmo.capabilities and Capability.MASKED_LM not in elmo.capabilities
    with pytest.raises(InputError, match="one \\[MASK\\] at a time"):
        elmo.fill_mask("the [MASK] sat on the [MASK] .")
    with pytest.raises(InputError, match="no \\[MASK\\]"):
        elmo.fill_mask("the cat sat")
    assert elmo.fill_mask("[MASK]", k=3)[0].position == 0  # a blank alone: <s> before it, </s> after it
    assert elmo.fill_mask("elmoblankstandin sat on the [MASK] .", k=3)[0].position == 4  # (the stand-in's own word)


def test_a_left_to_right_model_says_why_it_cannot_fill_a_blank(contextual_runs):
    gpt = api.load(contextual_runs["gpt"][0])
    assert Capability.FILL_BLANK not in gpt.capabilities
    assert "left to right" in gpt.missing(Capability.FILL_BLANK)
    bert = api.load(contextual_runs["bert"][0])
    assert Capability.FILL_BLANK in bert.capabilities and Capability.MASKED_LM in bert.capabilities


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(left=st.text(max_size=40), right=st.text(max_size=40))
def test_any_text_around_a_blank_gives_an_answer_or_a_clear_error(elmo, left, right):
    with contextlib.suppress(Word2BertError):
        [answer] = elmo.fill_mask(f"{left}[MASK]{right}", k=3)
        assert len(answer.tokens) == 3 and 0 < sum(answer.probs) <= 1.0001


def test_which_words_the_blank_rests_on_reads_both_sides_and_adds_up_to_its_change(elmo):
    text = "the cat sat on the [MASK] of the river ."
    [answer] = elmo.fill_mask(text, k=1)
    found = elmo.token_attribution(text)  # the blank's likeliest word, explained
    assert found.target == answer.tokens[0] and found.p_target == pytest.approx(answer.probs[0], rel=1e-4)
    assert found.tokens[found.position] == "[MASK]" and found.words[found.word_position] == "[MASK]"
    assert found.f_input == pytest.approx(np.log(answer.probs[0]), abs=1e-4)  # the app's blank, not one LM's
    ig = found.scores["integrated gradients"]
    assert all(ig[t] == 0 for t, fixed in enumerate(found.fixed) if fixed)  # <s>, </s> and the blank itself
    change = found.f_input - found.f_baseline
    assert abs(float(ig.sum()) - change) <= 0.1 * abs(change) + 0.05  # integrated gradients add up
    before, after = ig[1:found.position], ig[found.position + 1:-1]
    assert np.abs(before).sum() > 0 and np.abs(after).sum() > 0  # each LM's side weighs in
    second = elmo.fill_mask(text, k=2)[0].tokens[1]
    foiled = elmo.token_attribution(text, foil=second)  # why its word rather than its second guess
    assert foiled.foil == second
    assert foiled.f_input == pytest.approx(np.log(foiled.p_target) - np.log(foiled.p_foil), abs=1e-4)


def test_every_layer_reads_each_word_from_both_sides_as_the_blank_is_filled(elmo):
    text = "the cat sat on the [MASK] ."
    grid = elmo.lens_grid(text, k=4)
    assert grid.objective == "masked" and grid.tokens == ("the", "cat", "sat", "on", "the", "[MASK]", ".")
    assert grid.layers == 3 and "the forward LM's layer at the word before it" in grid.notice
    [answer] = elmo.fill_mask(text, k=4)  # the blank's column, top row: the masked view's answer
    assert grid.top_tokens[-1][5] == answer.tokens
    np.testing.assert_allclose(grid.top_probs[-1, 5], answer.probs, rtol=1e-4)
    assert np.isnan(grid.rank[-1, 5]) and grid.targets[5] is None  # (no word to find there)
    words = ["the", "cat", "sat", "on", "the", "elmoblankstandin", "."]  # what the pass reads at the blank
    forward, backward = _directions(elmo, words, 4)  # the second "the": the state before it and the one after it
    counts = np.asarray(elmo.counts, np.float64) + 1
    scores = forward + backward - np.log(counts / counts.sum())
    scores[[elmo.word_list.find(m) for m in (BOS, EOS, UNK)]] = -np.inf
    expected = np.exp(scores - np.logaddexp.reduce(scores))
    np.testing.assert_allclose(grid.top_probs[-1, 4], np.sort(expected)[::-1][:4], rtol=1e-3, atol=1e-6)
    the = elmo.word_list.find("the")
    assert grid.rank[-1, 4] == 1 + int((expected > expected[the]).sum())  # the word there, ranked unseen


def test_a_long_text_weighs_the_words_near_the_blank_and_says_so(elmo):
    from engine.handles.elmo_blank import ATTRIBUTION_SIDE

    text = " ".join(["the cat sat on the mat ."] * 20) + " the [MASK] sat . " + " ".join(["the cat sat ."] * 30)
    found = elmo.token_attribution(text)
    assert found.tokens[found.position] == "[MASK]" and len(found.tokens) <= 2 * ATTRIBUTION_SIDE + 3
    assert found.position - 1 == ATTRIBUTION_SIDE and f"the {ATTRIBUTION_SIDE} words on each side" in found.notice
    assert elmo.token_attribution("the cat sat on the [MASK] .").notice == ""  # a short one is weighed whole


@pytest.mark.parametrize("subject, side", [("cat", "before"), ("river", "after")])
def test_tracing_the_blank_restores_each_word_in_the_lm_that_reads_it(elmo, subject, side):
    text = "the cat sat on the [MASK] of the river ."
    words = text.split()
    [answer] = elmo.fill_mask(text, k=1)
    trace = elmo.causal_trace(text, subject, 2)
    blank = trace.position
    assert trace.tokens[blank] == "[MASK]" and trace.target == answer.tokens[0]
    assert trace.p_clean == pytest.approx(answer.probs[0], rel=1e-4)  # the masked view's answer, traced
    assert trace.subject == (words.index(subject) + 1,)
    assert np.allclose(trace.restored[:, [0, blank, -1]], trace.p_corrupt)  # <s>, the blank, </s>: nothing to restore
    assert trace.restored[0, trace.subject[0]] == pytest.approx(trace.p_clean, rel=1e-4)  # its word vector put back
    # the top layer's state next to the blank, on the subject's side, is all that side's LM gives the blank: put
    # back, the answer is whole (the other LM never read the noise)
    nearest = blank - 1 if side == "before" else blank + 1
    assert trace.restored[-1, nearest] == pytest.approx(trace.p_clean, rel=1e-3)
    far = blank + 1 if side == "before" else blank - 1  # the other side's states are clean already: nothing back
    assert trace.restored[-1, far] == pytest.approx(trace.p_corrupt, rel=1e-3)


def test_a_blank_is_traced_against_a_contrast_with_its_blank_in_the_same_place(elmo):
    trace = elmo.causal_trace("the cat sat on the [MASK] .", "", contrast="the dog sat on the [MASK] .")
    assert trace.subject == (2,) and trace.samples == 1 and trace.contrast_tokens[2] == "dog"
    with pytest.raises(InputError, match="same place"):
        elmo.causal_trace("the cat sat on the [MASK] .", "", contrast="the dog sat on [MASK] the .")
