"""The batched steps make their examples on their device (torch) by the rule the host's numpy follows:
on the same draws, the same pairs in the same order."""

import numpy as np
import torch

from engine.config.settings import Word2VecConfig
from engine.models.word2vec import examples as on_device
from engine.models.word2vec import steps as on_host


def draws(n=400, vocab=50, sentences=30, window=5, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, n)
    sent = np.sort(rng.integers(0, sentences, n))
    reduced = rng.integers(1, window + 1, n)
    return ids, sent, reduced


def test_skipgram_pairs_are_the_hosts():
    ids, sent, reduced = draws()
    inp, out = on_device.skipgram_pairs(torch.from_numpy(ids), torch.from_numpy(sent), torch.from_numpy(reduced), 5)
    ref_inp, ref_out = on_host.skipgram_pairs(ids, sent, reduced, 5)
    assert len(ref_inp) > 500  # windows across sentence ends are cut, not empty
    assert np.array_equal(inp.cpu().numpy(), ref_inp) and np.array_equal(out.cpu().numpy(), ref_out)


def test_cbow_windows_are_the_hosts():
    ids, sent, reduced = draws(seed=1)
    ctx, mask, out = on_device.cbow_windows(torch.from_numpy(ids), torch.from_numpy(sent), torch.from_numpy(reduced), 5)
    ref_ctx, ref_mask, ref_out = on_host.cbow_windows(ids, sent, reduced, 5)
    assert np.array_equal(ctx.cpu().numpy(), ref_ctx) and np.array_equal(mask.cpu().numpy(), ref_mask)
    assert np.array_equal(out.cpu().numpy(), ref_out)


def test_a_chunk_keeps_words_by_their_probability_and_shuffles():
    ids, sent, _ = draws(n=20_000, vocab=20, sentences=500)
    keep = np.linspace(0.1, 1.0, 20).astype(np.float32)
    cfg = Word2VecConfig(sg=1, window=2)
    gen = torch.Generator().manual_seed(0)
    ex = on_device.make_examples_torch(torch.from_numpy(ids), torch.from_numpy(sent), torch.from_numpy(keep), cfg, gen)
    counts = np.bincount(ex["out"].cpu().numpy(), minlength=20) / np.bincount(ids, minlength=20)
    assert counts[0] < 0.5 * counts[-1]  # a word kept 10% of the time is the centre of far fewer pairs
    assert not np.all(np.diff(ex["out"].cpu().numpy()[:50]) == 0)


def test_hierarchical_softmax_paths_expand_as_on_the_host():
    out = torch.tensor([2, 0, 1])
    lengths = torch.tensor([1, 2, 3])
    points = torch.tensor([[5, 0, 0], [5, 6, 0], [5, 6, 7]])
    codes = torch.tensor([[1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=torch.int8)
    pair, node, code, ends = on_device.expand_hs_torch(out, codes, points, lengths)
    assert pair.tolist() == [0, 0, 0, 1, 2, 2]
    assert node.tolist() == [5, 6, 7, 5, 5, 6]
    assert code.tolist() == [1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    assert ends.tolist() == [3, 4, 6]
