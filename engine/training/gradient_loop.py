"""THE gradient loop: pre-training of BERT, GPT and ELMo and every fine-tuning run go through ``optimise``.

Written once here: AdamW (no decay on biases and norms), linear warmup then linear decay, gradient
clipping, mixed precision on the GPU (fp16 with a scaler, bf16 without), DDP under torchrun, resume from
``training_state.pt`` (weights, optimiser, scaler, step, RNG), validation every ``eval_every`` steps,
checkpoints, divergence (a non-finite loss ends the run, the last good checkpoint stays), cooperative
stop, throughput and ETA. Losses stay on the device and are read only when an event is logged.

What differs between pre-training and fine-tuning is a ``GradientJob``: its batches, its loss, what a
validation computes and what a save writes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from engine.checkpoints.reading import read_training_state
from engine.device import release_memory
from engine.errors import CheckpointError
from engine.training import distributed
from engine.training.context import LoggedLoss, TrainContext
from engine.training.events import TrainEvent
from engine.training.optim import adamw, apply_step, backward, warmup_then_linear

Batch = dict[str, torch.Tensor]
NO_EVENTS: Callable[[], Iterator[TrainEvent]] = lambda: iter(())  # noqa: E731


@dataclass
class GradientJob:
    model: nn.Module  # what learns, on ctx.device (saved and restored unwrapped)
    lr: float
    weight_decay: float
    warmup: int  # steps
    clip: float
    total_steps: int
    steps_per_epoch: int
    unit: str  # what throughput counts: "tokens", "examples"
    units_per_step: float
    batches: Callable[[int, int], Iterator[Batch]]  # (epoch, first step) -> that epoch's micro-batches from there
    loss: Callable[[nn.Module, Batch], torch.Tensor]  # (the model, wrapped under DDP; a batch) -> scalar
    validate: Callable[[], Iterator[TrainEvent]]  # run in eval mode without gradients; yields EvalMetrics
    save: Callable[[dict[str, Any], bool], Iterator[TrainEvent]]  # (loop state, keep a history copy) -> events
    summary: Callable[[str], tuple[str, dict[str, float]]]  # status -> RunFinished's message and metrics
    info: dict[str, Any] = field(default_factory=dict)  # RunStarted's
    restore: Callable[[dict[str, Any]], None] = lambda state: None  # the job's own part of a saved state
    eval_every: int = 0
    keep_every: int = 0  # steps between kept copies (the run's history)
    checkpoint_every: int = 0  # steps between plain checkpoints
    validate_when_stopped: bool = False  # fine-tuning keeps its best weights: a stop validates first
    validate_at_start: bool = False  # a run that goes on from earlier weights: their held-out score at step 0
    extend_on_resume: bool = False  # a resumed run may be given more steps than it first had
    after_step: Callable[[int], Iterator[TrainEvent]] = lambda step: iter(())  # e.g. probe predictions
    at_start: Callable[[], Iterator[TrainEvent]] = NO_EVENTS
    at_end: Callable[[], Iterator[TrainEvent]] = NO_EVENTS
    kept: str = "the last good checkpoint"  # what stays when the loss diverges
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    accumulate: int = 1  # micro-batches whose gradients add up before each optimiser step


TRIM_EVERY = 10  # CPU steps between giving freed memory back (malloc_trim: ~40 ms, a step takes seconds)


def optimise(ctx: TrainContext, job: GradientJob) -> Iterator[TrainEvent]:
    """Train ``job.model`` and yield the run's events, the last a ``RunFinished``."""
    world, main = distributed.world_size(), distributed.is_main()
    model = job.model
    opt = adamw(model, job.lr, job.weight_decay, betas=job.betas, eps=job.eps)
    scaler = torch.amp.GradScaler(ctx.device.type) if ctx.precision.needs_scaler else None
    total = job.total_steps
    if ctx.resume:
        state = read_training_state(ctx.run_dir)
        try:
            model.load_state_dict({k: v.to(ctx.device) for k, v in state["model"].items()})
            opt.load_state_dict(state["optimizer"])
        except (KeyError, ValueError, RuntimeError) as e:  # a loop state of another layout (NNLM's own loop, before)
            raise CheckpointError(f"{ctx.run_dir}: its loop state was saved by another version of word2bert's "
                                  f"training loop and cannot be resumed ({str(e).splitlines()[0][:120]}); its "
                                  "weights still load, and a new run can start from here") from None
        ctx.step = int(state["step"])
        saved_total = int(state.get("total_steps", total))
        total = max(total, saved_total) if job.extend_on_resume else saved_total
        if scaler is not None and state.get("scaler"):
            scaler.load_state_dict(state["scaler"])
        if "rng" in state:
            torch.set_rng_state(state["rng"])
        job.restore(state)
    if ctx.step >= total:
        yield ctx.finished("completed", "the run had already finished")
        return
    lr_factor = warmup_then_linear(job.warmup, total)
    wrapped: nn.Module = model
    if world > 1:
        wrapped = nn.parallel.DistributedDataParallel(
            model, device_ids=[ctx.device.index] if ctx.device.type == "cuda" else None)
    if getattr(ctx.spec, "compile", False):  # --compile: the steps' forward and backward as compiled kernels;
        wrapped = torch.compile(wrapped)  # type: ignore[assignment]  # saves and evaluation: the plain model
    info = {"parameters": sum(p.numel() for p in model.parameters()), "steps": total, **job.info}
    first_step = ctx.step
    yield ctx.started(total * job.units_per_step, job.unit, info)
    if ctx.step == 0:
        yield from job.at_start()

    def loop_state() -> dict[str, Any]:
        state = {"step": ctx.step, "total_steps": total,
                 "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
                 "optimizer": opt.state_dict(), "scaler": scaler.state_dict() if scaler else {},
                 "rng": torch.get_rng_state()}
        if ctx.budget is not None and getattr(ctx.spec, "budget_schedule", False):  # the rate follows the budget: a resume carries it on
            state["budget"] = {"seconds": float(ctx.budget.seconds), "clock": getattr(ctx.spec, "budget_clock", "wall"),
                               "used_s": float(ctx.budget.used())}
        return state

    def validate() -> Iterator[TrainEvent]:
        model.eval()
        with torch.no_grad(), ctx.precision.autocast():
            events = list(job.validate())
        model.train()
        return iter(events)

    def stopping() -> Iterator[TrainEvent]:
        """Stop: (validate,) save the last finished step, say so."""
        if main:
            if job.validate_when_stopped:
                yield from validate()
            yield from job.save(loop_state(), False)
            yield from job.at_end()
        message, metrics = job.summary("stopped")
        yield ctx.finished("stopped", message, metrics)

    if ctx.step == 0 and job.validate_at_start and job.eval_every and main:  # where its curve begins: the
        yield from validate()  # weights it went on from, on its own held-out text (did going on help?)
    params = [p for p in model.parameters() if p.requires_grad]
    logged = LoggedLoss()
    epoch = ctx.step // job.steps_per_epoch
    model.train()
    while ctx.step < total:
        micro_batches = job.batches(epoch, ctx.step % job.steps_per_epoch)
        while True:
            opt.zero_grad(set_to_none=True)
            step_loss, taken, abandoned = None, 0, False
            for batch in itertools.islice(micro_batches, job.accumulate):
                with ctx.precision.autocast():
                    loss = job.loss(wrapped, batch) / job.accumulate
                if ctx.stop.is_set() and world == 1:  # Ctrl-C during the forward pass: skip the backward
                    abandoned = True  # (most of a step's time) and save the last finished step at once
                    break
                backward(loss, scaler)
                step_loss = loss.detach().float() if step_loss is None else step_loss + loss.detach().float()
                taken += 1
            if abandoned:
                opt.zero_grad(set_to_none=True)
                yield from stopping()
                return
            if step_loss is None or taken < job.accumulate:
                break  # the epoch's batches are used up
            lr = job.lr * lr_factor(ctx.step, ctx.budget_spent())
            apply_step(opt, lr, params, job.clip, scaler)
            ctx.step += 1
            if ctx.device.type == "cpu" and ctx.step % TRIM_EVERY == 0:
                release_memory()  # glibc keeps the freed blocks of varied-size steps: 1.5 GB instead of 0.57
            logged.add(step_loss)
            if ctx.should_log() or ctx.step == total:
                mean = logged.take()  # the only read from the device between validations
                if not math.isfinite(mean):
                    yield ctx.diverged(kept=job.kept, hint="try a smaller --lr")
                    return
                yield ctx.step_metrics(epoch, ctx.step * job.units_per_step, mean, lr,
                                       first_step * job.units_per_step)
            if ctx.step >= total:
                break
            validated = False
            if job.eval_every and ctx.step % job.eval_every == 0 and main:
                yield from validate()
                validated = True
            keep = bool(job.keep_every) and ctx.step % job.keep_every == 0
            periodic = bool(job.checkpoint_every) and ctx.step % job.checkpoint_every == 0
            if (validated or keep or periodic) and main:
                yield from job.save(loop_state(), keep)
            if main:
                yield from job.after_step(ctx.step)
            if ctx.stop.is_set():
                yield from stopping()
                return
        epoch += 1
    if main:
        yield from validate()
        yield from job.save(loop_state(), bool(job.keep_every))
        yield from job.at_end()
    distributed.barrier()
    message, metrics = job.summary("completed")
    yield ctx.finished("completed", message, metrics)
