"""The logit lens: every layer read through the model's own output head; the last layer is the model's
own prediction, for our BERT and GPT and for their Hugging Face exports."""

import pytest

from engine import api


def test_bert_lens_ends_with_its_own_fill_mask(contextual_runs):
    bert = api.load(contextual_runs["bert"][0])
    text = "she played the [MASK] on stage ."
    lens = bert.logit_lens(text, k=5)
    assert len(lens.layers) == bert.info["layers"] + 1 and all(len(layer.tokens) == 5 for layer in lens.layers)
    own = bert.fill_mask(text, k=5)[0]
    assert lens.layers[-1].tokens == own.tokens and lens.position == own.position
    assert lens.layers[-1].probs == pytest.approx(own.probs, abs=1e-5)
    assert "not what they were trained" in lens.note
    with pytest.raises(api.InputError, match="MASK"):
        bert.logit_lens("no mask here")


def test_gpt_lens_ends_with_its_own_next_token(contextual_runs):
    gpt = api.load(contextual_runs["gpt"][0])
    lens = gpt.logit_lens("she played the", k=5)
    own = gpt.next_token("she played the", k=5)
    assert len(lens.layers) == gpt.info["layers"] + 1
    assert lens.layers[-1].tokens == own.tokens and lens.layers[-1].probs == pytest.approx(own.probs, abs=1e-5)


@pytest.mark.parametrize("kind", ["bert", "gpt"])
def test_hugging_face_exports_read_the_same_last_layer(contextual_runs, kind, tmp_path):
    from engine.cli.export import export_hf

    ours = api.load(contextual_runs[kind][0])
    theirs = api.load(export_hf(contextual_runs[kind][0], tmp_path / "hf"))
    text = "she played the [MASK] on stage ." if kind == "bert" else "she played the"
    a, b = ours.logit_lens(text, k=5), theirs.logit_lens(text, k=5)
    assert len(b.layers) == len(a.layers)
    assert b.layers[-1].tokens == a.layers[-1].tokens
    assert b.layers[-1].probs == pytest.approx(a.layers[-1].probs, abs=1e-4)


def test_static_models_say_why_they_have_no_lens():
    with pytest.raises(api.Unsupported, match="logit lens"):
        api.load("glove-6b-50d").logit_lens("bank")
