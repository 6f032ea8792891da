"""word2vec's skip-gram negative-sampling steps captured once as a CUDA graph and replayed.

A batched step of 8,192 pairs is some thirty small kernels: on an H200 the GPU finishes them long before
Python has launched the next, so the step's rate is the launch rate (3.2M words/s measured there, where
the arithmetic would allow several times that). Bigger batches would spread the launches over more
pairs, but every frequent row then sums too many stale gradients at once and training diverges (16,384
pairs already does on the default corpus). So the batch stays, and its launches go: the step's kernels
are recorded once into a CUDA graph over fixed input buffers and replayed, each replay copying its pairs,
its noise words and its learning rates into those buffers first.

One replay can run ``steps`` consecutive steps (``STEPS_PER_REPLAY``): the same updates one after the
other, each on its own 8,192 pairs at its own learning rate, so nothing about training changes, but the
host launches seven things per ``steps`` steps instead of seven per step. (A single step replayed reached
14M words/s on an H200, the host still the bound.) The learning rate falls linearly inside a chunk, so a
replay is given the first step's rate and the change per step, and works out the others itself.

The recorded step is ``Word2VecModel.step_ns`` itself, so both paths compute the same update; a capture
that fails (a torch without graphs, a kernel that cannot be captured) says why once and the steps run
eagerly.
"""

from __future__ import annotations

import logging

import torch

log = logging.getLogger(__name__)

ENABLED = True  # the benches turn it off to measure what the graph buys
STEPS_PER_REPLAY = 16  # consecutive steps one replay runs (the benches vary it: bench/gpu_figures.py word2vec)
STATS = {"captured": 0, "failed": 0}  # captures so far in this process (the benches say which path ran)


def run_steps(model, inp: torch.Tensor, out: torch.Tensor, negs: torch.Tensor, lr0: torch.Tensor,
              dlr: torch.Tensor, steps: int, floor: float) -> torch.Tensor:
    """``steps`` consecutive ``model.step_ns`` steps over equal slices of ``inp``/``out`` (pairs) and
    ``negs`` (noise groups), step i at learning rate lr0 + i·dlr, never below ``floor`` (the run's
    ``min_alpha``). The losses, (steps,). What a replay runs; on any device."""
    pairs, groups = inp.shape[0] // steps, negs.shape[0] // steps
    losses = []
    for i in range(steps):
        lr = torch.clamp_min(lr0 + i * dlr, floor)
        losses.append(model.step_ns(inp[i * pairs:(i + 1) * pairs], None, out[i * pairs:(i + 1) * pairs],
                                    negs[i * groups:(i + 1) * groups], lr))
    return torch.stack(losses)


class GraphedStep:
    """``steps`` consecutive ``model.step_ns`` steps of exactly ``pairs`` skip-gram pairs in ``groups``
    noise groups each, as one CUDA graph."""

    def __init__(self, model, pairs: int, groups: int, pool: int, steps: int = 1) -> None:
        device = model.device
        self.model, self.steps = model, steps
        self.inp = torch.zeros(steps * pairs, dtype=torch.long, device=device)
        self.out = torch.zeros(steps * pairs, dtype=torch.long, device=device)
        self.negs = torch.zeros(steps * groups, pool, dtype=torch.long, device=device)
        self.lr0 = torch.zeros((), dtype=torch.float32, device=device)
        self.dlr = torch.zeros((), dtype=torch.float32, device=device)
        self.graph: torch.cuda.CUDAGraph | None = None
        self.losses: torch.Tensor | None = None

    def _run(self, floor: float) -> torch.Tensor:
        return run_steps(self.model, self.inp, self.out, self.negs, self.lr0, self.dlr, self.steps, floor)

    def capture(self) -> bool:
        """Record the steps (with learning rates of 0 the warm-up steps add zeros: nothing changes)."""
        try:
            self.lr0.zero_()
            self.dlr.zero_()
            side = torch.cuda.Stream(self.model.device)
            side.wait_stream(torch.cuda.current_stream(self.model.device))
            with torch.cuda.stream(side):
                for _ in range(3):  # the allocator and the kernels' first calls, off the graph
                    self._run(0.0)
            torch.cuda.current_stream(self.model.device).wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self.losses = self._run(self.model.cfg.min_alpha)
            self.graph = graph
            STATS["captured"] += 1
            return True
        except Exception as e:  # noqa: BLE001 - any capture failure: say it once, then train eagerly
            log.warning("word2vec: the step could not be captured as a CUDA graph (%s: %s); running it eagerly",
                        type(e).__name__, e)
            self.graph = None
            STATS["failed"] += 1
            return False

    def __call__(self, inp: torch.Tensor, out: torch.Tensor, negs: torch.Tensor, lr: float,
                 dlr: float = 0.0) -> torch.Tensor:
        """Run the recorded steps on these pairs and noise words: step i at rate lr + i·dlr. Their losses (steps,)."""
        assert self.graph is not None and self.losses is not None
        self.inp.copy_(inp)
        self.out.copy_(out)
        self.negs.copy_(negs)
        self.lr0.fill_(lr)
        self.dlr.fill_(dlr)
        self.graph.replay()
        return self.losses.clone()  # the next replay overwrites the graph's own output


def graphed_step(model, pairs: int, groups: int, pool: int, steps: int = 1) -> GraphedStep | None:
    """Captured steps where they can help and work: CUDA, skip-gram with negative sampling, no sub-words
    (their padding row is reset inside the step, which a graph would keep too, but it is not measured)."""
    cfg = model.cfg
    if not ENABLED or model.device.type != "cuda" or not cfg.sg or cfg.hs or cfg.subword_buckets:
        return None
    step = GraphedStep(model, pairs, groups, pool, steps)
    return step if step.capture() else None
