"""Examples -> padded arrays (built once, moved to the device once) and batches cut from them.

Each batch is trimmed to its longest example; lengths are known on the host, so cutting a batch never
waits for the device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from engine.data.inputs import Encoded
from engine.data.tasks import SpanExample, TagExample, TextExample
from engine.finetune.encoders import Encoder
from engine.models.task_heads import IGNORE


@dataclass
class TaskArrays:
    arrays: dict[str, np.ndarray]  # ids, segments, mask (N, T); labels (N,) or (N, T); allowed, start, end
    lengths: np.ndarray  # (N,)
    encoded: list[Encoded]
    truncated: int = 0  # examples cut to max_len
    lost_answers: int = 0  # span answers cut off by truncation
    tensors: dict[str, torch.Tensor] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.lengths)

    def to(self, device: torch.device) -> TaskArrays:
        self.tensors = {k: torch.from_numpy(v).to(device) for k, v in self.arrays.items()}
        return self

    def batch(self, index: np.ndarray) -> dict[str, torch.Tensor]:
        """Rows ``index`` (host array), trimmed to their longest example."""
        longest = int(self.lengths[index].max())
        device = next(iter(self.tensors.values())).device
        rows = torch.from_numpy(index).to(device, non_blocking=True)
        return {k: (v[rows, :longest] if v.dim() == 2 else v[rows]) for k, v in self.tensors.items()}


def first_pieces(words: list[int]) -> list[int]:
    """Token positions where a word begins (its first sub-word), in word order."""
    return [i for i, w in enumerate(words) if w >= 0 and (i == 0 or words[i - 1] != w)]


def answer_tokens(enc: Encoded, start_char: int, end_char: int) -> tuple[int, int]:
    """The context tokens covering characters [start_char, end_char); (-1, -1) when truncated away."""
    start = end = -1
    for i, ((a, b), second) in enumerate(zip(enc.offsets, enc.second, strict=True)):
        if not second:
            continue
        if start < 0 and b > start_char:
            start = i
        if a < end_char:
            end = i
    if start < 0 or end < start or enc.offsets[end][1] < end_char:
        return -1, -1
    return start, end


def encode_example(encoder: Encoder, example: Any, max_len: int) -> Encoded:
    if isinstance(example, TextExample):
        return encoder.encode(example.text, example.text_b, max_len)
    if isinstance(example, TagExample):
        return encoder.encode(list(example.tokens), None, max_len)
    return encoder.encode(example.question, example.context, max_len, truncate_first=False)


def tensorize(encoder: Encoder, examples: list[Any], family: str, labels: tuple[str, ...], max_len: int) -> TaskArrays:
    encoded = [encode_example(encoder, e, max_len) for e in examples]
    n, longest = len(encoded), max((len(e.ids) for e in encoded), default=1)
    ids = np.zeros((n, longest), np.int64)
    segments = np.zeros((n, longest), np.int64)
    lengths = np.array([len(e.ids) for e in encoded], np.int64)
    for i, e in enumerate(encoded):
        ids[i, : len(e.ids)] = e.ids
        segments[i, : len(e.ids)] = e.segments
    mask = np.arange(longest)[None] < lengths[:, None]
    arrays: dict[str, np.ndarray] = {"ids": ids, "segments": segments, "mask": mask}
    index = {label: k for k, label in enumerate(labels)}
    lost = 0
    if family in ("classify", "pair"):
        arrays["labels"] = np.array([index.get(e.label, 0) for e in examples], np.int64)
    elif family == "tag":
        tags = np.full((n, longest), IGNORE, np.int64)
        for i, (e, enc) in enumerate(zip(examples, encoded, strict=True)):
            for pos in first_pieces(enc.words):
                tags[i, pos] = index.get(e.tags[enc.words[pos]], 0)
        arrays["labels"] = tags
    else:
        allowed = np.zeros((n, longest), bool)
        starts, ends = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
        for i, (e, enc) in enumerate(zip(examples, encoded, strict=True)):
            allowed[i, : len(enc.second)] = enc.second
            starts[i], ends[i] = answer_tokens(enc, e.answer_start, e.answer_start + len(e.answer_text))
            lost += starts[i] < 0
        arrays.update(allowed=allowed, start=starts, end=ends)
    return TaskArrays(arrays, lengths, encoded, sum(e.truncated for e in encoded), int(lost))


def examples_for_probe(texts: list[str], family: str) -> list[Any]:
    """Probe sentences as examples of the task (tagging: split into words; pairs: 'A ||| B')."""
    if family == "tag":
        from engine.data.text import word_spans

        return [TagExample(tuple(t[a:b] for a, b in word_spans(t)), tuple("O" for _ in word_spans(t))) for t in texts]
    out = []
    for t in texts:
        a, _, b = t.partition("|||")
        out.append(TextExample(a.strip(), "", b.strip() or None if family == "pair" else None))
    return out


def span_answer(example: SpanExample, enc: Encoded, start: int, end: int) -> str:
    return example.context[enc.offsets[start][0] : enc.offsets[end][1]]
