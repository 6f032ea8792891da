"""word2vec's skip-gram negative-sampling step captured once as a CUDA graph and replayed.

A batched step of 8,192 pairs is some thirty small kernels: on an H200 the GPU finishes them long before
Python has launched the next, so the step's rate is the launch rate (3.2M words/s measured there, where
the arithmetic would allow several times that). Bigger batches would spread the launches over more
pairs, but every frequent row then sums too many stale gradients at once and training diverges (16,384
pairs already does on the default corpus). So the batch stays, and its launches go: the step's kernels
are recorded once into a CUDA graph over fixed input buffers and replayed, each step copying its pairs,
its noise words and its learning rate into those buffers first (five launches instead of thirty).

The recorded step is ``Word2VecModel.step_ns`` itself, so both paths compute the same update; a capture
that fails (a torch without graphs, a kernel that cannot be captured) says why once and the steps run
eagerly.
"""

from __future__ import annotations

import logging

import torch

log = logging.getLogger(__name__)

ENABLED = True  # the benches turn it off to measure what the graph buys
STATS = {"captured": 0, "failed": 0}  # captures so far in this process (the benches say which path ran)


class GraphedStep:
    """``model.step_ns`` for skip-gram batches of exactly ``pairs`` pairs in ``groups`` noise groups."""

    def __init__(self, model, pairs: int, groups: int, pool: int) -> None:
        device = model.device
        self.model = model
        self.inp = torch.zeros(pairs, dtype=torch.long, device=device)
        self.out = torch.zeros(pairs, dtype=torch.long, device=device)
        self.negs = torch.zeros(groups, pool, dtype=torch.long, device=device)
        self.lr = torch.zeros((), dtype=torch.float32, device=device)
        self.graph: torch.cuda.CUDAGraph | None = None  # the step with its loss
        self.plain: torch.cuda.CUDAGraph | None = None  # the step alone (engine.models.word2vec.model.LOSS_EVERY)
        self.loss: torch.Tensor | None = None

    def _step(self, want_loss: bool = True) -> torch.Tensor | None:
        return self.model.step_ns(self.inp, None, self.out, self.negs, self.lr, want_loss=want_loss)

    def capture(self) -> bool:
        """Record the step (with a learning rate of 0 the warm-up steps add zeros: nothing changes)."""
        try:
            self.lr.zero_()
            side = torch.cuda.Stream(self.model.device)
            side.wait_stream(torch.cuda.current_stream(self.model.device))
            with torch.cuda.stream(side):
                for _ in range(3):  # the allocator and the kernels' first calls, off the graph
                    self._step()
            torch.cuda.current_stream(self.model.device).wait_stream(side)
            graph, plain = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self.loss = self._step()
            with torch.cuda.graph(plain, pool=graph.pool()):  # the same buffers: one pool for both
                self._step(want_loss=False)
            self.graph, self.plain = graph, plain
            STATS["captured"] += 1
            return True
        except Exception as e:  # noqa: BLE001 - any capture failure: say it once, then train eagerly
            log.warning("word2vec: the step could not be captured as a CUDA graph (%s: %s); running it eagerly",
                        type(e).__name__, e)
            self.graph = self.plain = None
            STATS["failed"] += 1
            return False

    def __call__(self, inp: torch.Tensor, out: torch.Tensor, negs: torch.Tensor, lr: float,
                 want_loss: bool = True) -> torch.Tensor | None:
        assert self.graph is not None and self.plain is not None and self.loss is not None
        self.inp.copy_(inp)
        self.out.copy_(out)
        self.negs.copy_(negs)
        self.lr.fill_(lr)
        if not want_loss:
            self.plain.replay()
            return None
        self.graph.replay()
        return self.loss.clone()  # the next replay overwrites the graph's own output


def graphed_step(model, pairs: int, groups: int, pool: int) -> GraphedStep | None:
    """A captured step where it can help and works: CUDA, skip-gram with negative sampling, no sub-words
    (their padding row is reset inside the step, which a graph would keep too, but it is not measured)."""
    cfg = model.cfg
    if not ENABLED or model.device.type != "cuda" or not cfg.sg or cfg.hs or cfg.subword_buckets:
        return None
    step = GraphedStep(model, pairs, groups, pool)
    return step if step.capture() else None
