"""word2vec's fused skip-gram kernel (engine.models.word2vec.fused): the kernel makes the batched step's
update group by group, and a run through it learns. The kernel needs Triton and CUDA (bench/gpu_check.py runs
those tests on a GPU; ``TRITON_INTERPRET=1`` runs them on a CPU where Triton is installed); the steps' own
walk through a chunk is checked everywhere, with the kernel replaced by the batched step, group by group."""

import importlib.util
import os

import numpy as np
import pytest
import torch

from engine.config.settings import Word2VecConfig
from engine.data.text import encode_sentences
from engine.data.vocab import Vocab
from engine.models.word2vec import fused
from engine.models.word2vec import model as word2vec_model
from engine.models.word2vec.model import Word2VecModel, train_steps
from tests.engine.models.test_models import corpus_sentences, topic_precision

if torch.cuda.is_available():
    KERNEL_DEVICE: torch.device | None = torch.device("cuda")
elif os.environ.get("TRITON_INTERPRET") == "1":
    KERNEL_DEVICE = torch.device("cpu")
else:
    KERNEL_DEVICE = None
needs_kernel = pytest.mark.skipif(importlib.util.find_spec("triton") is None or KERNEL_DEVICE is None,
                                  reason="the fused kernel needs Triton and CUDA (or TRITON_INTERPRET=1)")


def group_by_group(model: Word2VecModel):
    """``fused.train_chunk`` as the batched step makes it, one group a step, the rate falling group by group:
    what the kernel computes with one program (CBOW: ``inp`` the context words, -1 where there are none, given
    to the step as words and a mask)."""
    def train_chunk(syn0, syn1, inp, out, negs, lr_start, lr_end, negative, programs=None, cbow_mean=True):
        assert syn0 is model.syn0 and syn1 is model.syn1 and negative == model.cfg.negative
        assert bool(cbow_mean) == bool(model.cfg.cbow_mean)
        n_groups, g = negs.shape[0], inp.shape[0] // max(1, negs.shape[0])
        mask = None if inp.dim() == 1 else inp >= 0
        total = torch.zeros((), device=syn0.device)
        for gid in range(n_groups):
            lr = lr_start - (lr_start - lr_end) * gid / n_groups
            part = slice(gid * g, (gid + 1) * g)
            if mask is None:
                total += model.step_ns(inp[part], None, out[part], negs[gid : gid + 1], lr)
            else:
                total += model.step_ns(inp[part].clamp_min(0), mask[part], out[part], negs[gid : gid + 1], lr)
        return total
    return train_chunk


def _topics(topic_corpus, sg: int = 1, cbow_mean: int = 1):
    sents = corpus_sentences(topic_corpus)
    cfg = Word2VecConfig(sg=sg, hs=0, vector_size=32, epochs=15, min_count=2, sample=0, batch_pairs=256, alpha=0.05,
                         cbow_mean=cbow_mean)
    vocab = Vocab.build(sents, cfg.min_count)
    return cfg, vocab, *encode_sentences(sents, vocab.index)


def _train(model, ids, starts):
    per_epoch = np.zeros((model.cfg.epochs, 2))  # summed loss, pairs
    steps = 0
    with torch.no_grad():
        for info in train_steps(model, ids, starts, seed=0, kernel=False):
            per_epoch[info["epoch"]] += (float(info["step_loss"]), info["loss_pairs"])
            steps += info["pairs"] > 0
    return per_epoch[:, 0] / per_epoch[:, 1], steps


