"""The lab's lens over every layer and position, and causal tracing (engine/handles/lens.py), on our BERT
and GPT and on Hugging Face folders: what a researcher would check first."""

import numpy as np
import pytest

from engine import api
from engine.errors import InputError, Unsupported

TEXT = {"bert": "the striker scored a [MASK] in the match", "gpt": "the striker scored a goal in the"}


def _text(handle):
    return TEXT["bert"] if handle.adapter.objective == "masked" else TEXT["gpt"]


@pytest.mark.parametrize("which", ["bert", "gpt", "hf-bert", "hf-decoder", "hf-gpt2"])
def test_the_lens_grids_last_layer_is_the_models_own_prediction_at_every_position(lab_handles, which):
    handle = lab_handles[which]
    grid = api.lens_grid(handle, _text(handle), k=3)
    ids, segments, _, _, _ = handle._encode(handle.adapter.tokenizer.id_to_token(handle.adapter.mask_id).join(
        _text(handle).split("[MASK]")) if "[MASK]" in _text(handle) else _text(handle))
    logits = handle._forward(ids, segments, logits=True).logits[0].float()  # (T, V): the model's own head
    own = [handle._token_text(int(i)) for i in logits.argmax(-1)]
    assert [grid.top_tokens[-1][t][0] for t in range(len(ids))] == own
    assert np.allclose(grid.top_probs[-1, :, 0], logits.softmax(-1).max(-1).values.cpu().numpy(), atol=1e-5)
    assert grid.layers == handle.adapter.n_layers + 1 and grid.tokens[0] == handle._token_text(ids[0])
    assert np.allclose(grid.kl[-1], 0.0, atol=1e-5)  # the final layer is its own reference
    assert np.all(grid.entropy >= 0) and np.all(grid.top_probs[..., 0] >= grid.top_probs[..., 1])


def test_a_masked_lm_is_ranked_on_the_words_it_sees_a_causal_one_on_the_next_word(lab_handles):
    masked = api.lens_grid(lab_handles["bert"], TEXT["bert"])
    hidden = masked.tokens.index("[MASK]")
    assert masked.targets[hidden] is None and np.isnan(masked.rank[:, hidden]).all()
    assert masked.targets[1] == masked.tokens[1]  # a masked LM's position predicts its own token
    causal = api.lens_grid(lab_handles["gpt"], TEXT["gpt"])
    assert causal.targets[1] == causal.tokens[2] and causal.targets[-1] is None  # the next token; none after the last
    assert np.all(causal.rank[:, :-1] >= 1)


def test_the_lens_refuses_what_it_cannot_read(lab_handles, tmp_path):
    with pytest.raises(Unsupported, match="tuned lens"):
        api.lens_grid(lab_handles["bert"], TEXT["bert"], lens="tuned")
    with pytest.raises(InputError):
        api.lens_grid(lab_handles["bert"], "   ")


@pytest.mark.parametrize("which", ["bert", "gpt", "hf-decoder", "hf-gpt2"])
def test_tracing_with_nothing_corrupted_restores_everything(lab_handles, which):
    from engine.handles.lens import causal_trace

    handle = lab_handles[which]
    trace = causal_trace(handle, _text(handle), "striker", samples=2, noise=0.0)
    assert trace.p_corrupt == pytest.approx(trace.p_clean, abs=1e-5)
    assert np.allclose(trace.restored, trace.p_clean, atol=1e-5)
    assert not trace.informative and np.all(trace.effect == 0)


@pytest.mark.parametrize("which", ["bert", "gpt", "hf-gpt2"])
def test_restoring_the_last_layer_at_the_prediction_brings_all_of_it_back(lab_handles, which):
    """Noise on the subject; the final state at the read position restored gives the clean prediction
    back exactly, and the subject's own embedding restored at every noised token does too."""
    handle = lab_handles[which]
    trace = api.causal_trace(handle, _text(handle), "striker", samples=2)
    assert trace.restored.shape == (handle.adapter.n_layers + 1, len(trace.tokens))
    assert trace.tokens[trace.position] == ("[MASK]" if which == "bert" else trace.tokens[-1])
    assert trace.restored[-1, trace.position] == pytest.approx(trace.p_clean, abs=1e-5)
    assert trace.subject and all(trace.tokens[t].strip().lstrip("#").lower() in "striker" for t in trace.subject)
    if len(trace.subject) == 1:  # un-noising the only noised token is the clean run
        assert trace.restored[0, trace.subject[0]] == pytest.approx(trace.p_clean, abs=1e-5)


CONTRAST = {"bert": "the striker scored the [MASK] in the match", "gpt": "the striker scored the goal in the"}  # (the tiny
# runs' vocabulary spells most words in pieces: "the" and "a" are one token each)


