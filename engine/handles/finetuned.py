"""Fine-tuned run folders behind the BaseHandle interface: ``classify``, ``tag`` or ``answer``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.checkpoints.reading import read_tensors
from engine.data.tasks import SpanExample, TagExample, TextExample
from engine.data.text import word_spans
from engine.device import pick_device, precision_for
from engine.errors import InputError, Unsupported
from engine.handles.base import BaseHandle, check_text, run_info
from engine.models.packed_linear import pack_linears
from engine.results import Answer, Capability, Classification, Tagging

_CAPABILITY = {"classify": Capability.CLASSIFY, "pair": Capability.CLASSIFY, "tag": Capability.TAG,
               "span": Capability.ANSWER}


class FinetunedHandle(BaseHandle):
    def __init__(self, name: str, path: str | None, info: dict[str, Any], model: Any, labels: tuple[str, ...],
                 family: str, max_len: int, device: torch.device) -> None:
        super().__init__("finetune", name, path, info)
        self.model, self.labels, self.family, self.max_len, self.device = model.to(device).eval(), labels, family, \
            max_len, device
        pack_linears(self.model)  # queries' short products through oneDNN on the CPU (see its module)
        self.capabilities = _CAPABILITY[family]
        self.precision = precision_for(device, False)

    def _run(self, examples: list[Any]) -> tuple[Any, dict[str, np.ndarray]]:
        from engine.finetune.batches import tensorize
        from engine.finetune.predict import predict

        data = tensorize(self.model.encoder, examples, self.family, self.labels, self.max_len).to(self.device)
        return data, predict(self.model, data, 64, self.precision)

    def _notice(self, data: Any) -> str:
        return f"truncated to the first {self.max_len} tokens" if data.truncated else ""

    def classify(self, text: str, text_b: str | None = None) -> Classification:
        return self.classify_batch([text], [text_b])[0]

    def classify_batch(self, texts: list[str], texts_b: list[str | None] | None = None) -> list[Classification]:
        if Capability.CLASSIFY not in self.capabilities:
            raise Unsupported(self.missing(Capability.CLASSIFY))
        pairs = texts_b or [None] * len(texts)
        if self.family == "pair" and any(b is None for b in pairs):
            raise InputError("this model classifies pairs of texts: give the second text too")
        examples = [TextExample(check_text(t, "text"), "", check_text(b, "second text") if b else None)
                    for t, b in zip(texts, pairs, strict=True)]
        data, out = self._run(examples)
        results = []
        for i, text in enumerate(texts):
            notice = f"truncated to the first {self.max_len} tokens" if data.encoded[i].truncated else ""
            results.append(Classification.ranked(text, self.labels, out["probs"][i], notice))
        return results

    def tag(self, text: str) -> Tagging:
        from engine.finetune.metrics import entity_words
        from engine.finetune.predict import word_tags

        if Capability.TAG not in self.capabilities:
            raise Unsupported(self.missing(Capability.TAG))
        text = check_text(text)
        words = tuple(text[a:b] for a, b in word_spans(text))
        if not words:
            raise InputError("the sentence has no words")
        data, out = self._run([TagExample(words, tuple("O" for _ in words))])
        tags, probs = word_tags(out["probs"], data, self.labels, 0, len(words))
        return Tagging(words, tuple(tags), tuple(probs), entity_words(words, tags), self._notice(data))

    def answer(self, question: str, context: str) -> Answer:
        from engine.finetune.batches import span_answer
        from engine.finetune.metrics import best_span

        if Capability.ANSWER not in self.capabilities:
            raise Unsupported(self.missing(Capability.ANSWER))
        example = SpanExample(check_text(question, "question"), check_text(context, "context"), 0, "")
        data, out = self._run([example])
        allowed = data.arrays["allowed"][0]
        if not allowed.any():
            raise InputError("the question leaves no room for the context: shorten the question")
        s, e, score = best_span(out["start"][0], out["end"][0], allowed)
        enc = data.encoded[0]
        return Answer(span_answer(example, enc, s, e), enc.offsets[s][0], enc.offsets[e][1], score, self._notice(data))

    def missing(self, capability: Capability) -> str:
        if capability in self.capabilities:
            return ""
        if capability in (Capability.CLASSIFY, Capability.TAG, Capability.ANSWER):
            what = {"classify": "classifies texts", "pair": "classifies text pairs", "tag": "tags words",
                    "span": "extracts answers"}[self.family]
            return f"{self.name} was fine-tuned on {self.info.get('task', 'a task')}: it {what}"
        return f"{self.name} is a fine-tuned {self.family} model: use its base model for {str(capability.name).lower()}"


def load_finetuned(run_dir: Path, config: dict) -> FinetunedHandle:
    from engine.finetune.encoders import encoder_from_folder
    from engine.handles.transformer import expected_shapes
    from engine.models.task_heads import FinetuneModel

    task = config["task"]
    labels = tuple(task["labels"])
    encoder = encoder_from_folder(run_dir, config["base"])
    spec = config.get("spec", {})
    model = FinetuneModel(encoder, task["family"], len(labels), float(spec.get("dropout", 0.1)))
    tensors = read_tensors(run_dir, config, expected_shapes(model))
    model.load_state_dict({k: v.float() for k, v in tensors.items()})
    info = run_info(run_dir, config)
    info.update({"task": task["name"], "family": task["family"], "labels": list(labels), "strategy": config.get("strategy"),
                 "base": config["base"].get("name"), "parameters": sum(p.numel() for p in model.parameters())})
    return FinetunedHandle(run_dir.name, str(run_dir), info, model, labels, task["family"],
                           int(config.get("max_len", 128)), pick_device())
