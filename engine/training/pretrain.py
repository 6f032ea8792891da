"""Pre-training of the contextual models (BERT, GPT, ELMo): a family's ``Recipe`` (its network,
examples, loss and evaluation) run by the gradient loop (engine/training/gradient_loop.py), with a
held-out evaluation every ``eval_every`` steps, the latest checkpoint in the run folder and a kept copy
every ``keep_every`` steps in ``checkpoints/step-N`` (a run's history).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from engine.checkpoints.files import HISTORY
from engine.checkpoints.saves import save_run
from engine.data.corpora import run_corpus_fields
from engine.errors import CorpusError
from engine.training import distributed
from engine.training.context import TrainContext
from engine.training.events import TrainEvent
from engine.training.gradient_loop import GradientJob, optimise


@dataclass
class Recipe:
    kind: str
    model: nn.Module
    n_examples: int
    tokens_per_example: float  # text tokens a training example holds on average (padding not counted)
    epoch_data: Callable[[int], dict[str, torch.Tensor]]  # epoch -> example tensors on the device
    step_loss: Callable[[nn.Module, dict[str, torch.Tensor]], dict[str, torch.Tensor]]
    evaluate: Callable[[nn.Module], dict[str, float]]
    files: dict[str, Callable[[Path], None]]  # tokenizer / vocabulary writers
    config: dict[str, Any]  # extra config.json fields
    weights: Callable[[], dict[str, torch.Tensor]] | None = None  # what model.safetensors keeps (default: all)
    notes: list[str] = dataclasses.field(default_factory=list)  # said when the run starts (not saved)
    betas: tuple[float, float] = (0.9, 0.98)  # AdamW's (BERT's); NNLM keeps torch's (0.9, 0.999) for its rare words
    eps: float = 1e-6


def _order(n: int, need: int, device: torch.device, gen: torch.Generator) -> torch.Tensor:
    """A shuffled index of length ``need`` over ``n`` examples (wrapping when an epoch is short)."""
    parts, have = [], 0
    while have < need:
        parts.append(torch.randperm(n, device=device, generator=gen))
        have += n
    return torch.cat(parts)[:need]


def pretrain(ctx: TrainContext, recipe: Recipe) -> Iterator[TrainEvent]:
    """A contextual family's recipe as a job of the gradient loop."""
    cfg = ctx.spec.model
    world, rank = distributed.world_size(), distributed.rank()
    model = recipe.model.to(ctx.device)
    accumulate = max(1, int(getattr(cfg, "accumulate", 1)))
    per_step = cfg.batch_size * world * accumulate  # examples per optimiser step
    steps_per_epoch = recipe.n_examples // per_step
    if steps_per_epoch == 0:
        raise CorpusError(f"the corpus gives {recipe.n_examples} training examples, fewer than one batch of "
                          f"{per_step}: use a smaller --batch-size or more text")
    metrics: dict[str, float] = {}
    gen = torch.Generator(device=ctx.device)

    def batches(epoch: int, first: int) -> Iterator[dict[str, torch.Tensor]]:
        data = recipe.epoch_data(epoch)  # masked afresh each epoch (dynamic masking)
        n = next(iter(data.values())).shape[0]
        gen.manual_seed(ctx.spec.seed * 100_003 + epoch)
        order = _order(n, steps_per_epoch * per_step, ctx.device, gen)
        for b in range(first * accumulate, steps_per_epoch * accumulate):  # micro-batches
            start = (b * world + rank) * cfg.batch_size  # each process its own slice of the global batch
            sel = order[start : start + cfg.batch_size]
            yield {k: v[sel] for k, v in data.items()}

    def validate() -> Iterator[TrainEvent]:
        nonlocal metrics
        metrics = recipe.evaluate(model)
        yield ctx.eval_metrics(metrics)

    def save(loop_state: dict[str, Any], keep: bool) -> Iterator[TrainEvent]:
        config = {"model": dataclasses.asdict(cfg), **run_corpus_fields(ctx.corpus), "device": str(ctx.device),
                  "seed": ctx.spec.seed, "trained_steps": ctx.step, "metrics": metrics,
                  "tokens_per_step": round(per_step * recipe.tokens_per_example, 1),  # text, padding not counted
                  **recipe.config}
        weights = recipe.weights() if recipe.weights is not None else model.state_dict()
        save_run(ctx.run_dir, recipe.kind, config, weights, files=recipe.files,
                 training_state={**loop_state, "metrics": metrics})
        if keep:
            save_run(ctx.run_dir / HISTORY / f"step-{ctx.step:07d}", recipe.kind, config, weights, files=recipe.files)
        yield ctx.saved()

    def restore(state: dict[str, Any]) -> None:
        metrics.update(state.get("metrics", {}))

    def summary(status: str) -> tuple[str, dict[str, float]]:
        if status == "stopped":
            return f"stopped at step {ctx.step}; resume with --resume {ctx.run_dir}", {}
        return "", metrics

    job = GradientJob(
        model=model, lr=cfg.lr, weight_decay=cfg.weight_decay, warmup=cfg.warmup, clip=cfg.clip,
        total_steps=ctx.spec.max_steps or cfg.epochs * steps_per_epoch, steps_per_epoch=steps_per_epoch,
        unit="tokens", units_per_step=per_step * recipe.tokens_per_example, batches=batches,
        loss=lambda module, batch: recipe.step_loss(module, batch)["loss"], validate=validate, save=save,
        summary=summary, restore=restore, info={"examples": recipe.n_examples, "processes": world, **recipe.config,
                                                        **({"notes": recipe.notes} if recipe.notes else {})},
        eval_every=cfg.eval_every, keep_every=cfg.keep_every, checkpoint_every=ctx.spec.checkpoint_every,
        extend_on_resume=bool(ctx.spec.max_steps), betas=recipe.betas, eps=recipe.eps, accumulate=accumulate,
        validate_at_start=bool(recipe.config.get("init_from")))
    yield from optimise(ctx, job)
