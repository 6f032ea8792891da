"""Pre-training of the contextual models (BERT, GPT, ELMo): one optimisation loop, three recipes.

The loop: AdamW (no decay on biases and norms), linear warmup then linear decay, gradient clipping,
mixed precision on the GPU, DDP under torchrun, a held-out evaluation every ``eval_every`` steps,
the latest checkpoint in the run folder and a kept copy every ``keep_every`` steps in
``checkpoints/step-N`` (a run's history), resume from ``training_state.pt``, cooperative stop.
Losses stay on the device and are read only when an event is logged.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from engine.checkpoint import read_training_state, save_run
from engine.errors import CorpusError
from engine.training import distributed
from engine.training.events import TrainEvent
from engine.training.loop import TrainContext
from engine.training.optim import adamw, optimizer_step, warmup_then_linear

HISTORY = "checkpoints"


@dataclass
class Recipe:
    kind: str
    model: nn.Module
    n_examples: int
    tokens_per_example: int
    epoch_data: Callable[[int], dict[str, torch.Tensor]]  # epoch -> example tensors on the device
    step_loss: Callable[[nn.Module, dict[str, torch.Tensor]], dict[str, torch.Tensor]]
    evaluate: Callable[[nn.Module], dict[str, float]]
    files: dict[str, Callable[[Path], None]]  # tokenizer / vocabulary writers
    config: dict[str, Any]  # extra config.json fields


def _order(n: int, need: int, device: torch.device, gen: torch.Generator) -> torch.Tensor:
    """A shuffled index of length ``need`` over ``n`` examples (wrapping when an epoch is short)."""
    parts, have = [], 0
    while have < need:
        parts.append(torch.randperm(n, device=device, generator=gen))
        have += n
    return torch.cat(parts)[:need]


def pretrain(ctx: TrainContext, recipe: Recipe) -> Iterator[TrainEvent]:
    cfg = ctx.spec.model
    world, rank = distributed.world_size(), distributed.rank()
    model = recipe.model.to(ctx.device)
    opt = adamw(model, cfg.lr, cfg.weight_decay, betas=(0.9, 0.98), eps=1e-6)
    per_step = cfg.batch_size * world
    steps_per_epoch = recipe.n_examples // per_step
    if steps_per_epoch == 0:
        raise CorpusError(f"the corpus gives {recipe.n_examples} training examples, fewer than one batch of "
                          f"{per_step}: use a smaller --batch-size or more text")
    total = ctx.spec.max_steps or cfg.epochs * steps_per_epoch
    scaler = torch.amp.GradScaler(ctx.device.type) if ctx.precision.needs_scaler else None
    state: dict[str, Any] = {}
    if ctx.spec.resume:
        state = read_training_state(ctx.run_dir)
        model.load_state_dict({k: v.to(ctx.device) for k, v in state["model"].items()})
        opt.load_state_dict(state["optimizer"])
        ctx.step = int(state["step"])
        total = max(total, int(state["total_steps"])) if ctx.spec.max_steps else int(state["total_steps"])
        if scaler is not None and state.get("scaler"):
            scaler.load_state_dict(state["scaler"])
        if "rng" in state:
            torch.set_rng_state(state["rng"])
    lr_factor = warmup_then_linear(cfg.warmup, total)
    first_step = ctx.step
    if ctx.step >= total:
        yield ctx.finished("completed", "the run had already finished")
        return
    wrapped: nn.Module = model
    if world > 1:
        wrapped = nn.parallel.DistributedDataParallel(
            model, device_ids=[ctx.device.index] if ctx.device.type == "cuda" else None)
    tokens_per_step = per_step * recipe.tokens_per_example
    info = {"parameters": sum(p.numel() for p in model.parameters()), "examples": recipe.n_examples,
            "steps": total, "processes": world, **recipe.config}
    yield ctx.started(total * tokens_per_step, "tokens", info)
    metrics: dict[str, float] = dict(state.get("metrics", {}))
    main = rank == 0

    def save(keep: bool) -> Any:
        if not main:
            return None
        config = {"model": dataclasses.asdict(cfg), "corpus": ctx.corpus.name, "device": str(ctx.device),
                  "seed": ctx.spec.seed, "trained_steps": ctx.step, "metrics": metrics, **recipe.config}
        weights = model.state_dict()
        training_state = {"step": ctx.step, "total_steps": total, "model": {k: v.cpu() for k, v in weights.items()},
                          "optimizer": opt.state_dict(), "scaler": scaler.state_dict() if scaler else {},
                          "rng": torch.get_rng_state(), "metrics": metrics}
        save_run(ctx.run_dir, recipe.kind, config, weights, files=recipe.files, training_state=training_state)
        if keep:
            save_run(ctx.run_dir / HISTORY / f"step-{ctx.step:07d}", recipe.kind, config, weights, files=recipe.files)
        return ctx.saved()

    def evaluate() -> Any:
        nonlocal metrics
        model.eval()
        with torch.no_grad(), ctx.precision.autocast():
            metrics = recipe.evaluate(model)
        return ctx.eval_metrics(metrics)

    loss_sum = torch.zeros((), device=ctx.device)
    since = 0
    gen = torch.Generator(device=ctx.device)
    epoch = ctx.step // steps_per_epoch
    while ctx.step < total:
        data = recipe.epoch_data(epoch)
        n = next(iter(data.values())).shape[0]
        gen.manual_seed(ctx.spec.seed * 100_003 + epoch)
        order = _order(n, steps_per_epoch * per_step, ctx.device, gen)
        model.train()
        for b in range(ctx.step % steps_per_epoch, steps_per_epoch):
            start = (b * world + rank) * cfg.batch_size
            sel = order[start : start + cfg.batch_size]
            batch = {k: v[sel] for k, v in data.items()}
            with ctx.precision.autocast():
                loss = recipe.step_loss(wrapped, batch)["loss"]
            lr = cfg.lr * lr_factor(ctx.step)
            optimizer_step(loss, opt, lr, model.parameters(), cfg.clip, scaler)
            ctx.step += 1
            loss_sum += loss.detach().float()
            since += 1
            if ctx.should_log() or ctx.step == total:
                mean = float(loss_sum) / since
                loss_sum.zero_()
                since = 0
                if not math.isfinite(mean):
                    yield ctx.finished("diverged", "the loss is no longer finite; the last good checkpoint is kept "
                                       "(try a smaller --lr)")
                    return
                yield ctx.step_metrics(epoch, ctx.step * tokens_per_step, mean, lr, first_step * tokens_per_step)
            evaluated = False
            if cfg.eval_every and ctx.step % cfg.eval_every == 0 and ctx.step < total and main:
                yield evaluate()
                model.train()
                evaluated = True
            keep = bool(cfg.keep_every) and ctx.step % cfg.keep_every == 0
            periodic = bool(ctx.spec.checkpoint_every) and ctx.step % ctx.spec.checkpoint_every == 0
            if (evaluated or keep or periodic) and ctx.step < total and main:
                yield save(keep)
            if ctx.stop.is_set():
                if main:
                    yield save(False)
                yield ctx.finished("stopped", f"stopped at step {ctx.step}; resume with --resume {ctx.run_dir}")
                return
            if ctx.step >= total:
                break
        epoch += 1
    if main:
        yield evaluate()
        yield save(bool(cfg.keep_every))
    distributed.barrier()
    yield ctx.finished("completed", metrics=metrics)
