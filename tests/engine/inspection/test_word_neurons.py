"""Which neurons fire for a word (engine/inspection/word_neurons.py): gpt-tiny's "my" neuron (layer 3, #27: every
one of its highest sentences peaks at "my") comes first for "my"; the word's tokens are found piece by piece; the
most selective come first; bad questions get clear answers."""

import numpy as np
import pytest

from engine import api
from engine.errors import InputError, UnknownWord, Unsupported
from engine.inspection.word_neurons import _word_positions


@pytest.fixture(scope="module")
def gpt():
    return api.load("gpt-tiny")


def test_the_my_neuron_comes_first_for_my(gpt):
    got = api.word_neurons(gpt, 2, "My")
    assert got.word == "my" and int(got.neurons[0]) == 27
    assert list(got.selectivity) == sorted(got.selectivity, reverse=True) and got.selectivity[0] > 5
    assert got.at_word[0] > got.elsewhere[0] and got.fires[0] > 0.9
    assert got.tokens >= got.sentences >= 100 and len(got.neurons) == 12
    examples = api.neuron_examples(gpt, 2, int(got.neurons[0]), k=5)
    assert all(e.tokens[e.peak].strip().lower() == "my" for e in examples.examples)  # (the two views agree)


def test_a_words_tokens_are_found_in_its_sentence_piece_by_piece(gpt):
    ids, at, other = _word_positions(gpt, "The river bank and the Bank of England, not banking.", "bank")
    assert [gpt._token_text(ids[t]).strip().lower() for t in at] == ["bank", "bank"]
    assert len(at) + len(other) == sum(1 for i in ids if gpt._token_text(i) != "<|endoftext|>")
    bert = api.load("minilm-mlm")
    ids, at, _ = _word_positions(bert, "The playwrights wrote.", "playwrights")  # (WordPiece: in pieces)
    pieces = [bert._token_text(ids[t]) for t in at]
    assert "".join(p.removeprefix("##") for p in pieces) == "playwrights" and len(pieces) >= 2


def test_bad_questions_get_clear_answers(gpt):
    with pytest.raises(InputError, match="one word"):
        api.word_neurons(gpt, 2, "river bank")
    with pytest.raises(UnknownWord):
        api.word_neurons(gpt, 2, "qzxqzxqzx")
    with pytest.raises(InputError, match="no layer 7"):
        api.word_neurons(gpt, 7, "my")
    with pytest.raises(InputError, match="k must be"):
        api.word_neurons(gpt, 1, "my", k=0)
    with pytest.raises(Unsupported, match="no MLP neurons"):
        api.word_neurons(api.load("ngram-kn3"), 0, "my")
    assert np.isfinite(api.word_neurons(gpt, 0, "the", k=3).selectivity).all()
