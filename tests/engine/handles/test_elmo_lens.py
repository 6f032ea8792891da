"""The lens grid of ELMo's forward LM (engine/handles/elmo_lens.py): every layer's next word at every word, its top
layer the model's own prediction."""

import numpy as np
import pytest

from engine import api
from engine.errors import InputError, Unsupported

TEXT = "the cat sat on the mat and the dog"


@pytest.fixture(scope="module")
def elmo(contextual_runs):
    return api.load(contextual_runs["elmo"][0])


def test_the_top_layer_is_the_next_word_the_view_shows_and_each_word_is_a_column(elmo):
    grid = api.lens_grid(elmo, TEXT, k=3)
    words = TEXT.split()
    assert grid.tokens == ("<s>", *words) and grid.special == (True,) + (False,) * len(words)
    known = [w if w in elmo._next_words.words else "<unk>" for w in words]  # (a word it does not know: <unk>'s rank)
    assert grid.targets == (*known, None) and grid.objective == "causal" and grid.layers == 1 + elmo.model.cfg.layers
    assert np.allclose(grid.kl[-1], 0.0, atol=1e-5)  # the top layer is the output
    own = elmo.next_token(TEXT, k=3)
    assert grid.top_tokens[-1][-1] == own.tokens and np.allclose(grid.top_probs[-1, -1], own.probs, atol=1e-5)
    logp = np.asarray(elmo._next_words.log_probs(words[:4]))  # after "the cat sat on": the actual "the"'s rank
    actual = elmo._next_words.words.index(known[4])
    assert grid.rank[-1, 4] == 1 + int((logp > logp[actual]).sum())
    assert np.isnan(grid.rank[:, -1]).all() and (grid.entropy > 0).all()


def test_elmo_has_no_tuned_lens_and_names_the_lenses_it_has(elmo):
    with pytest.raises(Unsupported, match="no tuned lens"):
        api.lens_grid(elmo, TEXT, lens="tuned")
    with pytest.raises(InputError, match="logit or tuned"):
        api.lens_grid(elmo, TEXT, lens="x-ray")
    with pytest.raises(InputError, match="empty"):
        api.lens_grid(elmo, "   ")


def test_the_logit_lens_at_the_last_word_is_the_grids_last_column(elmo):
    lens = elmo.logit_lens(TEXT, k=3)
    grid = api.lens_grid(elmo, TEXT, k=3)
    assert lens.position == len(grid.tokens) - 1 and len(lens.layers) == grid.layers
    for layer, candidates in enumerate(lens.layers):
        assert candidates.tokens == grid.top_tokens[layer][-1]
        assert np.allclose(candidates.probs, grid.top_probs[layer, -1], atol=1e-5)
    assert lens.layers[-1].tokens == elmo.next_token(TEXT, k=3).tokens
    with pytest.raises(InputError, match="k "):
        elmo.logit_lens(TEXT, k=0)
