"""Fine-tuning: a pre-trained encoder + a task head, trained on a labelled dataset with a strategy.

``finetune(spec, stop, load=...)`` is a job of the same gradient loop as pre-training
(engine/training/gradient_loop.py): the same events (plus ``ProbePredictions``), metrics.jsonl, resume,
stop and divergence. It keeps in the run folder the checkpoint with the best validation metric
(accuracy, entity F1 or span F1). ``training_state.pt`` holds the latest state, so a stopped run resumes
where it stopped while the folder keeps answering with its best weights.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from engine.checkpoints.files import CONFIG, STATE, WEIGHTS, atomic_write_bytes, atomic_write_with
from engine.checkpoints.reading import read_config
from engine.checkpoints.saves import save_run
from engine.data.tasks import load_task
from engine.errors import CheckpointError, InputError
from engine.finetune.batches import tensorize
from engine.finetune.encoders import HF_KIND, Encoder, encoder_from_handle
from engine.finetune.predict import REPORT, evaluate, probe
from engine.finetune.spec import FinetuneSpec
from engine.models.task_heads import FinetuneModel
from engine.training.context import TrainContext
from engine.training.events import ProbePredictions, TrainEvent
from engine.training.gradient_loop import GradientJob, optimise
from engine.training.loop import check_new_run_folder, run_events

KIND = "finetune"
MAIN_METRIC = {"classify": "accuracy", "pair": "accuracy", "tag": "entity_f1", "span": "f1"}


# ---------------------------------------------------------------- strategies

def apply_strategy(model: FinetuneModel, strategy: str, top: int | None) -> dict[str, int]:
    """Set what learns; returns trainable / frozen parameter counts."""
    encoder = model.encoder
    if strategy == "scratch":
        encoder.reset()
    network = encoder.network
    if strategy == "frozen":
        for p in network.parameters():
            p.requires_grad_(False)
        model.frozen_encoder = True
    elif top is not None:
        lowest = encoder.n_layers - top + 1  # layers >= lowest learn
        for name, p in network.named_parameters():
            p.requires_grad_(encoder.layer_of(name) >= lowest)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {"trainable_parameters": trainable,
            "frozen_parameters": sum(p.numel() for p in model.parameters()) - trainable}


# ---------------------------------------------------------------- the run

def _base_handle(name: str, load: Callable[[str], Any]) -> Any:
    try:
        handle = load(name)
    except Exception as e:
        raise CheckpointError(f"cannot load the model to fine-tune ({name}): {e}") from None
    if handle.kind == KIND:
        raise CheckpointError(f"{name} is already a fine-tuned run; fine-tune its pre-trained model instead")
    return handle


def _base_config(handle: Any, encoder: Encoder) -> dict[str, Any]:
    base: dict[str, Any] = {"kind": encoder.kind, "name": handle.name, "source": handle.path or handle.name}
    if dataclasses.is_dataclass(getattr(encoder.network, "cfg", None)):  # one of our families: its settings
        base["model"] = dataclasses.asdict(encoder.network.cfg)
    else:
        base["max_len"] = encoder.max_len
        base["model_type"] = handle.info.get("model_type")
    return base


def _resumed_spec(spec: FinetuneSpec) -> FinetuneSpec:
    saved = read_config(spec.out)
    if saved.get("kind") != KIND:
        raise CheckpointError(f"{spec.out} holds a {saved.get('kind')} run, not a fine-tuning run")
    return FinetuneSpec.from_dict({**saved["spec"], "resume": True, "out": str(spec.out),
                                   "probes": spec.probes or saved["spec"].get("probes", [])})


def finetune(spec: FinetuneSpec, stop: threading.Event | None = None, *,
             load: Callable[[str], Any]) -> Iterator[TrainEvent]:
    """Fine-tune ``spec``; ``load`` opens the pre-trained model by name (``engine.handles.load.load``:
    handles sit above fine-tuning, which only needs the network inside)."""
    problems = spec.problems()
    if problems:
        raise InputError("fine-tuning settings: " + "; ".join(problems))
    if spec.resume:
        spec = _resumed_spec(spec)
    else:
        check_new_run_folder(spec.out)
    torch.manual_seed(spec.seed)
    ctx = TrainContext(spec, stop, kind=KIND)
    yield from run_events(ctx, _run(ctx, spec, load))


def _run(ctx: TrainContext, spec: FinetuneSpec, load: Callable[[str], Any]) -> Iterator[TrainEvent]:
    task = load_task(spec.task, spec.validation)
    if spec.max_train:
        task.train = task.train[: spec.max_train]
    device, precision, run_dir = ctx.device, ctx.precision, ctx.run_dir
    handle = _base_handle(spec.model, load)
    encoder = encoder_from_handle(handle)
    family = task.family
    model = FinetuneModel(encoder, family, len(task.labels), spec.dropout, spec.lm_weight).to(device)
    counts = apply_strategy(model, spec.strategy, spec.top_layers())
    train_data = tensorize(encoder, task.train, family, task.labels, spec.max_len).to(device)
    val_data = tensorize(encoder, task.validation, family, task.labels, spec.max_len).to(device)
    per_epoch = max(1, len(train_data) // spec.batch_size)
    total = spec.max_steps or spec.epochs * per_epoch
    eval_every = spec.eval_every or max(5, total // 8)
    probe_every = spec.probe_every or eval_every
    lr = spec.learning_rate()
    if not spec.resume:
        encoder.save_network(run_dir / HF_KIND)  # a Hugging Face network's config and tokenizer; ours: nothing
    base = _base_config(handle, encoder)
    metric_name = MAIN_METRIC[family]
    notes = list(task.notes)
    if train_data.truncated or val_data.truncated:
        notes.append(f"{train_data.truncated + val_data.truncated} of {len(train_data) + len(val_data)} examples "
                     f"were longer than {spec.max_len} tokens and were truncated")
    if train_data.lost_answers:
        notes.append(f"{train_data.lost_answers} training answers fell outside the truncated context (ignored)")
    info = {"task": task.name, "family": family, "labels": list(task.labels), "strategy": spec.strategy,
            "base": handle.name, "train_examples": len(train_data), "validation_examples": len(val_data),
            "batch_size": spec.batch_size, "lr": lr, "metric": metric_name,
            "truncated": train_data.truncated + val_data.truncated, "notes": notes, **counts}
    best = {"value": -math.inf, "step": 0}

    def batches(epoch: int, first: int) -> Iterator[dict[str, torch.Tensor]]:
        order = np.random.default_rng([spec.seed, epoch]).permutation(len(train_data))  # the same after a resume
        for b in range(first, per_epoch):
            yield train_data.batch(order[b * spec.batch_size : (b + 1) * spec.batch_size])

    def save_best(metrics: dict[str, float], details: dict[str, Any]) -> None:
        config = {"spec": spec.to_dict(), "base": base, "task": {"name": task.name, "family": family,
                  "labels": list(task.labels), "source": task.source}, "strategy": spec.strategy,
                  "max_len": spec.max_len, "trained_steps": ctx.step, "best_step": ctx.step, "metrics": metrics,
                  "device": str(device), "encoder": encoder.describe(), "notes": notes}
        save_run(run_dir, KIND, config, model.state_dict(), files=encoder.files())
        atomic_write_bytes(run_dir / REPORT, json.dumps({**details, "step": ctx.step}, indent=1).encode())

    def validate() -> Iterator[TrainEvent]:
        metrics, details = evaluate(model, task, val_data, max(64, spec.batch_size), precision)
        yield ctx.eval_metrics(metrics)
        if metrics[metric_name] > best["value"] or not (run_dir / WEIGHTS).exists():
            best.update(value=metrics[metric_name], step=ctx.step)
            save_best(metrics, details)

    def save_state(loop_state: dict[str, Any], keep: bool) -> Iterator[TrainEvent]:
        state = {**loop_state, "best": best["value"], "best_step": best["step"]}
        atomic_write_with(run_dir / STATE, lambda p: torch.save(state, p))
        return iter(())

    def restore(state: dict[str, Any]) -> None:
        best.update(value=float(state["best"]), step=int(state["best_step"]))

    def probes() -> Iterator[TrainEvent]:
        if spec.probes:
            labels, probs = probe(model, encoder, task, spec.probes, spec.max_len, precision, device)
            model.train()
            yield ProbePredictions(ctx.step, list(spec.probes), labels, probs)

    def summary(status: str) -> tuple[str, dict[str, float]]:
        final = json.loads((run_dir / CONFIG).read_text(encoding="utf-8")).get("metrics", {})
        message = (f"best validation {metric_name} {best['value']:.3f} at step {best['step']}"
                   if status == "completed" else
                   f"stopped at step {ctx.step}; the best checkpoint (step {best['step']}) is kept; resume with --resume")
        return message, {f"best_{k}": v for k, v in final.items()}

    job = GradientJob(
        model=model, lr=lr, weight_decay=spec.weight_decay, warmup=int(spec.warmup * total), clip=spec.clip,
        total_steps=total, steps_per_epoch=per_epoch, unit="examples", units_per_step=spec.batch_size,
        batches=batches, loss=lambda module, batch: module(batch)["loss"], validate=validate, save=save_state,
        summary=summary, info=info, restore=restore, eval_every=eval_every, validate_when_stopped=True,
        after_step=lambda step: probes() if step % probe_every == 0 else iter(()), at_start=probes, at_end=probes,
        kept="the best checkpoint")
    yield from optimise(ctx, job)
