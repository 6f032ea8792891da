"""word2vec's training examples made where the batched steps run (the GPU), with torch: the same rule as
``engine.models.word2vec.steps.make_examples`` (numpy, on the host) — subsample, draw a reduced window
b ~ U[1, window] per position, pair each position with the words within its window and its sentence,
shuffle — but without the host in the way. Made with numpy, one epoch's examples of the default corpus
took the host 0.7 s on an H200 machine (3.1M words/s): the GPU steps could not go faster than that.

Every function takes its random draws as arguments, so that the rule itself (``skipgram_pairs``,
``cbow_windows``) is checked against the numpy one on the same draws.
"""

from __future__ import annotations

import torch

from engine.config.settings import Word2VecConfig


def skipgram_pairs(ids: torch.Tensor, sent: torch.Tensor, reduced: torch.Tensor,
                   window: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(context word, centre word) of every pair: centre i and context i ± off for off <= reduced[i],
    in the same sentence. Ordered as the numpy rule orders them (offset by offset, left then right).

    Every candidate pair is laid out at once, a row per (offset, side) and a column per centre, and kept
    by one mask: one boolean selection, so one wait for the device a chunk, where a selection per offset
    and side made the host wait twenty times while the GPU had the last chunk's steps still queued."""
    n = ids.shape[0]
    offsets = torch.tensor([s * off for off in range(1, window + 1) for s in (-1, 1)], device=ids.device)  # (2w,)
    centre = torch.arange(n, device=ids.device)
    other = centre[None, :] + offsets[:, None]  # (2w, n) the context position of each candidate
    inside = (other >= 0) & (other < n)
    other = other.clamp(0, max(n - 1, 0))
    ok = inside & (sent[other] == sent[None, :]) & (reduced[None, :] >= offsets.abs()[:, None])
    return ids[other][ok], ids[None, :].expand(offsets.shape[0], n)[ok]


def cbow_windows(ids: torch.Tensor, sent: torch.Tensor, reduced: torch.Tensor,
                 window: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(context words (P, 2 window), their mask, centre words (P,)) for every position with a context."""
    n = ids.shape[0]
    pos = torch.arange(n, device=ids.device)
    offsets = [*range(-window, 0), *range(1, window + 1)]
    ctx = torch.zeros(n, 2 * window, dtype=torch.long, device=ids.device)
    mask = torch.zeros(n, 2 * window, dtype=torch.bool, device=ids.device)
    for j, off in enumerate(offsets):
        other = pos + off
        inside = (other >= 0) & (other < n)
        other_c = other.clamp(0, max(n - 1, 0))
        ok = inside & (sent[other_c] == sent) & (reduced >= abs(off))
        ctx[:, j] = torch.where(ok, ids[other_c], 0)
        mask[:, j] = ok
    has = mask.any(1)
    return ctx[has], mask[has], ids[has]


def make_examples_torch(ids: torch.Tensor, sent: torch.Tensor, keep_prob: torch.Tensor, cfg: Word2VecConfig,
                        gen: torch.Generator) -> dict[str, torch.Tensor]:
    """One chunk's shuffled examples, on ``ids``' device: skip-gram ``inp``/``out`` (P,), CBOW ``ctx``/
    ``mask`` (P, 2 window) and ``out`` (P,). ``keep_prob``: per vocabulary word, on the same device."""
    device = ids.device
    keep = torch.rand(ids.shape[0], device=device, generator=gen) < keep_prob[ids]
    ids, sent = ids[keep], sent[keep]
    reduced = torch.randint(1, cfg.window + 1, (ids.shape[0],), device=device, generator=gen)
    if cfg.sg:
        inp, out = skipgram_pairs(ids, sent, reduced, cfg.window)
        order = torch.randperm(inp.shape[0], device=device, generator=gen)
        return {"inp": inp[order], "out": out[order]}
    ctx, mask, out = cbow_windows(ids, sent, reduced, cfg.window)
    order = torch.randperm(out.shape[0], device=device, generator=gen)
    return {"ctx": ctx[order], "mask": mask[order], "out": out[order]}


def expand_hs_torch(out: torch.Tensor, codes: torch.Tensor, points: torch.Tensor,
                    lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``engine.models.word2vec.steps.expand_hs`` on the device: (pair, node, code) of every step of
    the Huffman paths of the ``out`` words, and the running end of each pair's triples."""
    lens = lengths[out]
    pair = torch.repeat_interleave(torch.arange(out.shape[0], device=out.device), lens)
    ends = torch.cumsum(lens, 0)
    depth = torch.arange(pair.shape[0], device=out.device) - torch.repeat_interleave(ends - lens, lens)
    words = out[pair]
    return pair, points[words, depth].long(), codes[words, depth].float(), ends
