"""The corpus index: occurrences of frequent words, every layer, float16, cached and reused."""

import threading

import numpy as np
import pytest

from engine import api
from engine.errors import InputError, UnknownWord
from engine.inspection.corpus_index import Cancelled, CorpusIndex, build_corpus_index, corpus_sample


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


def test_index_is_cached_in_the_cache_folder_and_reused(bert, topic_corpus, contextual_runs, monkeypatch):
    from engine.data.corpora import cache_dir
    from engine.inspection.corpus_index import index_folder

    built = build_corpus_index(bert, str(topic_corpus), per_word=4, max_words=20, min_count=3)
    assert isinstance(built.vectors, np.memmap)  # read back from its file: the built arrays are not kept in memory
    folder = index_folder(bert, str(topic_corpus), 4, 20, 3)
    assert cache_dir() in folder.parents and not (contextual_runs["bert"][0] / "corpus-index").exists()
    folders = [folder]
    saved = [CorpusIndex.load(folder) for folder in folders]  # one folder per settings
    assert any(again.words == built.words and np.array_equal(again.vectors, built.vectors) for again in saved)

    def no_model_calls(*args, **kwargs):
        raise AssertionError("a cached index must not run the model again")

    monkeypatch.setattr(bert, "contextual_vectors", no_model_calls)
    monkeypatch.setattr(bert, "contextual_vectors_batch", no_model_calls)
    reused = build_corpus_index(bert, str(topic_corpus), per_word=4, max_words=20, min_count=3)
    assert reused.words == built.words and np.array_equal(reused.vectors, built.vectors)


def test_a_second_model_indexes_the_same_sample_without_reading_the_corpus_again(bert, topic_corpus, monkeypatch,
                                                                               tmp_path):
    """"Index all models": the sentences and words to index are the corpus's, not the model's; read once."""
    import os

    from engine.data import corpora

    first = build_corpus_index(bert, str(topic_corpus), per_word=2, max_words=30, min_count=3, use_cache=False)
    reads = []
    real = corpora.get_corpus
    monkeypatch.setattr(corpora, "get_corpus", lambda *a, **k: reads.append(a) or real(*a, **k))
    again = build_corpus_index(bert, str(topic_corpus), per_word=2, max_words=30, min_count=3, use_cache=False)
    assert reads == [] and again.words == first.words and len(again) == len(first)
    edited = tmp_path / "edited.txt"
    edited.write_text(topic_corpus.read_text() + "\nThe zebra and the zebra met a zebra by the zebra pool.\n")
    os.utime(edited)
    other = build_corpus_index(bert, str(edited), per_word=2, max_words=30, min_count=3, use_cache=False)
    assert reads and len(other) > 0  # another text (edited since): read again
    assert any("zebra" in s for s in corpus_sample(str(edited), 40_000, 3, 30)[0])


def test_cancel_stops_the_build(bert, topic_corpus):
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        build_corpus_index(bert, str(topic_corpus), per_word=3, max_words=10, min_count=3, stop=stop, use_cache=False)


def test_occurrence_map_clusters_two_planted_senses_and_aligns_layers():
    from engine.inspection.projection import occurrence_map, procrustes_align

    rng = np.random.default_rng(0)
    centre_a, centre_b = rng.normal(size=32), rng.normal(size=32)
    corpus = np.concatenate([centre_a + 0.1 * rng.normal(size=(20, 32)), centre_b + 0.1 * rng.normal(size=(20, 32))])
    typed = np.stack([centre_a, centre_b])
    m = occurrence_map(corpus, [f"s{i}" for i in range(40)], typed, ["river", "money"], "pca")
    assert m.points.shape == (42, 2) and m.typed.sum() == 2 and m.k == 2
    assert len(set(m.clusters[:20])) == 1 and m.clusters[0] != m.clusters[20]
    assert m.clusters[40] == m.clusters[0] and m.clusters[41] == m.clusters[20]
    rotated = m.points @ np.array([[0.0, -1.0], [1.0, 0.0]]) * 3 + 5
    assert np.allclose(procrustes_align(rotated, m.points), m.points, atol=1e-3)
    t = occurrence_map(corpus, [f"s{i}" for i in range(40)], typed, ["river", "money"], "tsne", previous=m.points)
    assert t.points.shape == (42, 2)


def test_index_files_are_standard_safetensors_and_map_back(tmp_path):
    import numpy as np
    from safetensors.numpy import load_file

    from engine.inspection.corpus_index import map_safetensors, write_safetensors

    arrays = {"vectors": np.random.default_rng(0).random((5, 3, 8)).astype(np.float16),
              "occ_word": np.arange(5, dtype=np.int32), "empty": np.zeros((0,), np.int16),
              "no_rows": np.zeros((0, 7, 4), np.float16)}  # a word none of whose occurrences could be encoded
    write_safetensors(tmp_path / "i.safetensors", arrays)
    by_package, mapped = load_file(str(tmp_path / "i.safetensors")), map_safetensors(tmp_path / "i.safetensors")
    for name, array in arrays.items():
        assert np.array_equal(by_package[name], array) and np.array_equal(mapped[name], array)
    assert isinstance(mapped["vectors"], np.memmap)
    (tmp_path / "bad.safetensors").write_bytes(b"\xff" * 16)
    with pytest.raises(InputError, match="not a safetensors file"):
        map_safetensors(tmp_path / "bad.safetensors")
