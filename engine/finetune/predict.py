"""A fine-tuned model's predictions: probabilities over a dataset, the words' tags, the validation
metrics with their report (confusion matrix, per-type F1, example answers), probe sentences."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.data.tasks import TaskData
from engine.errors import CheckpointError
from engine.finetune import metrics as task_metrics
from engine.finetune.batches import (
    TaskArrays,
    examples_for_probe,
    first_pieces,
    span_answer,
    tensorize,
)
from engine.finetune.encoders import Encoder
from engine.models.task_heads import FinetuneModel

REPORT = "evaluation.json"


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


def read_report(run_dir: str | Path) -> dict[str, Any]:
    """The evaluation of a fine-tuned run's best checkpoint (confusion matrix or per-tag F1)."""
    path = Path(run_dir) / REPORT
    if not path.exists():
        raise CheckpointError(f"{run_dir} has no {REPORT}: it was not fine-tuned by word2bert, or never validated")
    return json.loads(path.read_text(encoding="utf-8"))
