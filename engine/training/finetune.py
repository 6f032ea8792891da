"""Fine-tuning: a pre-trained encoder + a task head, trained on a labelled dataset with a strategy.

``finetune(spec, stop)`` is a generator of the same events as pre-training (plus ``ProbePredictions``),
writes metrics.jsonl, and keeps in the run folder the checkpoint with the best validation metric
(accuracy, entity F1 or span F1). ``training_state.pt`` holds the latest state, so a stopped run resumes
where it stopped while the folder keeps answering with its best weights.
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.checkpoint import (
    STATE,
    atomic_write_bytes,
    atomic_write_with,
    read_config,
    read_training_state,
    save_run,
)
from engine.device import device_name, pick_device, precision_for
from engine.errors import CheckpointError, InputError
from engine.finetune_data import TaskData, load_task
from engine.finetune_spec import FinetuneSpec
from engine.models.task_heads import FinetuneModel
from engine.training import task_metrics
from engine.training.encoders import Encoder, HFEncoder, encoder_from_handle
from engine.training.events import (
    EvalMetrics,
    ProbePredictions,
    RunFinished,
    RunStarted,
    StepMetrics,
    TrainEvent,
    event_to_dict,
)
from engine.training.optim import adamw, optimizer_step, warmup_then_linear
from engine.training.task_batches import (
    TaskArrays,
    examples_for_probe,
    first_pieces,
    span_answer,
    tensorize,
)

KIND = "finetune"
REPORT = "evaluation.json"
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


# ---------------------------------------------------------------- predictions

def predict(model: FinetuneModel, data: TaskArrays, batch_size: int, precision: Any) -> dict[str, np.ndarray]:
    """Run the model over every example (in order); outputs on the host: loss sum, and probabilities
    (classify: (N, C); tag: (N, T, C)) or span logits."""
    model.eval()
    outs: dict[str, list[torch.Tensor]] = {}
    loss_sum = torch.zeros((), device=next(iter(data.tensors.values())).device)
    longest = int(data.lengths.max())
    with torch.no_grad(), precision.autocast():
        for start in range(0, len(data), batch_size):
            index = np.arange(start, min(start + batch_size, len(data)))
            out = model(data.batch(index))
            loss_sum += out["loss"].float() * len(index)
            for key in ("logits", "start", "end"):
                if key in out:
                    value = out[key].float()
                    if value.dim() >= 2 and key == "logits" and model.family == "tag" or key in ("start", "end"):
                        pad = longest - value.shape[1]
                        value = torch.nn.functional.pad(value, (0, 0, 0, pad) if value.dim() == 3 else (0, pad),
                                                        value=-1e4)
                    outs.setdefault(key, []).append(value)
    result = {k: torch.cat(v).cpu().numpy() for k, v in outs.items()}
    result["loss"] = np.array(float(loss_sum) / max(len(data), 1))
    if "logits" in result:
        logits = result.pop("logits")
        e = np.exp(logits - logits.max(-1, keepdims=True))
        result["probs"] = e / e.sum(-1, keepdims=True)
    return result


def word_tags(probs: np.ndarray, data: TaskArrays, labels: tuple[str, ...], i: int,
              n_words: int) -> tuple[list[str], list[float]]:
    """Tags of example i's words from its first sub-words (words cut off by truncation: "O")."""
    enc = data.encoded[i]
    tags, confidence = ["O"] * n_words, [1.0] * n_words
    for pos in first_pieces(enc.words):
        k = int(probs[i, pos].argmax())
        tags[enc.words[pos]], confidence[enc.words[pos]] = labels[k], float(probs[i, pos, k])
    return tags, confidence


def evaluate(model: FinetuneModel, task: TaskData, data: TaskArrays, batch_size: int,
             precision: Any) -> tuple[dict[str, float], dict[str, Any]]:
    """Validation metrics (flat, for the curves) and details (confusion matrix, per-tag F1) for the report."""
    out = predict(model, data, batch_size, precision)
    metrics: dict[str, float] = {"loss": float(out["loss"])}
    details: dict[str, Any] = {"family": task.family, "labels": list(task.labels)}
    if task.family in ("classify", "pair"):
        gold = data.arrays["labels"]
        matrix = task_metrics.confusion_matrix(gold, out["probs"].argmax(-1), len(task.labels))
        metrics.update(task_metrics.classification_scores(matrix))
        details["confusion_matrix"] = matrix.tolist()
    elif task.family == "tag":
        gold_tags = [list(e.tags) for e in task.validation]
        predicted = [word_tags(out["probs"], data, task.labels, i, len(g))[0] for i, g in enumerate(gold_tags)]
        scores = task_metrics.entity_scores(gold_tags, predicted)
        details.update(per_type_f1=scores.pop("per_type_f1"), per_type_support=scores.pop("per_type_support"))
        metrics.update({k: float(v) for k, v in scores.items()})  # type: ignore[arg-type]
    else:
        answers = []
        for i, e in enumerate(task.validation):
            allowed = data.arrays["allowed"][i]
            s, t, _ = task_metrics.best_span(out["start"][i], out["end"][i], allowed)
            answers.append(span_answer(e, data.encoded[i], s, t) if allowed.any() else "")
        metrics.update(task_metrics.span_scores([e.answer_text for e in task.validation], answers))
        details["examples"] = [{"question": e.question, "gold": e.answer_text, "predicted": a}
                               for e, a in list(zip(task.validation, answers, strict=True))[:20]]
    details["metrics"] = metrics
    return metrics, details