@pytest.mark.parametrize("sg", [1, 0], ids=["skip-gram", "cbow"])
@pytest.mark.parametrize("per_chunk", [True, False], ids=["a-launch-a-chunk", "a-launch-a-step"])
def test_the_steps_walk_a_chunk_through_the_fused_path_and_learn(topic_corpus, per_chunk, sg, monkeypatch):
    """With the kernel swapped for the batched step group by group (so any machine runs it): a launch takes
    every whole group of the chunk (or of a step) with no more pairs in flight than the vocabulary has words,
    the rate it is given falls from the run's start to its end, the loss falls and words of one topic end up
    nearest each other. CBOW's launches carry each example's context words, -1 where a window has none."""
    cfg, vocab, ids, starts = _topics(topic_corpus, sg=sg)
    model = Word2VecModel(vocab, cfg, torch.device("cpu"), seed=0)
    launches = []
    reference = group_by_group(model)

    def spy(syn0, syn1, inp, out, negs, lr_start, lr_end, negative, programs=None, cbow_mean=True):
        assert inp.shape[0] == out.shape[0] == negs.shape[0] * cfg.negative_group
        assert negs.shape[1] == cfg.shared_negatives and lr_start >= lr_end
        # 70 words: 4 groups of 16 pairs in flight, not the 1,056 of a real vocabulary (this corpus diverged so)
        assert programs == len(vocab) // cfg.negative_group == 4
        if not sg:  # every example has a context word, at most 2 × window, the rest -1
            assert inp.shape[1] == 2 * cfg.window and bool((inp.max(1).values >= 0).all()) and bool((inp == -1).any())
            assert int(inp.max()) < len(vocab) and cbow_mean == bool(cfg.cbow_mean)
        launches.append((inp.shape[0], lr_start, lr_end))
        return reference(syn0, syn1, inp, out, negs, lr_start, lr_end, negative, cbow_mean=cbow_mean)

    monkeypatch.setattr(fused, "CBOW_ENABLED", True)
    monkeypatch.setattr(fused, "ENABLED", True)
    monkeypatch.setattr(fused, "PER_CHUNK", per_chunk)
    monkeypatch.setattr(fused, "available", lambda device: True)
    monkeypatch.setattr(fused, "train_chunk", spy)
    loss, steps = _train(model, ids, starts)
    assert steps == len(launches)
    if per_chunk:
        assert len(launches) == cfg.epochs  # the tiny corpus is one chunk
    else:
        step = cfg.batch_pairs if sg else cfg.batch_pairs // cfg.window // cfg.negative_group * cfg.negative_group
        assert max(n for n, _, _ in launches) == step and len(launches) > 2 * cfg.epochs  # (CBOW: a step's examples)
    rates = [r for _, a, b in launches for r in (a, b)]
    assert rates[0] == pytest.approx(cfg.alpha) and rates[-1] == pytest.approx(cfg.min_alpha, abs=1e-6)
    assert all(x >= y for x, y in zip(rates, rates[1:]))  # never rising, launch to launch
    assert np.all(np.isfinite(loss)) and loss[-1] < 0.9 * loss[0]
    assert topic_precision(vocab.words, model.word_vectors()) > 0.8


@needs_kernel
@pytest.mark.parametrize("programs", [1, 3])
def test_the_kernel_makes_the_batched_steps_update_group_by_group(topic_corpus, programs, monkeypatch):
    """One program walks the groups in order: exactly the batched step taken group by group (without the
    batched steps' cap on a row's summed gradients, which a group of 16 pairs hardly reaches and the kernel
    does not make), rows shared between groups and within one included. With three, each program's groups
    touch rows of their own, so the order between programs cannot matter either."""
    monkeypatch.setattr(word2vec_model, "ROW_UPDATE_CAP", float("inf"))
    cfg, vocab, _, _ = _topics(topic_corpus)
    device = KERNEL_DEVICE
    assert device is not None
    g, M, n_groups = cfg.negative_group, cfg.shared_negatives, 12
    gen = torch.Generator().manual_seed(programs)
    if programs == 1:  # a small vocabulary: rows repeat within and between groups
        inp, out = (torch.randint(40, (n_groups * g,), generator=gen) for _ in range(2))
        negs = torch.randint(40, (n_groups, M), generator=gen)
        negs[0, :4] = out[:4]  # noise words equal to their own group's targets are skipped
    else:  # program p takes groups p, p+3, ...: each program's rows drawn from its own block of words
        rows = torch.arange(n_groups) % programs
        first = rows.repeat_interleave(g) * 23  # 3 blocks of 23 of the 70 words: 7 inputs, 7 targets, 9 noise
        inp = first + torch.randint(7, (n_groups * g,), generator=gen)
        out = first + 7 + torch.randint(7, (n_groups * g,), generator=gen)
        negs = rows[:, None] * 23 + 14 + torch.randint(9, (n_groups, M), generator=gen)
    inp, out, negs = inp.to(device), out.to(device), negs.to(device)
    assert len(vocab) >= 69
    kernel, steps = (Word2VecModel(vocab, cfg, device, seed=5) for _ in range(2))
    for m in (kernel, steps):  # output rows away from zero, so that every term of the update matters
        m.syn1.copy_(torch.randn(m.syn1.shape, generator=torch.Generator().manual_seed(9)).to(device) * 0.3)
    with torch.no_grad():
        got = fused.train_chunk(kernel.syn0, kernel.syn1, inp, out, negs, 0.05, 0.01, cfg.negative, programs=programs)
        want = group_by_group(steps)(steps.syn0, steps.syn1, inp, out, negs, 0.05, 0.01, cfg.negative)
    assert float(got) == pytest.approx(float(want), rel=1e-5)
    assert torch.allclose(kernel.syn0, steps.syn0, atol=1e-6) and torch.allclose(kernel.syn1, steps.syn1, atol=1e-6)
    assert not torch.equal(kernel.syn1, Word2VecModel(vocab, cfg, device, seed=5).syn1)  # it did update


