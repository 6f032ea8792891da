"""word2vec's skip-gram step replayed as a CUDA graph makes the update the step itself makes, and a run
with it learns. A GPU's test: skipped where CUDA is not there (bench/gpu_check.py runs it on one)."""

import numpy as np
import pytest
import torch

from engine.config.settings import Word2VecConfig
from engine.data.corpora import get_corpus
from engine.data.text import encode_sentences, tokenized_sentences
from engine.data.vocab import Vocab
from engine.models.word2vec import fused, graphed
from engine.models.word2vec.model import Word2VecModel, train_steps
from tests.engine.models.test_models import topic_precision

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a CUDA device")
CUDA = torch.device("cuda")


def _vocab(topic_corpus):
    sents = list(tokenized_sentences(get_corpus(str(topic_corpus)).sentences("all")))
    return sents, Vocab.build(sents, 2)


def test_a_replayed_step_updates_the_vectors_as_the_eager_step_does(topic_corpus):
    _, vocab = _vocab(topic_corpus)
    cfg = Word2VecConfig(sg=1, hs=0, vector_size=32, min_count=2, batch_pairs=256)
    eager, replayed = Word2VecModel(vocab, cfg, CUDA, seed=3), Word2VecModel(vocab, cfg, CUDA, seed=3)
    step = graphed.graphed_step(replayed, 256, 256 // cfg.negative_group, cfg.shared_negatives)
    assert step is not None, "the step could not be captured (see the log)"
    assert torch.equal(eager.syn0, replayed.syn0) and torch.equal(eager.syn1, replayed.syn1)  # capture changed nothing
    gen = torch.Generator(device=CUDA).manual_seed(0)
    with torch.no_grad():
        # twice with the loss (the second replay reads the buffers the first left), then the graph without it
        for lr, with_loss in ((0.05, True), (0.02, True), (0.03, False)):
            inp, out = (torch.randint(len(vocab), (256,), device=CUDA, generator=gen) for _ in range(2))
            negs = torch.randint(len(vocab), (256 // cfg.negative_group, cfg.shared_negatives), device=CUDA, generator=gen)
            want = eager.step_ns(inp, None, out, negs, lr, want_loss=with_loss)
            got = step(inp, out, negs, lr, want_loss=with_loss)
            if with_loss:
                assert got is not None and want is not None and torch.allclose(got, want, rtol=1e-4)
            else:
                assert got is None and want is None
    # index_add_ sums in no fixed order on a GPU: equal up to float rounding
    assert torch.allclose(replayed.syn0, eager.syn0, atol=1e-6) and torch.allclose(replayed.syn1, eager.syn1, atol=1e-6)
    assert not torch.equal(replayed.syn1, torch.zeros_like(replayed.syn1))  # the replays did train


def test_a_graphed_run_on_cuda_learns_the_topics(topic_corpus, monkeypatch):
    monkeypatch.setattr(fused, "ENABLED", False)  # as where Triton is missing: the fused kernel runs otherwise
    sents, vocab = _vocab(topic_corpus)
    cfg = Word2VecConfig(sg=1, hs=0, vector_size=32, epochs=15, min_count=2, sample=0, batch_pairs=256, alpha=0.05)
    ids, starts = encode_sentences(sents, vocab.index)
    model = Word2VecModel(vocab, cfg, CUDA, seed=0)
    before = graphed.STATS["captured"]
    with torch.no_grad():
        for _ in train_steps(model, ids, starts, seed=0):
            pass
    assert graphed.STATS["captured"] == before + 1  # one capture for the run, replayed at every full batch
    vectors = model.word_vectors()
    assert np.all(np.isfinite(vectors))
    assert topic_precision(vocab.words, vectors) > 0.8
