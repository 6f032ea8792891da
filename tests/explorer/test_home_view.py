"""A model opened to be explored is shown in the view its family is for, read from what it can do."""

import pytest

from explorer.home_view import home_view


@pytest.mark.parametrize("kind, home", [("bert", ("predictions", "masked")), ("gpt", ("predictions", "next")),
                                        ("elmo", ("polysemy", "neighbours"))])
def test_each_contextual_family_is_shown_where_it_is_seen_best(contextual_runs, kind, home):
    from engine import api

    assert home_view(api.load(str(contextual_runs[kind][0])).capabilities) == home


def test_static_vectors_an_ngram_an_nnlm_and_a_scorer_have_their_views_and_a_classifier_none():
    from engine.api import Capability as C

    assert home_view(C.STATIC) == ("neighbours", None)  # word2vec, GloVe
    assert home_view(C.NEXT_TOKEN | C.SENTENCE_SCORE) == ("predictions", "next")  # an n-gram
    assert home_view(C.STATIC | C.NEXT_TOKEN | C.SENTENCE_SCORE) == ("predictions", "next")  # an NNLM
    assert home_view(C.SENTENCE_SCORE) == ("predictions", "probability")
    assert home_view(C.CLASSIFY) is None
