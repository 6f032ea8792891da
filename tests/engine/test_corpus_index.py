"""The corpus index: occurrences of frequent words, every layer, float16, cached and reused."""

import threading

import numpy as np
import pytest

from engine import api
from engine.errors import UnknownWord
from engine.inspect.corpus_index import Cancelled, CorpusIndex, build_corpus_index


@pytest.fixture(scope="module")
def bert(contextual_runs):
    return api.load(contextual_runs["bert"][0])


def test_index_holds_occurrences_and_answers_queries(bert, topic_corpus):
    index = build_corpus_index(bert, str(topic_corpus), per_word=3, max_words=200, min_count=3)
    assert index.vectors.dtype == np.float16 and index.layers == 3
    assert len(index.rows("piano")) == 3 and index.info["memory_mb"] >= 0
    typed = bert.contextual_vectors("She played the piano on stage.")
    q = typed.vectors[-1, typed.words.index("piano")]
    hits = index.neighbours("piano", q, layer=2, k=3)
    assert len(hits) == 3 and len({h.sentence for h in hits}) == 3 and hits[0].similarity >= hits[-1].similarity
    assert all("piano" in h.sentence.lower().split() or "piano." in h.sentence.lower() for h in hits)
    with pytest.raises(UnknownWord):
        index.rows("zebra")


def test_index_is_cached_beside_the_run_and_reused(bert, topic_corpus, contextual_runs):
    build_corpus_index(bert, str(topic_corpus), per_word=4, max_words=20, min_count=3)
    folders = list((contextual_runs["bert"][0] / "corpus-index").iterdir())
    assert folders
    again = CorpusIndex.load(folders[0])
    assert len(again) > 0


def test_cancel_stops_the_build(bert, topic_corpus):
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        build_corpus_index(bert, str(topic_corpus), per_word=3, max_words=10, min_count=3, stop=stop, use_cache=False)