@needs_kernel
@pytest.mark.parametrize(("programs", "cbow_mean"), [(1, 1), (1, 0), (3, 1)])
def test_the_cbow_kernel_makes_the_batched_steps_update_group_by_group(topic_corpus, programs, cbow_mean,
                                                                     monkeypatch):
    """CBOW's kernel: each example's context words (any number of them, up to 2 × window) averaged (or added
    up) into the vector that meets the target and the pool, its gradient added to each of them — exactly the
    batched CBOW step taken group by group, a word twice in one window and in several examples included."""
    monkeypatch.setattr(word2vec_model, "ROW_UPDATE_CAP", float("inf"))
    cfg, vocab, _, _ = _topics(topic_corpus, sg=0, cbow_mean=cbow_mean)
    device = KERNEL_DEVICE
    assert device is not None
    g, M, n_groups, C = cfg.negative_group, cfg.shared_negatives, 6 * programs, 2 * cfg.window
    gen = torch.Generator().manual_seed(programs + 10 * cbow_mean)
    rows = (torch.arange(n_groups) % programs).repeat_interleave(g)[:, None] * 23  # program p's block of words
    ctx = rows + torch.randint(7, (n_groups * g, C), generator=gen)  # (each program's rows its own, as above)
    ctx[torch.rand(ctx.shape, generator=gen) < 0.5] = -1  # windows of every size: no word, or some, or all
    ctx[:, 0] = ctx[:, 0].clamp_min(rows[:, 0])  # (at least one: an example has a context)
    out = rows[:, 0] + 7 + torch.randint(7, (n_groups * g,), generator=gen)
    negs = (torch.arange(n_groups) % programs)[:, None] * 23 + 14 + torch.randint(9, (n_groups, M), generator=gen)
    if programs == 1:
        negs[0, :4] = out[:4]  # noise words equal to their own group's targets are skipped
    ctx, out, negs = ctx.to(device), out.to(device), negs.to(device)
    kernel, steps = (Word2VecModel(vocab, cfg, device, seed=5) for _ in range(2))
    for m in (kernel, steps):
        m.syn1.copy_(torch.randn(m.syn1.shape, generator=torch.Generator().manual_seed(9)).to(device) * 0.3)
    with torch.no_grad():
        got = fused.train_chunk(kernel.syn0, kernel.syn1, ctx, out, negs, 0.05, 0.01, cfg.negative,
                                programs=programs, cbow_mean=bool(cbow_mean))
        want = group_by_group(steps)(steps.syn0, steps.syn1, ctx, out, negs, 0.05, 0.01, cfg.negative,
                                     cbow_mean=bool(cbow_mean))
    assert float(got) == pytest.approx(float(want), rel=1e-5)
    assert torch.allclose(kernel.syn0, steps.syn0, atol=1e-6) and torch.allclose(kernel.syn1, steps.syn1, atol=1e-6)
    fresh = Word2VecModel(vocab, cfg, device, seed=5)
    assert not torch.equal(kernel.syn0, fresh.syn0)  # the context words moved


@needs_kernel
@pytest.mark.parametrize(("per_chunk", "sg"), [(True, 1), (False, 1), (True, 0)],
                         ids=["a-launch-a-chunk", "a-launch-a-step", "cbow-a-launch-a-chunk"])
def test_a_run_through_the_kernel_learns_the_topics(topic_corpus, per_chunk, sg, monkeypatch):
    monkeypatch.setattr(fused, "ENABLED", True)
    monkeypatch.setattr(fused, "CBOW_ENABLED", True)
    monkeypatch.setattr(fused, "PER_CHUNK", per_chunk)
    cfg, vocab, ids, starts = _topics(topic_corpus, sg=sg)
    assert KERNEL_DEVICE is not None
    model = Word2VecModel(vocab, cfg, KERNEL_DEVICE, seed=0)
    launches = fused.STATS["launches"]
    loss, _ = _train(model, ids, starts)
    assert fused.STATS["launches"] > launches  # the kernel ran
    assert np.all(np.isfinite(loss)) and loss[-1] < 0.9 * loss[0]
    assert topic_precision(vocab.words, model.word_vectors()) > 0.8


def test_a_kernel_that_cannot_build_leaves_the_run_to_the_batched_steps(topic_corpus, monkeypatch, caplog):
    """A machine whose Triton cannot build the kernel (a compiler missing, say): the first launch fails, the run
    says so once and trains with the batched steps, learning as well."""
    cfg, vocab, ids, starts = _topics(topic_corpus)
    model = Word2VecModel(vocab, cfg, torch.device("cpu"), seed=0)
    calls = []

    def broken(*args, **kwargs):
        calls.append(1)
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(fused, "ENABLED", True)
    monkeypatch.setattr(fused, "available", lambda device: True)
    monkeypatch.setattr(fused, "train_chunk", broken)
    with caplog.at_level("WARNING"):
        loss, _ = _train(model, ids, starts)
    assert len(calls) == 1 and "fused kernel could not run (RuntimeError: no compiler here)" in caplog.text
    assert np.all(np.isfinite(loss)) and loss[-1] < 0.9 * loss[0]
    assert topic_precision(vocab.words, model.word_vectors()) > 0.8
