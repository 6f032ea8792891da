"""The lab's attribution (engine/handles/attribution.py): which tokens a prediction rests on, by integrated
gradients, gradient × input and the gradient's norm, on our BERT and GPT and on Hugging Face folders."""


import numpy as np
import pytest
import torch

from engine import api
from engine.errors import InputError, Unsupported
from engine.handles.attribution import one_token
from engine.handles.lens import _inputs
from tests.engine.handles.test_lens import TEXT, _text, while_another_thread_queries

KINDS = ["bert", "gpt", "hf-bert", "hf-decoder", "hf-gpt2"]


def _log_probs(handle, text):
    """The model's own log-probabilities where the attribution reads its prediction, and that position."""
    ids, segments, _, _ = _inputs(handle, text, 128)
    position = ids.index(handle.adapter.mask_id) if handle.adapter.objective == "masked" else len(ids) - 1
    logits = handle._forward(ids, segments, logits=True, positions=[position]).logits[0, 0].float()
    return logits.log_softmax(-1), position


def _runner_up(handle, text, target_id):
    """The likeliest token after the top one that names itself as one token (the foil a user would type)."""
    logp, _ = _log_probs(handle, text)
    for i in logp.argsort(descending=True).tolist():
        if i == target_id:
            continue
        try:
            if one_token(handle, handle._token_text(i), "foil") == i:
                return i
        except InputError:
            continue
    raise AssertionError("no one-token runner-up")


@pytest.mark.parametrize("which", KINDS)
def test_integrated_gradients_add_up_to_the_change_they_explain(lab_handles, which):
    """Completeness: the scores sum to log P(prediction) at the text less at the faded-out text; the explained
    quantity at the text is the model's own log-probability of its own top prediction; the special tokens and
    the [MASK] are not attributed."""
    handle = lab_handles[which]
    result = api.token_attribution(handle, _text(handle))
    logp, position = _log_probs(handle, _text(handle))
    assert result.position == position and result.target == handle._token_text(int(logp.argmax()))
    assert result.f_input == pytest.approx(float(logp.max()), abs=1e-4)
    assert result.p_target == pytest.approx(float(logp.max().exp()), abs=1e-5)
    change = result.f_input - result.f_baseline
    assert abs(result.gap) <= 0.05 * abs(change) + 1e-3
    for method, scores in result.scores.items():
        assert scores.shape == (len(result.tokens),), method
        assert np.all(scores[list(result.fixed)] == 0.0), method
        assert np.any(scores != 0.0), method
    assert np.all(result.scores["gradient norm"] >= 0)
    ids, _, special, _ = _inputs(handle, _text(handle), 128)
    masked = handle.adapter.objective == "masked"
    assert list(result.fixed) == [s or (masked and i == handle.adapter.mask_id) for i, s in zip(ids, special)]


@pytest.mark.parametrize("which", ["bert", "gpt", "hf-gpt2"])
def test_gradient_times_input_is_what_scaling_one_token_does(lab_handles, which):
    """Gradient × input of token t is the derivative of the explained log-probability as t's embedding is
    scaled by 1 + ε: checked against the model run with that embedding scaled (a wrong hook, sign or position
    shows here)."""
    handle = lab_handles[which]
    text = _text(handle)
    result = api.token_attribution(handle, text)
    logp, position = _log_probs(handle, text)
    target = int(logp.argmax())
    ids, segments, _, _ = _inputs(handle, text, 128)
    embedding = handle.adapter.input_embedding()
    t = int(np.argmax(np.abs(result.scores["gradient × input"])))
    eps = 1e-3

    def scaled_logp(factor):
        def hook(module, inputs, output):
            output = output.clone()
            output[:, t] = output[:, t] * factor
            return output

        h = embedding.register_forward_hook(hook)
        try:
            return float(_log_probs(handle, text)[0][target])
        finally:
            h.remove()

    derivative = (scaled_logp(1 + eps) - scaled_logp(1 - eps)) / (2 * eps)
    assert derivative == pytest.approx(float(result.scores["gradient × input"][t]), rel=0.02, abs=1e-3)


