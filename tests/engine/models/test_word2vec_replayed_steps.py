"""Several word2vec steps run as one (what one CUDA graph replay runs, engine.models.word2vec.graphed) make
the updates the steps make one by one: each its own pairs, its own noise words, its own learning rate.
Checked on the CPU, where the replay's body runs eagerly; tests/engine/models/test_word2vec_graphed.py
checks the captured graph on a GPU."""

import numpy as np
import pytest
import torch

from engine.config.settings import Word2VecConfig
from engine.data.corpora import get_corpus
from engine.data.text import encode_sentences, tokenized_sentences
from engine.data.vocab import Vocab
from engine.models.word2vec import graphed
from engine.models.word2vec import model as w2v_model
from engine.models.word2vec.model import Word2VecModel, train_steps

CPU = torch.device("cpu")


def _setup(topic_corpus, **cfg):
    sents = list(tokenized_sentences(get_corpus(str(topic_corpus)).sentences("all")))
    vocab = Vocab.build(sents, 2)
    ids, starts = encode_sentences(sents, vocab.index)
    return vocab, ids, starts, Word2VecConfig(sg=1, hs=0, vector_size=16, min_count=2, **cfg)


def test_steps_run_together_update_as_steps_run_one_by_one(topic_corpus):
    vocab, _, _, cfg = _setup(topic_corpus, batch_pairs=64)
    one, many = Word2VecModel(vocab, cfg, CPU, seed=2), Word2VecModel(vocab, cfg, CPU, seed=2)
    gen = torch.Generator().manual_seed(0)
    k, pairs, groups = 3, 64, 64 // cfg.negative_group
    inp, out = (torch.randint(len(vocab), (k * pairs,), generator=gen) for _ in range(2))
    negs = torch.randint(len(vocab), (k * groups, cfg.shared_negatives), generator=gen)
    want = [one.step_ns(inp[i * pairs:(i + 1) * pairs], None, out[i * pairs:(i + 1) * pairs],
                        negs[i * groups:(i + 1) * groups], 0.05 - 0.01 * i) for i in range(k)]
    got = graphed.run_steps(many, inp, out, negs, torch.tensor(0.05), torch.tensor(-0.01), k, cfg.min_alpha)
    assert got.shape == (k,)
    assert torch.allclose(got, torch.stack(want), rtol=1e-5)
    assert torch.allclose(many.syn0, one.syn0, atol=1e-6) and torch.allclose(many.syn1, one.syn1, atol=1e-6)
    # a rate below the run's floor is the floor: the third step at 0.05 - 0.1·2 < 0 would unlearn
    low = Word2VecModel(vocab, cfg, CPU, seed=2)
    graphed.run_steps(low, inp, out, negs, torch.tensor(0.05), torch.tensor(-0.1), k, cfg.min_alpha)
    floor = Word2VecModel(vocab, cfg, CPU, seed=2)
    for i, lr in enumerate((0.05, cfg.min_alpha, cfg.min_alpha)):
        floor.step_ns(inp[i * pairs:(i + 1) * pairs], None, out[i * pairs:(i + 1) * pairs],
                      negs[i * groups:(i + 1) * groups], lr)
    assert torch.allclose(low.syn1, floor.syn1, atol=1e-6)


class _EagerReplay:
    """A stand-in for a captured multi-step graph on the CPU: the same body, run eagerly."""

    def __init__(self, model, steps: int) -> None:
        self.model, self.steps, self.calls = model, steps, 0

    def __call__(self, inp, out, negs, lr, dlr=0.0):
        self.calls += 1
        return graphed.run_steps(self.model, inp, out, negs, torch.tensor(lr), torch.tensor(dlr), self.steps,
                                 self.model.cfg.min_alpha)


@pytest.mark.parametrize("steps", [2, 5])
def test_a_run_in_replays_of_several_steps_trains_as_a_run_of_single_steps(topic_corpus, monkeypatch, steps):
    """The training loop hands a replay consecutive full batches with their own noise words and rates, and
    the rest (a chunk's last steps) one by one: the vectors come out as a run of single steps makes them."""
    vocab, ids, starts, cfg = _setup(topic_corpus, batch_pairs=64, epochs=2, sample=0)
    plain = Word2VecModel(vocab, cfg, CPU, seed=0)
    with torch.no_grad():
        plain_steps = list(train_steps(plain, ids, starts, seed=0, kernel=False))
    replays: list[_EagerReplay] = []

    def stand_in(model, pairs, groups, pool, n=1):
        replays.append(_EagerReplay(model, n))
        return replays[-1]

    monkeypatch.setattr(w2v_model, "graphed_step", stand_in)
    monkeypatch.setattr(graphed, "STEPS_PER_REPLAY", steps)
    together = Word2VecModel(vocab, cfg, CPU, seed=0)
    with torch.no_grad():
        together_steps = list(train_steps(together, ids, starts, seed=0, kernel=False))
    assert [r.steps for r in replays] == [1, steps]  # a one-step graph for a chunk's last steps, and the run
    assert replays[1].calls > 0, "no replay of several steps ran: the corpus is too small for the test"
    assert len(together_steps) == len(plain_steps)
    assert [s["words_done"] for s in together_steps] == [s["words_done"] for s in plain_steps]
    np.testing.assert_allclose([float(s["step_loss"]) for s in together_steps],
                               [float(s["step_loss"]) for s in plain_steps], rtol=1e-4)
    np.testing.assert_allclose(together.word_vectors(), plain.word_vectors(), atol=1e-5)
