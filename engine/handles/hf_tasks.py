"""A Hugging Face checkpoint fine-tuned for a task — ``…ForSequenceClassification`` (a text or a pair gets one of
its labels: sentiment, topic, entailment), ``…ForTokenClassification`` (each word gets a tag: named entities) or
``…ForQuestionAnswering`` (a question's answer is a span of its context: SQuAD) —
answers with its own head and labels (``config.id2label``), as a model fine-tuned here does; its encoder gives
vectors and attention as any model's. A head of one output (a regression: a similarity score) is no classifier:
such a folder opens for its vectors and attention, and says so."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from engine.data.inputs import encode_text
from engine.data.text import word_spans
from engine.device import threads_for
from engine.errors import InputError, Unsupported
from engine.handles.base import check_text
from engine.handles.transformer import TransformerHandle
from engine.models.wrappers.hf import HFAdapter
from engine.results import Answer, Capability, Classification, Tagging

HEADS = {"ForSequenceClassification": "classify", "ForTokenClassification": "tag", "ForQuestionAnswering": "answer"}
WHAT = {"classify": "classifies texts", "tag": "tags words", "answer": "answers a question from a context"}
CAPABILITY = {"classify": Capability.CLASSIFY, "tag": Capability.TAG, "answer": Capability.ANSWER}


def task_of(architectures: list[str], config: Any) -> str:
    """"classify", "tag" or "" (no task head this handle reads) from the class the folder was saved as."""
    for name in architectures:
        for suffix, family in HEADS.items():
            if name.endswith(suffix) and (family == "answer" or int(getattr(config, "num_labels", 0) or 0) >= 2):
                return family
    return ""


def labels_of(config: Any) -> tuple[str, ...]:
    """The labels in the head's order ("LABEL_0" … where the folder names none, as transformers does)."""
    names = getattr(config, "id2label", None) or {}
    return tuple(str(names.get(i, names.get(str(i), f"LABEL_{i}"))) for i in range(int(config.num_labels)))


class HFTaskHandle(TransformerHandle):
    """A TransformerHandle whose adapter's model is the whole task model (encoder and head): vectors and attention
    run its encoder (the adapter's ``body``), ``classify`` or ``tag`` the whole model."""

    def __init__(self, kind: str, name: str, path: str | None, info: dict[str, Any], adapter: HFAdapter, family: str,
                 labels: tuple[str, ...]) -> None:
        super().__init__(kind, name, path, info, adapter)
        self.hf, self.family, self.labels = adapter, family, labels
        self.capabilities |= CAPABILITY[family]
        self.multi_label = getattr(adapter.model.config, "problem_type", None) == "multi_label_classification"
        self.info.update({"task": WHAT[family] + (f" ({', '.join(labels)})" if family != "answer" else ""),
                          "family": family, "labels": list(labels) if family != "answer" else []})

    def _outputs(self, ids: list[int], segments: list[int]) -> Any:
        device = self.hf.device
        kwargs: dict[str, Any] = {"input_ids": torch.tensor([ids], device=device),
                                  "attention_mask": torch.ones(1, len(ids), dtype=torch.long, device=device)}
        if self.hf.takes_segments:
            kwargs["token_type_ids"] = torch.tensor([segments], device=device)
        with torch.inference_mode(), threads_for(self._parameters() * len(ids)):
            return self.hf.model(**kwargs)

    def _probabilities(self, ids: list[int], segments: list[int]) -> np.ndarray:
        """The head's probabilities: (labels,) for a text, (tokens, labels) for a tagger (each label on its own
        for a multi-label classifier, whose labels do not exclude each other)."""
        logits = self._outputs(ids, segments).logits[0].float()
        probs = logits.sigmoid() if self.multi_label else logits.softmax(-1)
        return probs.cpu().numpy()

    def classify(self, text: str, text_b: str | None = None) -> Classification:
        return self.classify_batch([text], [text_b])[0]

    def classify_batch(self, texts: list[str], texts_b: list[str | None] | None = None) -> list[Classification]:
        if Capability.CLASSIFY not in self.capabilities:
            raise Unsupported(self.missing(Capability.CLASSIFY))
        out = []
        for text, pair in zip(texts, texts_b or [None] * len(texts), strict=True):
            a = check_text(text, "text")
            b = check_text(pair, "second text") if pair else None
            ids, segments, _, _, notice = self._encode(a, b)
            out.append(Classification.ranked(a, self.labels, self._probabilities(ids, segments), notice))
        return out

    def tag(self, text: str) -> Tagging:
        from engine.finetune.metrics import entity_words

        if Capability.TAG not in self.capabilities:
            raise Unsupported(self.missing(Capability.TAG))
        text = check_text(text)
        spans = word_spans(text)
        if not spans:
            raise InputError("the sentence has no words")
        ids, segments, offsets, special, notice = self._encode(text)
        probs = self._probabilities(ids, segments)
        tags, chances = [], []
        for a, b in spans:  # each word read at its first token (as the model was fine-tuned on words)
            first = next((i for i, (s, e) in enumerate(offsets) if not special[i] and e > a and s < b), None)
            if first is None:  # beyond what the model reads
                break
            best = int(probs[first].argmax())
            tags.append(self.labels[best])
            chances.append(float(probs[first, best]))
        words = tuple(text[a:b] for a, b in spans[: len(tags)])
        return Tagging(words, tuple(tags), tuple(chances), entity_words(words, tags), notice)

    def answer(self, question: str, context: str) -> Answer:
        """The span of ``context`` the head scores highest as the answer (start + end logits, at most 30 tokens;
        the question is kept whole and a long context cut, as fine-tuning here reads a span task). Where the span
        of the first token ([CLS], <s>) scores higher — how a model trained on SQuAD 2.0 says the context has no
        answer — the notice says so (the span stays: a SQuAD 1 model's first token means nothing)."""
        from engine.finetune.metrics import best_span

        if Capability.ANSWER not in self.capabilities:
            raise Unsupported(self.missing(Capability.ANSWER))
        q, c = check_text(question, "question"), check_text(context, "context")
        enc = encode_text(self.adapter.tokenizer, self.adapter.specials, q, c, self.adapter.max_len,
                          truncate_first=False)
        allowed = np.array([second and not special for second, special in zip(enc.second, enc.special, strict=True)])
        if not allowed.any():
            raise InputError("the question leaves no room for the context: shorten the question")
        out = self._outputs(enc.ids, enc.segments)
        start, end = (x[0].float().cpu().numpy() for x in (out.start_logits, out.end_logits))
        s, e, score = best_span(start, end, allowed)
        a, b = enc.offsets[s][0], enc.offsets[e][1]
        notes = [f"cut to the {self.adapter.max_len} tokens this model reads (the question first)"] if enc.truncated \
            else []
        if enc.special[0] and start[0] + end[0] > score:  # SQuAD 2.0's "no answer": the span of the first token
            notes.append(f"but it scores “no answer” higher ({start[0] + end[0]:.1f} against {score:.1f}): "
                         "a model trained on SQuAD 2.0 means the context does not answer the question")
        return Answer(c[a:b], a, b, score, "; ".join(notes))

    def missing(self, capability: Capability) -> str:
        if capability in self.capabilities:
            return ""
        if capability in (Capability.CLASSIFY, Capability.TAG, Capability.ANSWER):
            labels = f" ({', '.join(self.labels)})" if self.labels and self.family != "answer" else ""
            return f"{self.name} was fine-tuned for a task: it {WHAT[self.family]}{labels}"
        return super().missing(capability)