@pytest.mark.parametrize("which", ["bert", "gpt", "hf-gpt2"])
def test_a_contrast_sentence_is_patched_one_state_at_a_time(lab_handles, which):
    """Activation patching: the contrast sentence's run, one state of the text's put in its place. Every state at
    the tokens the two share, below the layer where they first differ, is the same in both runs: putting it back
    changes nothing; the embedding where they differ is the text's own once put back, when it is the only one."""
    handle = lab_handles[which]
    kind = "bert" if handle.adapter.objective == "masked" else "gpt"
    trace = api.causal_trace(handle, TEXT[kind], "", contrast=CONTRAST[kind])
    other = api.causal_trace(handle, CONTRAST[kind], "", contrast=TEXT[kind])  # the other way round
    assert trace.contrast == CONTRAST[kind] and trace.samples == 1 and trace.noise == 0.0
    assert trace.subject == other.subject and trace.subject  # where the two differ, the same both ways
    assert all(trace.tokens[t] != trace.contrast_tokens[t] for t in trace.subject)
    assert trace.restored[-1, trace.position] == pytest.approx(trace.p_clean, abs=1e-5)  # the output put back
    first = min(trace.subject)
    if kind == "gpt":  # left to right: no state before the first difference depends on it, at any layer
        assert first >= 3 and np.allclose(trace.restored[:, :first], trace.p_corrupt, atol=1e-5)
    if len(trace.subject) == 1:
        assert trace.restored[0, first] == pytest.approx(trace.p_clean, abs=1e-5)  # the text's embedding: its run
    noised = api.causal_trace(handle, TEXT[kind], "striker", samples=2)  # the noise's trace is another question
    assert noised.contrast == "" and noised.noise > 0


def test_a_contrast_sentence_must_line_up_with_the_text(lab_handles):
    with pytest.raises(InputError, match="as many tokens"):
        api.causal_trace(lab_handles["gpt"], TEXT["gpt"], "", contrast="the tall keeper scored a goal in the")
    with pytest.raises(InputError, match=r"\[MASK\] where"):
        api.causal_trace(lab_handles["bert"], TEXT["bert"], "", contrast="the striker scored a in [MASK] the match")
    with pytest.raises(InputError, match="the text itself"):
        api.causal_trace(lab_handles["gpt"], TEXT["gpt"], "", contrast=TEXT["gpt"])


def test_tracing_says_what_is_wrong_with_its_question(lab_handles):
    with pytest.raises(InputError, match="not in the text"):
        api.causal_trace(lab_handles["bert"], TEXT["bert"], "goalkeeper")
    with pytest.raises(InputError, match=r"\[MASK\]"):
        api.causal_trace(lab_handles["bert"], "the striker scored a goal", "striker")
    with pytest.raises(InputError, match="at most 48 tokens"):
        api.causal_trace(lab_handles["gpt"], "the car " * 40 + "stopped at the", "car")
    for samples in ("three", 0, 2.5, None):  # said, not a ValueError from int()
        with pytest.raises(InputError, match="samples"):
            api.causal_trace(lab_handles["gpt"], TEXT["gpt"], "striker", samples)
    static = api.load("word2vec-sgns")
    with pytest.raises(Unsupported):
        api.causal_trace(static, TEXT["gpt"], "striker")
    with pytest.raises(Unsupported):
        api.lens_grid(static, TEXT["gpt"])


def test_a_trace_is_the_same_from_the_same_seed(lab_handles):
    a = api.causal_trace(lab_handles["gpt"], TEXT["gpt"], "striker", samples=2)
    b = api.causal_trace(lab_handles["gpt"], TEXT["gpt"], "striker", samples=2)
    assert np.array_equal(a.restored, b.restored) and a.p_corrupt == b.p_corrupt


def while_another_thread_queries(handle, ask):
    """``ask()``'s answers while another thread (another panel) reads ``handle``'s vectors of one sentence over
    and over; checks that thread got the model's own answer every time, with no error."""
    import threading

    expected = handle.contextual_vectors("he drove the truck to town").vectors
    seen, errors, stop = [], [], threading.Event()

    def other_queries():
        while not stop.is_set():
            try:
                seen.append(handle.contextual_vectors("he drove the truck to town").vectors)
            except Exception as e:  # noqa: BLE001 - what the other panel would have shown
                errors.append(e)

    worker = threading.Thread(target=other_queries)
    worker.start()
    try:
        answers = [ask() for _ in range(3)]
    finally:
        stop.set()
        worker.join()
    assert not errors and seen and all(np.allclose(v, expected, atol=1e-5) for v in seen)
    return answers


def test_a_trace_leaves_the_models_other_queries_alone(lab_handles):
    """The tracing hooks sit on the loaded model: a query another thread runs meanwhile (another panel's)
    gets the model's own answer, and the trace its own (the chaos monkey found a lens query failing on a
    noise batch of another size)."""
    handle = lab_handles["gpt"]
    baseline = api.causal_trace(handle, TEXT["gpt"], "striker", samples=3)
    traces = while_another_thread_queries(handle, lambda: api.causal_trace(handle, TEXT["gpt"], "striker", samples=3))
    assert all(np.allclose(t.restored, baseline.restored, atol=1e-5) for t in traces)