def probe(model: FinetuneModel, encoder: Encoder, task: TaskData, texts: list[str], max_len: int,
          precision: Any, device: torch.device) -> tuple[list[str], list[float]]:
    examples = examples_for_probe(texts, task.family)
    data = tensorize(encoder, examples, task.family, task.labels, max_len).to(device)
    out = predict(model, data, 64, precision)
    labels, probs = [], []
    for i, e in enumerate(examples):
        if task.family == "tag":
            tags, conf = word_tags(out["probs"], data, task.labels, i, len(e.tokens))
            labels.append(" ".join(w if t == "O" else f"{w}/{t}" for w, t in zip(e.tokens, tags, strict=True)))
            probs.append(float(np.mean(conf)) if conf else 1.0)
        else:
            k = int(out["probs"][i].argmax())
            labels.append(task.labels[k])
            probs.append(float(out["probs"][i, k]))
    return labels, probs


# ---------------------------------------------------------------- the run

def _base_handle(name: str) -> Any:
    from engine import api

    try:
        handle = api.load(name)
    except Exception as e:
        raise CheckpointError(f"cannot load the model to fine-tune ({name}): {e}") from None
    if handle.kind == KIND:
        raise CheckpointError(f"{name} is already a fine-tuned run; fine-tune its pre-trained model instead")
    return handle


def _base_config(handle: Any, encoder: Encoder) -> dict[str, Any]:
    base: dict[str, Any] = {"kind": encoder.kind, "name": handle.name, "source": handle.path or handle.name}
    if encoder.kind in ("bert", "gpt", "elmo"):
        net = encoder.network
        base["model"] = dataclasses.asdict(net.cfg)
    else:
        base["max_len"] = encoder.max_len
        base["model_type"] = handle.info.get("model_type")
    return base


