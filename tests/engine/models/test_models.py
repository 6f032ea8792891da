"""Each static model learns on a tiny corpus, and the learned structure is what a user would expect."""

import json

import numpy as np
import pytest
import torch

from engine.config.settings import GloveConfig, NGramConfig, NNLMConfig, Word2VecConfig
from engine.data.corpora import get_corpus
from engine.data.text import encode_sentences, tokenized_sentences
from engine.data.vocab import Vocab
from engine.models.ngram import RESERVED, UNK, NGramLM
from engine.models.word2vec.model import Word2VecModel, train_steps
from tests.conftest import TOPICS


def corpus_sentences(path):
    return list(tokenized_sentences(get_corpus(str(path)).sentences("all")))


def topic_precision(words, vectors):
    """For each topic word, the share of its 7 nearest topic words (by cosine) from its own topic.
    Chance is 7/23 x ... about 0.3; a model that learned the topics is near 1."""
    index = {w: i for i, w in enumerate(words)}
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    members = [(w, t) for t, ws in TOPICS.items() for w in ws]
    hits = []
    for w, t in members:
        others = sorted(((unit[index[w]] @ unit[index[v]], u) for v, u in members if v != w), reverse=True)[:7]
        hits.append(np.mean([u == t for _, u in others]))
    return float(np.mean(hits))


def topic_separation(words, vectors):
    """Mean cosine within topics minus mean cosine across topics."""
    index = {w: i for i, w in enumerate(words)}
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    within, across = [], []
    groups = list(TOPICS.values())
    for gi, g in enumerate(groups):
        for a in g:
            for b in g:
                if a < b:
                    within.append(unit[index[a]] @ unit[index[b]])
            for h in groups[gi + 1:]:
                for b in h:
                    across.append(unit[index[a]] @ unit[index[b]])
    return float(np.mean(within) - np.mean(across))


@pytest.mark.parametrize("kernel", [True, False], ids=["cpu-kernel", "torch-batched"])
@pytest.mark.parametrize("sg,hs", [(1, 0), (0, 0), (1, 1), (0, 1)], ids=["sg-ns", "cbow-ns", "sg-hs", "cbow-hs"])
def test_word2vec_loss_falls_and_related_words_come_closer(topic_corpus, sg, hs, kernel):
    sents = corpus_sentences(topic_corpus)
    cfg = Word2VecConfig(sg=sg, hs=hs, vector_size=32, epochs=15, min_count=2, sample=0, batch_pairs=256,
                         alpha=0.05)
    vocab = Vocab.build(sents, cfg.min_count)
    ids, starts = encode_sentences(sents, vocab.index)
    model = Word2VecModel(vocab, cfg, torch.device("cpu"), seed=0)
    per_epoch = np.zeros((cfg.epochs, 2))  # summed loss, pairs
    with torch.no_grad():
        for info in train_steps(model, ids, starts, seed=0, kernel=kernel):
            per_epoch[info["epoch"]] += (float(info["step_loss"]), info["loss_pairs"])
    loss = per_epoch[:, 0] / per_epoch[:, 1]  # mean loss per pair, each epoch
    assert np.all(np.isfinite(loss)) and loss[-1] < 0.9 * loss[0]
    assert topic_separation(vocab.words, model.word_vectors()) > 0.2
    assert topic_precision(vocab.words, model.word_vectors()) > 0.8


@pytest.mark.parametrize("batch", [2048, 8192])
@pytest.mark.parametrize("sg", [1, 0], ids=["sg-ns", "cbow-ns"])
def test_batched_steps_that_give_a_word_hundreds_of_gradients_at_once_stay_finite_and_learn(topic_corpus, sg, batch):
    """The GPU's batched negative-sampling steps with a batch far larger than the vocabulary (70 words): every row
    is a target and a noise word hundreds of times in one step, as "a" was on the corpus with conversation, whose
    summed stale gradients then blew every row up. Each row's step is capped (ROW_UPDATE_CAP): the vectors stay
    finite and of sane length, and the topics are learned."""
    sents = corpus_sentences(topic_corpus)
    cfg = Word2VecConfig(sg=sg, hs=0, vector_size=32, epochs=15, min_count=2, sample=0, batch_pairs=batch, alpha=0.05)
    vocab = Vocab.build(sents, cfg.min_count)
    ids, starts = encode_sentences(sents, vocab.index)
    model = Word2VecModel(vocab, cfg, torch.device("cpu"), seed=0)
    with torch.no_grad():
        for _ in train_steps(model, ids, starts, seed=0, kernel=False):
            pass
    assert model.finite()
    assert float(model.syn0.norm(dim=1).max()) < 20 and float(model.syn1.norm(dim=1).max()) < 20
    assert topic_precision(vocab.words, model.word_vectors()) > 0.8