@pytest.mark.parametrize("which", ["bert", "gpt"])
def test_a_foil_explains_the_difference_and_swapping_them_turns_every_score_round(lab_handles, which):
    handle = lab_handles[which]
    text = _text(handle)
    logp, _ = _log_probs(handle, text)
    target = int(logp.argmax())
    foil = _runner_up(handle, text, target)
    a = api.token_attribution(handle, text, handle._token_text(target), handle._token_text(foil))
    b = api.token_attribution(handle, text, handle._token_text(foil), handle._token_text(target))
    assert a.foil == handle._token_text(foil) and "−" in a.explained
    assert a.f_input == pytest.approx(float(logp[target] - logp[foil]), abs=1e-4)
    assert a.p_foil == pytest.approx(float(logp[foil].exp()), abs=1e-5)
    for method in ("integrated gradients", "gradient × input"):
        assert np.allclose(a.scores[method], -b.scores[method], atol=1e-4), method
    assert np.allclose(a.scores["gradient norm"], b.scores["gradient norm"], atol=1e-4)
    plain = api.token_attribution(handle, text, handle._token_text(foil))  # a named target without a foil
    assert plain.target == handle._token_text(foil) and plain.f_input == pytest.approx(float(logp[foil]), abs=1e-4)


def test_attribution_says_what_is_wrong_with_its_question(lab_handles):
    bert, gpt = lab_handles["bert"], lab_handles["gpt"]
    with pytest.raises(InputError, match=r"no \[MASK\]"):
        api.token_attribution(bert, "the striker scored a goal")
    with pytest.raises(InputError, match="no words besides"):
        api.token_attribution(bert, "[MASK]")
    for handle in (bert, gpt):  # pieces, or the unknown token, are no word to explain
        with pytest.raises(InputError, match="not one token"):
            api.token_attribution(handle, _text(handle), "zzqxjwv")
    with pytest.raises(InputError, match="the target itself"):
        api.token_attribution(gpt, TEXT["gpt"], "the", "the")
    with pytest.raises(InputError, match="empty"):
        api.token_attribution(gpt, "   ")
    with pytest.raises(InputError, match="not one token"):  # a lone surrogate (a script's, a scene's) said, not raised
        api.token_attribution(gpt, TEXT["gpt"], "go\udc80al")
    with pytest.raises(InputError, match="must be a word"):
        api.token_attribution(gpt, TEXT["gpt"], None, 3)
    with pytest.raises(Unsupported, match="needs a neural language model"):  # static vectors predict nothing
        api.token_attribution(api.load("word2vec-sgns"), TEXT["gpt"])


def test_a_long_text_is_explained_on_its_first_tokens_with_a_notice(lab_handles):
    handle = lab_handles["gpt"]
    result = api.token_attribution(handle, "the car " * 80 + "stopped at the")
    most = min(128, handle.adapter.max_len)
    assert len(result.tokens) == most and f"first {most}" in result.notice


def test_attribution_leaves_the_models_other_queries_alone_and_its_gradients_unset(lab_handles):
    """The fading hook sits on the loaded model: another thread's query meanwhile gets the model's own answer;
    no parameter is left holding a gradient."""
    handle = lab_handles["bert"]
    baseline = api.token_attribution(handle, TEXT["bert"])
    results = while_another_thread_queries(handle, lambda: api.token_attribution(handle, TEXT["bert"]))
    assert all(np.allclose(r.scores["integrated gradients"], baseline.scores["integrated gradients"], atol=1e-5)
               for r in results)
    assert all(p.grad is None for p in handle.adapter.body.parameters())
    assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()  # the caller's modes, as they were


@pytest.mark.parametrize("which", ["bert", "gpt", "hf-gpt2"])
def test_each_token_belongs_to_a_word_of_the_text_and_words_add_their_tokens_up(lab_handles, which):
    """By words: the text's words as typed ([MASK] one of them; a byte-level token's leading space no word of its
    own), every token but the special ones in one, and a word's score the sum of its tokens'."""
    handle = lab_handles[which]
    text = TEXT["bert" if handle.adapter.objective == "masked" else "gpt"].replace("striker", "Striker")
    result = api.token_attribution(handle, text)
    assert list(result.words) == text.split()
    _, _, special, _ = _inputs(handle, text, 128)
    assert [w < 0 for w in result.word_of] == special  # the special tokens, and only they, in no word
    inside = [w for w in result.word_of if w >= 0]
    assert inside == sorted(inside) and set(inside) == set(range(len(result.words)))  # in order, none left empty
    for method in result.scores:
        assert result.word_scores(method).sum() == pytest.approx(float(result.scores[method].sum()), abs=1e-4)
    assert result.words[result.word_position] == ("[MASK]" if which == "bert" else text.split()[-1])