def finetune(spec: FinetuneSpec, stop: threading.Event | None = None) -> Iterator[TrainEvent]:
    problems = spec.problems()
    if problems:
        raise InputError("fine-tuning settings: " + "; ".join(problems))
    stop = stop or threading.Event()
    run_dir = Path(spec.out)
    if spec.resume:
        saved = read_config(run_dir)
        if saved.get("kind") != KIND:
            raise CheckpointError(f"{run_dir} holds a {saved.get('kind')} run, not a fine-tuning run")
        spec = FinetuneSpec.from_dict({**saved["spec"], "resume": True, "out": str(run_dir),
                                       "probes": spec.probes or saved["spec"].get("probes", [])})
    elif (run_dir / "config.json").exists():
        raise CheckpointError(f"{run_dir} already holds a run; use --resume to continue it or choose another --out")
    task = load_task(spec.task, spec.validation)
    if spec.max_train:
        task.train = task.train[: spec.max_train]
    torch.manual_seed(spec.seed)
    device = pick_device(spec.device)
    precision = precision_for(device, spec.mixed_precision)
    handle = _base_handle(spec.model)
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
    params = [p for p in model.parameters() if p.requires_grad]
    opt = adamw(model, lr, spec.weight_decay)
    scaler = torch.amp.GradScaler(device.type) if precision.needs_scaler else None
    step, best, best_step = 0, -math.inf, 0
    if spec.resume:
        state = read_training_state(run_dir)
        model.load_state_dict({k: v.to(device) for k, v in state["model"].items()})
        opt.load_state_dict(state["optimizer"])
        step, best, best_step = int(state["step"]), float(state["best"]), int(state["best_step"])
        torch.set_rng_state(state["rng"])
    run_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(encoder, HFEncoder) and not spec.resume:
        encoder.save_folder(run_dir / "hf")
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
            "steps": total, "batch_size": spec.batch_size, "lr": lr, "metric": metric_name,
            "truncated": train_data.truncated + val_data.truncated, "notes": notes, **counts}

    with open(run_dir / "metrics.jsonl", "a" if spec.resume else "w", encoding="utf-8") as sink:
        def emit(event: TrainEvent) -> TrainEvent:
            sink.write(json.dumps(event_to_dict(event)) + "\n")
            sink.flush()
            return event

        t0, last = time.perf_counter(), (time.perf_counter(), step)
        first_step = step

        def save_best(metrics: dict[str, float], details: dict[str, Any]) -> None:
            config = {"spec": spec.to_dict(), "base": base, "task": {"name": task.name, "family": family,
                      "labels": list(task.labels), "source": task.source}, "strategy": spec.strategy,
                      "max_len": spec.max_len, "trained_steps": step, "best_step": step, "metrics": metrics,
                      "device": str(device), "encoder": encoder.describe(), "notes": notes}
            save_run(run_dir, KIND, config, model.state_dict(), files=encoder.files())
            atomic_write_bytes(run_dir / REPORT, json.dumps({**details, "step": step}, indent=1).encode())

        def save_state() -> None:
            state = {"step": step, "best": best, "best_step": best_step, "optimizer": opt.state_dict(),
                     "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
                     "rng": torch.get_rng_state()}
            atomic_write_with(run_dir / STATE, lambda p: torch.save(state, p))

        def validate() -> Iterator[TrainEvent]:
            nonlocal best, best_step
            metrics, details = evaluate(model, task, val_data, max(64, spec.batch_size), precision)
            yield emit(EvalMetrics(step, metrics))
            if metrics[metric_name] > best or not (run_dir / "model.safetensors").exists():
                best, best_step = metrics[metric_name], step
                save_best(metrics, details)
            save_state()
            model.train()

        def probes() -> Iterator[TrainEvent]:
            if spec.probes:
                labels, probs = probe(model, encoder, task, spec.probes, spec.max_len, precision, device)
                yield emit(ProbePredictions(step, list(spec.probes), labels, probs))
                model.train()

        yield emit(RunStarted(str(run_dir), KIND, device_name(device), float(total * spec.batch_size), "examples",
                              step, info))
        if step == 0:
            yield from probes()
        rng = np.random.default_rng(spec.seed)
        for _ in range(step // per_epoch):  # the same shuffles as an uninterrupted run
            rng.permutation(len(train_data))
        loss_sum, since = torch.zeros((), device=device), 0
        lr_factor = warmup_then_linear(int(spec.warmup * total), total)
        model.train()
        while step < total:
            order = rng.permutation(len(train_data))
            for b in range(step % per_epoch, per_epoch):
                batch = train_data.batch(order[b * spec.batch_size : (b + 1) * spec.batch_size])
                with precision.autocast():
                    loss = model(batch)["loss"]
                rate = lr * lr_factor(step)
                optimizer_step(loss, opt, rate, params, spec.clip, scaler)
                step += 1
                loss_sum += loss.detach().float()
                since += 1
                if step % spec.log_every == 0 or step == total:
                    mean = float(loss_sum) / since  # the only read from the device between validations
                    loss_sum.zero_()
                    since = 0
                    if not math.isfinite(mean):
                        yield emit(RunFinished("diverged", step, str(run_dir), "the loss is no longer finite; the "
                                               "best checkpoint is kept (try a smaller --lr)"))
                        return
                    now = time.perf_counter()
                    speed = (step - last[1]) * spec.batch_size / max(now - last[0], 1e-9)
                    overall = (step - first_step) / max(now - t0, 1e-9)
                    last = (now, step)
                    yield emit(StepMetrics(step, step // per_epoch, step / total, mean, rate, speed, "examples",
                                           now - t0, (total - step) / overall if overall else math.inf))
                if step % eval_every == 0 and step < total:
                    yield from validate()
                if step % probe_every == 0 and step < total:
                    yield from probes()
                if stop.is_set() or step >= total:
                    break
            if stop.is_set():
                break
        yield from validate()
        yield from probes()
        status = "completed" if step >= total else "stopped"
        message = (f"best validation {metric_name} {best:.3f} at step {best_step}" if status == "completed" else
                   f"stopped at step {step}; the best checkpoint (step {best_step}) is kept; resume with --resume")
        with open(run_dir / "config.json", encoding="utf-8") as f:
            final = json.load(f).get("metrics", {})
        yield emit(RunFinished(status, step, str(run_dir), message, {f"best_{k}": v for k, v in final.items()}))


def read_report(run_dir: str | Path) -> dict[str, Any]:
    """The evaluation of a fine-tuned run's best checkpoint (confusion matrix or per-tag F1)."""
    path = Path(run_dir) / REPORT
    if not path.exists():
        raise CheckpointError(f"{run_dir} has no {REPORT}: it was not fine-tuned by word2bert, or never validated")
    return json.loads(path.read_text(encoding="utf-8"))