@pytest.mark.parametrize("sg,hs", [(1, 0), (1, 1)], ids=["sg-ns", "sg-hs"])
def test_batched_steps_that_sample_their_loss_learn_the_same_vectors(topic_corpus, sg, hs, monkeypatch):
    """On a GPU the batched steps compute their loss on one step in LOSS_EVERY: driven here on the CPU with one
    in 4, the vectors are exactly those of a run that computed every loss, one step in 4 carries a loss, and the
    logged mean over those steps still falls epoch by epoch."""
    from engine.models.word2vec import model as word2vec_model

    sents = corpus_sentences(topic_corpus)
    cfg = Word2VecConfig(sg=sg, hs=hs, vector_size=32, epochs=6, min_count=2, sample=0, alpha=0.05, batch_pairs=64,
                         negative_group=16)
    vocab = Vocab.build(sents, cfg.min_count)
    ids, starts = encode_sentences(sents, vocab.index)
    runs = {}
    for every in (1, 4):
        monkeypatch.setattr(word2vec_model, "loss_every", lambda device, n=every: n)
        model = Word2VecModel(vocab, cfg, torch.device("cpu"), seed=0)
        per_epoch = np.zeros((cfg.epochs, 2))
        measured = steps = 0
        with torch.no_grad():
            for info in train_steps(model, ids, starts, seed=0, kernel=False):
                if info["pairs"]:
                    steps += 1
                    measured += info["loss_pairs"] > 0
                per_epoch[info["epoch"]] += (float(info["step_loss"]), info["loss_pairs"])
        runs[every] = (model.word_vectors(), per_epoch[:, 0] / per_epoch[:, 1], measured, steps)
    assert np.array_equal(runs[1][0], runs[4][0])
    assert runs[1][2] == runs[1][3] and abs(runs[4][2] - runs[4][3] / 4) <= 1
    sampled = runs[4][1]
    assert np.all(np.isfinite(sampled)) and sampled[-1] < 0.9 * sampled[0]
    assert abs(sampled[-1] - runs[1][1][-1]) < 0.25 * runs[1][1][-1]  # the same loss, estimated from a quarter


