"""Causal tracing of ELMo's forward LM (engine/handles/elmo_trace.py): noise the subject's word vectors, put one
clean state back at a time, read the next word's probability."""

import numpy as np
import pytest
import torch

from engine.errors import InputError

TEXT = "the cat sat on the mat and the dog"


@pytest.fixture(scope="module")
def elmo(contextual_runs):
    from engine import api

    return api.load(contextual_runs["elmo"][0])


def test_what_restoring_must_give_where_the_answer_is_known(elmo):
    """Nothing restored before the subject changes anything; a word vector that was never noised put back changes
    nothing; the subject's own vector put back is the clean run; the top layer put back at the last word is the
    clean prediction; the clean run is the Next token view's."""
    trace = elmo.causal_trace(TEXT, "sat")
    assert trace.tokens == ("<s>", *TEXT.split()) and trace.subject == (3,) and trace.position == len(trace.tokens) - 1
    top = elmo.next_token(TEXT, k=1)
    assert trace.target == top.tokens[0] and trace.p_clean == pytest.approx(top.probs[0], abs=1e-5)
    np.testing.assert_allclose(trace.restored[:, :3], trace.p_corrupt, atol=1e-5)  # before the subject
    others = [t for t in range(len(trace.tokens)) if t != 3]
    np.testing.assert_allclose(trace.restored[0, others], trace.p_corrupt, atol=1e-5)
    assert trace.restored[0, 3] == pytest.approx(trace.p_clean, abs=1e-5)
    assert trace.restored[-1, -1] == pytest.approx(trace.p_clean, abs=1e-5)


def _stepped_restore(elmo, x_clean, x_bad, layer, position):
    """The corrupted run stepped word by word by hand, LSTM ``layer - 1``'s output and (h, c) at ``position`` taken
    from the clean run: P of the clean prediction after the last word (a second way to what the trace computes)."""
    lstms = list(elmo.model.forward_lm.lstms)

    def run(x, swap=None):
        outs, states = [], []
        for k, lstm in enumerate(lstms):
            state, steps, kept = None, [], []
            for t in range(x.shape[1]):
                h, state = lstm(x[:, t : t + 1], state)
                out = h + x[:, t : t + 1] if k > 0 else h
                if swap is not None and (k + 1, t) == (layer, position):
                    out, state = swap[0][k][:, t : t + 1], swap[1][k][t]
                steps.append(out)
                kept.append(state)
            x = torch.cat(steps, 1)
            outs.append(x)
            states.append(kept)
        return outs, states

    with torch.inference_mode():
        clean = run(x_clean)
        bad, _ = run(x_bad, swap=clean)
        return elmo.model.softmax.log_prob(bad[-1][:, -1].float()).exp()


@pytest.mark.parametrize(("layer", "position"), [(1, 4), (2, 5), (1, 8)])
def test_a_restored_lstm_state_goes_on_from_the_clean_recurrent_state(elmo, layer, position):
    """With a contrast sentence (no noise: one exact corrupted run), each cell is what stepping the corrupted run
    by hand, with that layer's output and (h, c) at that word swapped for the clean run's, gives."""
    contrast = "the cat ran on the mat and the dog"
    trace = elmo.causal_trace(TEXT, "", contrast=contrast)
    assert trace.subject == (3,) and trace.samples == 1 and trace.noise == 0.0
    with torch.inference_mode():
        encode = elmo.model.token_encoder
        x_clean = encode(elmo._chars(TEXT.split())[:, :-1])
        x_bad = encode(elmo._chars(contrast.split())[:, :-1])
    probs = _stepped_restore(elmo, x_clean, x_bad, layer, position)
    target = elmo._next_words.words.index(trace.target)
    assert trace.restored[layer, position] == pytest.approx(float(probs[0, target]), abs=1e-5)


def test_tracing_says_what_is_wrong_with_its_question(elmo):
    with pytest.raises(InputError, match="not in the text"):
        elmo.causal_trace(TEXT, "zebra")
    with pytest.raises(InputError, match="subject is empty"):
        elmo.causal_trace(TEXT, "  ")
    with pytest.raises(InputError, match="as many words"):
        elmo.causal_trace(TEXT, "", contrast="the cat sat")
    with pytest.raises(InputError, match="the text itself"):
        elmo.causal_trace(TEXT, "", contrast=TEXT.upper() if not elmo.lowercase else TEXT)
    with pytest.raises(InputError, match="samples"):
        elmo.causal_trace(TEXT, "cat", "three")
    with pytest.raises(InputError, match="at most"):
        elmo.causal_trace(" ".join(["word"] * 60), "word")
