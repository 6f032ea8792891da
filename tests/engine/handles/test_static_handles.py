"""Handles of the static families and word LMs: queries, save/load, word2vec format, GloVe 6B, any text."""


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import api
from engine.errors import Word2BertError
from tests.engine.helpers import run, w2v_spec  # noqa: F401


def test_static_handles_answer_queries(runs):
    w2v = api.load(runs["word2vec"][0])
    assert api.Capability.STATIC in w2v.capabilities
    assert api.Capability.SENTENCE_SCORE not in w2v.capabilities
    neighbours = w2v.static_neighbours("banana", k=5)
    assert len(neighbours) == 5 and all(n.word != "banana" for n in neighbours)
    assert neighbours[0].similarity >= neighbours[-1].similarity
    assert w2v.vocabulary(3)[0] in ("the", ".")
    with pytest.raises(api.UnknownWord, match="zeppelin"):
        w2v.vector("zeppelin")
    with pytest.raises(api.Unsupported, match="masked-LM"):
        w2v.fill_mask("the [MASK] is red")
    ngram = api.load(runs["ngram"][0])
    good, bad = ngram.score("he drove the car to town"), ngram.score("town car the drove to he")
    assert good.logprob > bad.logprob and good.perplexity < bad.perplexity
    with pytest.raises(api.Unsupported):
        ngram.static_neighbours("car")
    nnlm = api.load(runs["nnlm"][0])
    assert nnlm.score("she played the piano on stage").perplexity > 1
    assert len(nnlm.static_neighbours("piano", 3)) == 3


def test_static_contextual_vectors_are_the_same_for_every_occurrence(runs):
    h = api.load(runs["word2vec"][0])
    a = h.contextual_vectors("she played the guitar on stage")
    b = h.contextual_vectors("he drove the car to the guitar shop")
    assert a.vectors.shape[0] == 1 and a.vectors.dtype == np.float32
    np.testing.assert_array_equal(a.vectors[0, a.words.index("guitar")], b.vectors[0, b.words.index("guitar")])


def test_save_load_gives_identical_vectors_and_scores(runs):
    from safetensors.numpy import load_file

    path = runs["word2vec"][0]
    saved = load_file(str(path / "model.safetensors"))["vectors"]
    h1, h2 = api.load(path), api.load(path)
    i = h1.static_vectors().words.index("piano")
    np.testing.assert_array_equal(h1.vector("piano"), saved[i])
    np.testing.assert_array_equal(h1.vector("piano"), h2.vector("piano"))
    n1, n2 = api.load(runs["ngram"][0]), api.load(runs["ngram"][0])
    assert n1.score("the car stopped").logprob == n2.score("the car stopped").logprob


def test_word2vec_format_round_trip_with_gensim(runs, tmp_path):
    from gensim.models import KeyedVectors

    from engine.cli.export import export_main

    h = api.load(runs["word2vec"][0])
    for binary in (False, True):
        out = tmp_path / f"v{int(binary)}.w2v"
        assert export_main([str(runs["word2vec"][0]), "--to", "word2vec", str(out)] + (["--binary"] if binary else [])) == 0
        kv = KeyedVectors.load_word2vec_format(str(out), binary=binary)
        np.testing.assert_allclose(kv["piano"], h.vector("piano"), rtol=1e-5, atol=1e-6)
        back = api.load(out)  # we read our own files
        np.testing.assert_allclose(back.vector("piano"), h.vector("piano"), rtol=1e-5, atol=1e-6)
        gensim_file = tmp_path / f"g{int(binary)}.bin"
        kv.save_word2vec_format(str(gensim_file), binary=binary)  # ... and gensim's
        np.testing.assert_allclose(api.load(gensim_file).vector("piano"), kv["piano"], rtol=1e-5, atol=1e-6)


def test_a_slim_word2vec_copy_keeps_only_its_vectors_and_answers_the_same(runs, tmp_path):
    """word2bert-export --to slim (the shipped defaults): fp16 vectors, no training matrices, same neighbours."""
    from safetensors.numpy import load_file

    from engine.cli.export import export_main

    assert export_main([str(runs["word2vec"][0]), "--to", "slim", str(tmp_path / "slim")]) == 0
    saved = load_file(str(tmp_path / "slim" / "model.safetensors"))
    assert set(saved) == {"vectors"} and saved["vectors"].dtype == np.float16
    full, slim = api.load(runs["word2vec"][0]), api.load(tmp_path / "slim")
    # The same neighbours, up to fp16: two words whose cosines differ by less than the rounding may swap places
    # (CI saw violin and drum, 5th and 6th, trade ranks), so each slim neighbour must be a full-precision
    # neighbour with the score it shows, and the ranked scores must agree.
    slim_top, full_top = slim.static_neighbours("piano", 5), full.static_neighbours("piano", 10)
    np.testing.assert_allclose([n.similarity for n in slim_top], [n.similarity for n in full_top[:5]], atol=2e-3)
    full_scores = {n.word: n.similarity for n in full_top}
    for n in slim_top:
        assert n.word in full_scores and abs(full_scores[n.word] - n.similarity) < 2e-3, (n, full_top)
    np.testing.assert_allclose(slim.vector("piano"), full.vector("piano"), rtol=2e-3, atol=2e-3)


def test_glove_package_vectors_load_and_make_sense():
    h = api.load("glove-6b-50d")
    assert h.info["vocabulary_size"] == 400000 and h.info["dim"] == 50
    top = [n.word for n in h.static_neighbours("king", 10)]
    assert "queen" in top or "prince" in top
    assert h.analogy("man", "king", "woman", 3)[0].word == "queen"


