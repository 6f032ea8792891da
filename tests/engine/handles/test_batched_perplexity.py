"""Held-out perplexity of a left-to-right model or ELMo reads many sentences a pass (rows of about one length,
padded): the same number as scoring each sentence on its own, whatever the lengths mixed in a pass."""

import math

import pytest

SENTENCES = ["The bus stopped at the station.", "Hi.", "", "...", "She played the piano on stage and the hall was "
             "full of people who had come from every town around to hear her play the old songs again.",
             "He tuned his trumpet.", "We parked the taxi outside the old hall before the concert began."]


def _one_at_a_time(handle, sentences):
    total = count = 0.0
    for s in sentences:
        if s.strip():
            score = handle.score(s)
            total += score.logprob
            count += len(score.token_logprobs)
    return math.exp(-total / count)


@pytest.mark.parametrize("kind", ["gpt", "elmo", "gpt-as-hf"])
def test_batched_perplexity_is_each_sentences_score_summed(kind, contextual_runs, tmp_path, monkeypatch):
    from engine import api
    from engine.handles import elmo, transformer

    if kind == "gpt-as-hf":  # transformers' GPT-2 through the Hugging Face adapter
        from engine.cli.export import export_hf

        handle = api.load(str(export_hf(contextual_runs["gpt"][0], tmp_path / "hf")))
    else:
        handle = api.load(str(contextual_runs[kind][0]))
    expected = _one_at_a_time(handle, SENTENCES)
    assert handle.perplexity(SENTENCES) == pytest.approx(expected, rel=1e-4)
    # passes of two or three rows: rows of other lengths padded beside each other
    monkeypatch.setattr(elmo, "PERPLEXITY_WORDS", 40)
    monkeypatch.setattr(transformer, "PLL_BUDGET_BYTES", 3 * 30 * 4 * handle.info.get("vocabulary_size", 300))
    assert handle.perplexity(SENTENCES) == pytest.approx(expected, rel=1e-4)
    with pytest.raises(api.InputError, match="no sentences"):
        handle.perplexity(["", "  "])