@pytest.mark.parametrize("sg,hs", [(1, 0), (0, 0), (1, 1), (0, 1)], ids=["sg-ns", "cbow-ns", "sg-hs", "cbow-hs"])
def test_word2vec_kernel_cut_in_16_blocks_learns_as_one_thread_does(topic_corpus, sg, hs, monkeypatch):
    """What 16 cores run, driven on any machine: each call cut into 16 blocks. Summing 16 copies of the top
    Huffman nodes' changes sent the loss to 1e12 on a 16-core machine, and their mean left CBOW's loss 3.5%
    above one block's here (a copied node learned as from one block's pairs); the run must learn what one
    block learns."""
    from engine.models.word2vec import cpu as word2vec_cpu

    sents = corpus_sentences(topic_corpus)
    cfg = Word2VecConfig(sg=sg, hs=hs, vector_size=32, epochs=15, min_count=2, sample=0, alpha=0.05)
    vocab = Vocab.build(sents, cfg.min_count)
    ids, starts = encode_sentences(sents, vocab.index)
    results = {}
    for blocks in (1, 16):
        monkeypatch.setattr(word2vec_cpu, "step_words", lambda: 16 * 200)  # noqa: B023
        monkeypatch.setattr(word2vec_cpu, "blocks_for", lambda span, b=blocks: min(b, max(1, span // 100)))
        model = Word2VecModel(vocab, cfg, torch.device("cpu"), seed=0)
        per_epoch = np.zeros((cfg.epochs, 2))
        with torch.no_grad():
            for info in train_steps(model, ids, starts, seed=0, kernel=True):
                per_epoch[info["epoch"]] += (float(info["step_loss"]), info["loss_pairs"])
        results[blocks] = (per_epoch[:, 0] / per_epoch[:, 1], model.word_vectors())
    one, sixteen = results[1][0], results[16][0]
    assert np.all(np.isfinite(sixteen)) and sixteen[-1] < 0.9 * sixteen[0]
    # the last epoch's loss per pair as low as one thread's, nearly (the threads' races moved it by 0.1-0.2% on
    # 2 cores; negative sampling's 16 blocks end 2% above with CBOW)
    assert sixteen[-1] < (1.02 if hs else 1.05) * one[-1]
    assert topic_separation(vocab.words, results[16][1]) > 0.2
    assert topic_precision(vocab.words, results[16][1]) > 0.8


@pytest.mark.parametrize("kernel", [True, False], ids=["cpu-kernel", "torch-batched"])
def test_word2vec_subwords_give_unknown_words_a_vector(topic_corpus, kernel):
    from engine.models.word2vec.subwords import ngram_rows

    sents = corpus_sentences(topic_corpus)
    cfg = Word2VecConfig(sg=1, vector_size=16, epochs=3, min_count=2, subword_buckets=5000, sample=0)
    vocab = Vocab.build(sents, cfg.min_count)
    ids, starts = encode_sentences(sents, vocab.index)
    model = Word2VecModel(vocab, cfg, torch.device("cpu"), seed=0)
    with torch.no_grad():
        for _ in train_steps(model, ids, starts, seed=0, kernel=kernel):
            pass
    rows = ngram_rows("bananas", cfg, len(vocab))
    assert rows and all(len(vocab) <= r < len(vocab) + cfg.subword_buckets for r in rows)
    assert model.syn0[-1].abs().sum() == 0  # the padding row stays zero
    v = model.syn0[rows].mean(0).cpu().numpy()
    banana = model.word_vectors()[vocab.index["banana"]]
    truck = model.word_vectors()[vocab.index["truck"]]
    cos = lambda a, b: a @ b / np.linalg.norm(a) / np.linalg.norm(b)  # noqa: E731
    assert cos(v, banana) > cos(v, truck)


def ngram_model(sents, order, smoothing, prune=0):
    vocab = Vocab.build(sents, 1, reserved=RESERVED)
    enc = [[vocab.index.get(w, vocab.index[UNK]) for w in s] for s in sents]
    return vocab, NGramLM(vocab, NGramConfig(order=order, smoothing=smoothing, min_count=1, prune=prune)).fit(enc)


@pytest.mark.parametrize(("smoothing", "prune"), [("laplace", 0), ("kneser-ney", 0), ("kneser-ney", 2),
                                                  ("kneser-ney", 3)])
@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_ngram_probabilities_sum_to_one(topic_corpus, smoothing, prune, order):
    """Every history's next-word distribution sums to one: a pruned model's too (the shares of the m-grams it
    dropped go to their history's back-off), seen histories and dropped ones alike."""
    sents = corpus_sentences(topic_corpus)[:200]
    vocab, lm = ngram_model(sents, order, smoothing, prune)
    for history in (["the", "old"], ["she", "played"], ["never", "seen"]):
        hist = [vocab.index.get(w, vocab.index[UNK]) for w in history]
        total = sum(np.exp(lm.token_logprobs([hist + [w]])[0][len(hist)]) for w in range(len(vocab)))
        assert total == pytest.approx(1.0, abs=1e-6)


def test_a_pruned_kneser_ney_keeps_the_frequent_ngrams_and_scores_held_out_text_almost_as_well(topic_corpus,
                                                                                              tmp_path):
    """Pruning drops the rare m-grams (the file shrinks) yet keeps the frequent ones' probabilities near the
    full model's, and the held-out perplexity within a few percent; saved and loaded, it scores the same."""
    from engine.checkpoints.saves import save_run
    from engine.handles.static import load_ngram

    sents = corpus_sentences(topic_corpus)
    train, held = sents[: int(len(sents) * 0.9)], sents[int(len(sents) * 0.9):]
    rng = np.random.default_rng(0)  # and some odd sentences: their trigrams are rare, as most of a real text's are
    train = train + [list(rng.permutation(s)) for s in train[:100]]
    vocab, full = ngram_model(train, 3, "kneser-ney")
    _, pruned = ngram_model(train, 3, "kneser-ney", prune=2)
    assert len(pruned.tables[2].keys) < 0.6 * len(full.tables[2].keys)
    assert len(pruned.tables[1].keys) < len(full.tables[1].keys) and pruned.discount == full.discount
    enc = [[vocab.index.get(w, vocab.index[UNK]) for w in s] for s in held]
    assert pruned.perplexity(enc) < 1.1 * full.perplexity(enc)  # (it may even be lower: rare trigrams overfit)
    common = [vocab.index[w] for w in ["she", "played", "the"]]
    assert np.allclose(pruned.token_logprobs([common])[0][:3], full.token_logprobs([common])[0][:3], atol=0.05)
    from engine.config.checks import check_config

    assert "Kneser-Ney" in " ".join(check_config("ngram", NGramConfig(smoothing="laplace", prune=2)))
    config = {"kind": "ngram", "model": {"order": 3, "smoothing": "kneser-ney", "min_count": 1, "prune": 2}}
    save_run(tmp_path, "ngram", config, pruned.tensors(), files={"vocab.txt": vocab.save})
    loaded = load_ngram(tmp_path, json.loads((tmp_path / "config.json").read_text()))
    words = [[vocab.words[i] for i in s] for s in enc[:50]]
    assert np.allclose(np.concatenate(loaded._scorer(words)), np.concatenate(pruned.token_logprobs(enc[:50])))


def _old_format(lm):
    """What ``tensors`` wrote before the trie: every order's m-grams as int64 keys, both counts at every order."""
    out = {}
    for m, t in enumerate(lm.tables, 1):
        out[f"order{m}.keys"], out[f"order{m}.counts"], out[f"order{m}.cont"] = t.keys, t.counts, t.cont
        if lm.pruned:
            out[f"order{m}.total"], out[f"order{m}.backoff"] = lm.hist_total[m - 1], lm.backoff[m - 1]
    if lm.pruned:
        out["discount"] = np.asarray(lm.discount)
    return out


@pytest.mark.parametrize(("smoothing", "prune", "order"), [("laplace", 0, 3), ("kneser-ney", 0, 3),
                                                           ("kneser-ney", 2, 3), ("kneser-ney", 2, 4),
                                                           ("kneser-ney", 0, 1)])
def test_an_ngram_saves_as_a_trie_half_the_size_and_loads_as_it_scored_in_either_format(topic_corpus, tmp_path,
                                                                                        smoothing, prune, order):
    """A saved n-gram model holds each m-gram's last word (int32) under its prefix, not an int64 key, and a pruned
    model only the counts it scores with: a smaller file that scores every word as the model did; a folder saved
    the old way loads and scores the same."""
    from engine.checkpoints.saves import save_run
    from engine.handles.static import load_ngram

    sents = corpus_sentences(topic_corpus)
    train, held = sents[: int(len(sents) * 0.9)], sents[int(len(sents) * 0.9):]
    vocab, lm = ngram_model(train, order, smoothing, prune)
    enc = [[vocab.index.get(w, vocab.index[UNK]) for w in s] for s in held[:60]]
    words = [[vocab.words[i] for i in s] for s in enc]
    expected = np.concatenate(lm.token_logprobs(enc))
    config = {"kind": "ngram", "model": {"order": order, "smoothing": smoothing, "min_count": 1, "prune": prune}}
    sizes = {}
    for name, tensors in (("trie", lm.tensors()), ("keys", _old_format(lm))):
        folder = tmp_path / name
        save_run(folder, "ngram", config, tensors, files={"vocab.txt": vocab.save})
        sizes[name] = (folder / "model.safetensors").stat().st_size
        loaded = load_ngram(folder, json.loads((folder / "config.json").read_text()))
        assert np.allclose(np.concatenate(loaded._scorer(words)), expected, atol=1e-6), name
    if order > 1:
        assert sizes["trie"] < (0.7 if prune else 0.8) * sizes["keys"]


def test_kneser_ney_beats_laplace_and_shuffles_score_lower(topic_corpus):
    sents = corpus_sentences(topic_corpus)
    train, held = sents[: int(len(sents) * 0.9)], sents[int(len(sents) * 0.9):]
    vocab, kn = ngram_model(train, 3, "kneser-ney")
    _, lap = ngram_model(train, 3, "laplace")
    enc = [[vocab.index.get(w, vocab.index[UNK]) for w in s] for s in held]
    assert kn.perplexity(enc) < lap.perplexity(enc)
    original = [vocab.index[w] for w in ["he", "drove", "the", "car", "to", "town"]]
    shuffled = [vocab.index[w] for w in ["town", "car", "the", "drove", "to", "he"]]
    assert kn.token_logprobs([original])[0].sum() > kn.token_logprobs([shuffled])[0].sum()


def test_glove_loss_falls(topic_corpus):
    from engine.models.glove import GloveModel, cooccurrence
    from engine.models.glove import train_steps as glove_steps

    sents = corpus_sentences(topic_corpus)
    cfg = GloveConfig(vector_size=16, epochs=30, min_count=2, batch_size=512, window=5)
    vocab = Vocab.build(sents, cfg.min_count)
    ids, starts = encode_sentences(sents, vocab.index)
    rows, cols, vals = cooccurrence(ids, starts, len(vocab), cfg.window)
    assert (vals > 0).all() and len(vals) > 100
    model = GloveModel(len(vocab), cfg, seed=0)
    epoch_loss = {}
    for info in glove_steps(model, rows, cols, vals, torch.device("cpu"), seed=0):
        epoch_loss[info["epoch"]] = epoch_loss.get(info["epoch"], 0.0) + float(info["step_loss"])
    assert epoch_loss[cfg.epochs - 1] < 0.3 * epoch_loss[0]
    assert topic_precision(vocab.words, model.vectors()) > 0.6  # chance is about 0.3


def test_nnlm_overfits_a_tiny_corpus(topic_corpus):
    from engine.models.ngram import BOS, EOS
    from engine.models.nnlm import NNLM, perplexity, windows

    sents = corpus_sentences(topic_corpus)[:100]
    cfg = NNLMConfig(context=3, dim=16, hidden=32)
    vocab = Vocab.build(sents, 1, reserved=RESERVED)
    enc = [[vocab.index[w] for w in s] for s in sents]
    hist, target = (torch.from_numpy(a) for a in windows(enc, cfg.context, vocab.index[BOS], vocab.index[EOS]))
    torch.manual_seed(0)
    model = NNLM(len(vocab), cfg)
    before = perplexity(model, enc, vocab.index[BOS], vocab.index[EOS], torch.device("cpu"))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(150):
        loss = torch.nn.functional.cross_entropy(model(hist), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = perplexity(model, enc, vocab.index[BOS], vocab.index[EOS], torch.device("cpu"))
    assert after < before / 5


def test_a_cap_on_hierarchical_softmax_threads_applies_to_every_core_not_to_an_explicit_count(monkeypatch):
    from engine.models.word2vec import cpu as word2vec_cpu

    cores = word2vec_cpu.numba.config.NUMBA_NUM_THREADS
    if cores < 2:
        pytest.skip("one thread here: no cap to see")
    monkeypatch.delenv("WORD2BERT_SPARE_CORES", raising=False)
    monkeypatch.setattr(word2vec_cpu, "HS_THREADS", 1)
    try:
        word2vec_cpu.set_threads(0, hs=True)
        assert word2vec_cpu.threads() == 1  # every core asked for: the cap
        word2vec_cpu.set_threads(2, hs=True)
        assert word2vec_cpu.threads() == 2  # --workers 2: obeyed
        word2vec_cpu.set_threads(0, hs=False)
        assert word2vec_cpu.threads() == cores  # negative sampling: no cap
        monkeypatch.setattr(word2vec_cpu, "HS_THREADS", 0)
        word2vec_cpu.set_threads(0, hs=True)
        assert word2vec_cpu.threads() == cores  # 0: no cap (the default until a 16-core machine says otherwise)
    finally:
        word2vec_cpu.set_threads(0)


def test_word2vec_workers_sets_the_kernel_threads(topic_corpus, monkeypatch):
    from engine.models.word2vec import cpu as word2vec_cpu

    cores = word2vec_cpu.numba.config.NUMBA_NUM_THREADS
    monkeypatch.setenv("WORD2BERT_SPARE_CORES", "1")  # what a run beside the app (--background) sets
    word2vec_cpu.set_threads(0)
    assert word2vec_cpu.threads() == max(1, cores - 1)
    monkeypatch.delenv("WORD2BERT_SPARE_CORES")

    sents = corpus_sentences(topic_corpus)
    vocab = Vocab.build(sents, 2)
    ids, starts = encode_sentences(sents, vocab.index)
    try:
        for workers in (1, 0):
            cfg = Word2VecConfig(sg=1, vector_size=32, epochs=15, min_count=2, sample=0, alpha=0.05, workers=workers)
            model = Word2VecModel(vocab, cfg, torch.device("cpu"), seed=0)
            for _ in train_steps(model, ids, starts, seed=0, kernel=True):
                assert word2vec_cpu.threads() == (1 if workers else word2vec_cpu.numba.config.NUMBA_NUM_THREADS)
            assert topic_precision(vocab.words, model.word_vectors()) > 0.8
    finally:
        word2vec_cpu.set_threads(0)