QUERY_TEXT = st.text(max_size=60) | st.sampled_from(["", " ", "\x00", "[MASK]", "bank", "piano", "a" * 30000])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=QUERY_TEXT, other=QUERY_TEXT)
def test_every_query_gives_a_result_or_a_clear_error(runs, text, other):
    handles = getattr(test_every_query_gives_a_result_or_a_clear_error, "_handles", None)
    if handles is None:
        handles = [api.load(p) for p, _ in runs.values()]
        test_every_query_gives_a_result_or_a_clear_error._handles = handles
    for h in handles:
        for name, args in (("static_neighbours", (text, 3)), ("vector", (text,)), ("word_count", (text,)),
                           ("score", (text,)),
                           ("contextual_vectors", (text,)), ("analogy", (text, other, "car", 2)),
                           ("fill_mask", (text,)), ("attention", (text,))):
            try:
                getattr(h, name)(*args)
            except Word2BertError as e:
                assert str(e)


def test_neighbours_can_leave_out_words_seen_too_rarely(runs):
    """A run keeps how often it saw each word: its neighbours and analogies can leave out the rare ones (their
    vectors mean little), the order of the rest unchanged; vectors without counts are never filtered."""
    from engine.data.keyed_vectors import StaticVectors

    w2v = api.load(runs["word2vec"][0])
    assert w2v.word_counts_known()
    counts = w2v.static_vectors().counts
    words = w2v.static_vectors().words
    floor = int(np.median(counts))
    every = w2v.static_neighbours("banana", 40)
    kept = w2v.static_neighbours("banana", 10, min_count=floor)
    seen = {w: int(c) for w, c in zip(words, counts, strict=True)}
    assert any(seen[n.word] < floor for n in every[:10])  # (the floor does leave out some of the ten)
    assert all(seen[n.word] >= floor for n in kept)
    assert [n.word for n in kept] == [n.word for n in every if seen[n.word] >= floor][:10]
    assert all(seen[n.word] >= floor for n in w2v.analogy("car", "banana", "piano", 5, min_count=floor))
    with pytest.raises(api.InputError, match="min_count"):
        w2v.static_neighbours("banana", 5, min_count=0)
    plain = StaticVectors(list(words), w2v.static_vectors().vectors)  # (a vectors file: no counts)
    assert [w for w, _ in plain.neighbours("banana", 10, min_count=10**9)] == [n.word for n in every[:10]]
    assert w2v.word_count("banana") == seen["banana"] > 0  # how often the word itself was seen
    assert w2v.word_count("qqzzxxwv") == 0 and plain.count("banana") is None  # never seen; no counts kept
    nnlm = api.load(runs["nnlm"][0])  # (its vectors leave out <unk>, <s>, </s>: the counts follow them)
    assert nnlm.word_counts_known() and len(nnlm.static_vectors().counts) == len(nnlm.static_vectors().words)


def test_a_word_typed_as_written_finds_the_word_the_model_learned(runs, tmp_path):
    """word2bert's tokenizer read "U.S." as "u.s" and a full stop, so a static model trained here has "u.s": typed
    "U.S." (or "Banana." or “banana”), the query finds it; a vectors file that has the typed form (GloVe's
    "u.s.") keeps it; two words stay unknown, with the reason."""
    w2v = api.load(runs["word2vec"][0])
    assert [n.word for n in w2v.static_neighbours("Banana.", 5)] == [n.word for n in w2v.static_neighbours("banana", 5)]
    assert w2v.word_count("“banana”") == w2v.word_count("banana") > 0
    np.testing.assert_array_equal(w2v.vector("banana!"), w2v.vector("banana"))
    with pytest.raises(api.UnknownWord, match="banana piano"):
        w2v.vector("banana piano")
    rng = np.random.default_rng(0)
    rows = {"u.s": rng.normal(size=4), "u.s.": rng.normal(size=4), "states": rng.normal(size=4)}
    path = tmp_path / "tiny.txt"
    path.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in v)}\n" for w, v in rows.items()), encoding="utf-8")
    plain = api.load(path)
    np.testing.assert_allclose(plain.vector("U.S."), rows["u.s."], atol=1e-4)  # its own form first
    np.testing.assert_allclose(plain.vector("u.s"), rows["u.s"], atol=1e-4)
    del rows["u.s."]
    path.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in v)}\n" for w, v in rows.items()), encoding="utf-8")
    np.testing.assert_allclose(api.load(path).vector("U.S."), rows["u.s"], atol=1e-4)


def test_a_models_agreement_with_people_tells_trained_vectors_from_shuffled_ones(tmp_path):
    """WordSim-353's ρ beside a static model's neighbours: word2vec's vectors agree with people's ratings, the same
    vectors dealt out to the wrong words do not, and vectors for too few of the pairs' words give no ρ to trust."""
    h = api.load("word2vec-sgns")
    trained = h.word_similarity()
    assert trained is not None and trained["spearman"] > 0.4 and trained["coverage"] > 0.9
    assert h.word_similarity() is trained  # (measured once: the vectors do not change)
    vectors = h.static_vectors()
    words, matrix = list(vectors.words[:30000]), vectors.vectors[:30000]
    shuffled = matrix[np.random.default_rng(0).permutation(len(words))]

    def vectors_file(name, rows, count):
        path = tmp_path / name
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"{count} {rows.shape[1]}\n")
            for w, row in zip(words[:count], rows[:count], strict=True):
                f.write(w + " " + " ".join(f"{x:.5f}" for x in row) + "\n")
        return api.load(path)

    dealt = vectors_file("shuffled.txt", shuffled, len(words)).word_similarity()
    assert abs(dealt["spearman"]) < 0.15 and dealt["coverage"] > 0.9, dealt
    few = vectors_file("few.txt", matrix, 300).word_similarity()
    assert few["coverage"] < 0.5  # (the app shows no ρ for it)
