"""Occurrences on demand: the word index finds every sentence of a word without any model; a model's
vectors of a word's occurrences are encoded once, cached, and answer neighbour queries."""

import threading
from pathlib import Path

import numpy as np
import pytest

from engine import api
from engine.data.corpora import get_corpus
from engine.data.text import word_tokenize
from engine.inspection.corpus_index import Cancelled
from engine.inspection.occurrences import word_index, word_occurrences


@pytest.fixture(scope="module")
def bert(contextual_runs):
    return api.load(contextual_runs["bert"][0])


def test_the_word_index_finds_every_sentence_of_a_word(topic_corpus):
    index = word_index(str(topic_corpus))
    distinct = list(dict.fromkeys(s for s in get_corpus(str(topic_corpus)).sentences("all") if 4 <= len(s) <= 400))
    for word in ("piano", "bus", "mango", "the"):
        want = [s for s in distinct if word in word_tokenize(s)]
        got = [index.sentence(int(i)) for i in index.sentences_of(word)]
        assert got == want and index.count(word) == len(want), word
    with pytest.raises(api.UnknownWord, match="no sentence"):
        index.sentences_of("zebra")
    again = word_index(str(topic_corpus))  # from the cache: memory-mapped, the same answers
    assert again.words == index.words and np.array_equal(np.asarray(again.postings), np.asarray(index.postings))


def test_a_words_occurrences_are_encoded_once_then_read_from_the_cache(bert, topic_corpus, monkeypatch):
    first = word_occurrences(bert, "piano", str(topic_corpus), limit=12)
    assert 0 < len(first.sentences) <= 12 and first.vectors.shape[:2] == (len(first.sentences), 3)
    assert len(set(first.sentences)) == len(first.sentences)  # a sentence holding the word twice counts once
    assert all(word_tokenize(s)[p] == "piano" for s, p in zip(first.sentences, first.positions, strict=True))

    def no_model(*args, **kwargs):
        raise AssertionError("cached occurrences must not run the model again")

    monkeypatch.setattr(bert, "contextual_vectors_batch", no_model)
    monkeypatch.setattr(bert, "contextual_vectors", no_model)
    cached = word_occurrences(bert, "Piano", str(topic_corpus), limit=12)
    assert cached.sentences == first.sentences and np.array_equal(np.asarray(cached.vectors), first.vectors)


def test_neighbours_rank_the_occurrences_by_cosine(bert, topic_corpus):
    occ = word_occurrences(bert, "piano", str(topic_corpus), limit=12)
    query = bert.contextual_vectors("She played the piano on stage.")
    hits = occ.neighbours(query.vectors[2, query.words.index("piano")], layer=2, k=3)
    assert len(hits) == min(3, len(occ.sentences)) >= 2 and all(a.similarity >= b.similarity for a, b in zip(hits, hits[1:], strict=False))
    assert all("piano" in word_tokenize(h.sentence) for h in hits)
    with pytest.raises(api.InputError):
        occ.neighbours(query.vectors[0, 0], layer=7)


def test_a_new_click_cancels_the_encoding(bert, topic_corpus):
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        word_occurrences(bert, "bus", str(topic_corpus), limit=12, stop=stop, use_cache=False)


def test_a_word_index_is_opened_once_a_process_until_its_cache_entry_changes(topic_corpus, monkeypatch):
    """Each click of the lens asked for the index: its word list was parsed again every time (the GIL held for
    the parse). Now the opened index is kept; an entry written again (other files) is opened again."""
    import engine.inspection.occurrences as occurrences

    word_index(str(topic_corpus))  # (built, or opened: the first open is kept)
    first = word_index(str(topic_corpus))
    parsed: list[str] = []

    class Counted(occurrences.WordIndex):
        def __init__(self, words, *rest) -> None:
            parsed.append("words")  # (made from a parsed word list)
            super().__init__(words, *rest)

    monkeypatch.setattr(occurrences, "WordIndex", Counted)
    assert word_index(str(topic_corpus)) is first and not parsed
    [folder] = [Path(k) for k, (_, kept) in occurrences._OPENED.items() if kept is first]  # its cache entry
    words = folder / "words.json"
    replaced = folder / "words.json.new"  # written again, as a rebuild does (a new file renamed over the old)
    replaced.write_bytes(words.read_bytes())
    replaced.replace(words)
    again = word_index(str(topic_corpus))
    assert again is not first and parsed == ["words"] and again.count("piano") == first.count("piano")
