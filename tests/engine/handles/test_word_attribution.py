"""Attribution for the word-level language models (engine/handles/word_attribution.py): which words ELMo's and
the NNLM's next word rests on, checked against the models' own next-word path (the Next token view's)."""

import numpy as np
import pytest

from engine import api
from engine.errors import InputError, Unsupported

TEXT = "the cat sat on the mat and the dog"


@pytest.fixture(scope="module")
def word_lms(runs, contextual_runs):
    return {"elmo": api.load(contextual_runs["elmo"][0]), "nnlm": api.load(runs["nnlm"][0]),
            "ngram": api.load(runs["ngram"][0])}


def _next_log_probs(handle, text):
    """The next word's log-probabilities as the Next token view asks for them."""
    return np.asarray(handle._next_words.log_probs(handle._context(text)), np.float64)


@pytest.mark.parametrize("which", ["elmo", "nnlm"])
def test_it_explains_the_next_word_the_view_shows_and_adds_up(word_lms, which):
    """The word explained is the model's likeliest next word (<unk> and <s> aside) with the probability the Next
    token view gives it; integrated gradients add up to the change from the faded-out words; <s> is not
    attributed; each word is its own column."""
    handle = word_lms[which]
    result = api.token_attribution(handle, TEXT)
    logp = _next_log_probs(handle, TEXT)
    words = handle._next_words.words
    for banned in handle._next_words.banned:
        logp[banned] = -np.inf
    top = int(np.argmax(logp))
    assert result.target == words[top]
    assert result.p_target == pytest.approx(float(np.exp(logp[top])), rel=1e-4)
    assert result.f_input == pytest.approx(float(logp[top]), abs=1e-4)
    assert abs(result.gap) <= 0.05 * abs(result.f_input - result.f_baseline) + 1e-3
    assert result.tokens == ("<s>", *TEXT.split()) and result.fixed == (True,) + (False,) * len(TEXT.split())
    assert result.words == tuple(TEXT.split()) and result.word_position == len(TEXT.split()) - 1
    for method, scores in result.scores.items():
        assert scores.shape == (len(result.tokens),) and scores[0] == 0.0, method
        assert np.any(scores != 0.0), method


def test_the_nnlm_cannot_see_before_its_window(word_lms):
    """The NNLM reads its last n-1 words: every word before them scores exactly 0 by every method, and the note
    says why; the words in its window do not all score 0."""
    handle = word_lms["nnlm"]
    window = handle.model.cfg.context
    result = api.token_attribution(handle, TEXT)
    outside = len(result.tokens) - window
    for method, scores in result.scores.items():
        assert np.all(scores[:outside] == 0.0), method
        assert np.any(scores[outside:] != 0.0), method
    assert f"its window is its last {window} words" in result.notice


def test_the_nnlm_reads_only_the_sentence_begun_last(word_lms):
    handle = word_lms["nnlm"]
    result = api.token_attribution(handle, "The cat sat. The dog")
    assert result.tokens == ("<s>", "the", "dog") and "sentence begun last" in result.notice


@pytest.mark.parametrize("which", ["elmo", "nnlm"])
def test_gradient_times_input_is_what_scaling_one_word_does(word_lms, which):
    """Gradient × input of the last word is the derivative of the explained log-probability as its input vector
    (ELMo: the character CNN's output; the NNLM: C(w)) is scaled by 1 + ε, measured through the model's own
    next-word path with that vector scaled by a hook."""
    handle = word_lms[which]
    result = api.token_attribution(handle, TEXT)
    target = handle._next_words.words.index(result.target)
    module = handle.model.token_encoder if which == "elmo" else handle.model.C
    row = len(result.tokens) - 1 if which == "elmo" else handle.model.cfg.context - 1  # the last word's
    eps = 1e-3

    def scaled_logp(factor):
        def hook(module, inputs, output):
            output = output.clone()
            output[..., row, :] *= factor
            return output

        h = module.register_forward_hook(hook)
        try:
            return _next_log_probs(handle, TEXT)[target]
        finally:
            h.remove()

    derivative = (scaled_logp(1 + eps) - scaled_logp(1 - eps)) / (2 * eps)
    assert result.scores["gradient × input"][-1] == pytest.approx(derivative, rel=0.02, abs=2e-3)


def test_a_foil_turns_the_question_and_swapping_turns_every_score_round(word_lms):
    handle = word_lms["elmo"]
    logp = _next_log_probs(handle, TEXT)
    words = handle._next_words.words
    first, second = [words[i] for i in np.argsort(-logp) if words[i] not in ("<unk>", "<s>")][:2]
    ab = api.token_attribution(handle, TEXT, first, second)
    ba = api.token_attribution(handle, TEXT, second, first)
    assert ab.explained == f"log P('{first}') − log P('{second}')"
    assert ab.f_input == pytest.approx(logp[words.index(first)] - logp[words.index(second)], abs=1e-4)
    for method in ("integrated gradients", "gradient × input"):
        assert np.allclose(ab.scores[method], -ba.scores[method], atol=1e-4), method
    assert np.allclose(ab.scores["gradient norm"], ba.scores["gradient norm"], atol=1e-4)


@pytest.mark.parametrize(("target", "foil", "says"), [
    ("zzqxv", None, "not in"),
    ("the cat", None, "several words"),
    ("the", "the", "the target itself"),
    (None, "zzqxv", "not in"),
    ("<unk>", None, "not in"),
    (3, None, "must be a word"),
])
def test_words_it_cannot_explain_are_refused_clearly(word_lms, target, foil, says):
    for which in ("elmo", "nnlm"):
        with pytest.raises(InputError, match=says):
            api.token_attribution(word_lms[which], TEXT, target, foil)


def test_an_ngram_model_says_why_it_has_no_attribution(word_lms):
    with pytest.raises(Unsupported, match="n-gram model.*no gradients.*NNLM"):
        api.token_attribution(word_lms["ngram"], TEXT)


def test_elmo_fades_each_word_in_from_its_average_word(word_lms):
    """ELMo's baseline is its average word (from zero its LSTMs leave the range they were trained in): the quantity
    at the faded-out end is the model's own next-word log-probability with every word's vector that average."""
    import torch

    handle = word_lms["elmo"]
    result = api.token_attribution(handle, TEXT)
    model = handle.model
    with torch.inference_mode():
        x = model.token_encoder(handle._chars(TEXT.split())[:, :-1])
        x[:, 1:] = handle.frequent_word_vectors().mean(0)
        logp = model.softmax.log_prob(model.forward_lm(x)[-1][:, -1].float())[0]
    target = handle._next_words.words.index(result.target)
    assert result.f_baseline == pytest.approx(float(logp[target]), abs=1e-4)
