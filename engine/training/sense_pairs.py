"""Word-in-context pairs riding along a masked-LM adaptation (``mlm-head --sense-pairs FILE``): each step's
batch of corpus windows carries the indices of ``sense_batch`` pairs (shuffled once, then drawn in the
loop's own seeded order, so a resumed run continues with the same pairs); the step's loss is the masked LM's
plus ``sense_weight`` x the word-in-context loss (engine/models/sense_loss.py). One pair in ten (at most 500)
is held out: the held-out evaluation reports how many of those fall on the right side of their median cosine. Those
share words and sentences with the pairs taught; the evaluation also scores the pairs of the development sense set's
words the file does not hold (``sense_pair_accuracy_new_words``): whether what is learned carries to other words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from engine.data.sense_pairs import DEVELOPMENT, encode_pairs, fingerprint, read_sense_pairs
from engine.errors import CorpusError
from engine.models.sense_loss import Encode, found_in_both, pair_cosines, sense_pair_loss
from engine.training.context import TrainContext

HELD_OUT_EVERY = 10  # pair k is held out when k % 10 == 9
MAX_HELD_OUT = 500
EVAL_PAIRS = 64  # pairs per evaluation forward pass


@dataclass
class SensePairs:
    ids: torch.Tensor  # (2P, L) training pairs, rows 2k and 2k+1
    pieces: torch.Tensor  # (2P, L) 0/1 marks of the target word
    same: torch.Tensor  # (P,) bool
    held_ids: torch.Tensor
    held_pieces: torch.Tensor
    held_same: torch.Tensor
    new_ids: torch.Tensor  # the development set's pairs, of words the file does not hold
    new_pieces: torch.Tensor
    new_same: torch.Tensor
    pad: int
    layer: int
    seed: int
    config: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, ctx: TrainContext, layers: int, learning_from: int, tokenizer: Any, cls_id: int, sep_id: int,
              pad: int, max_len: int = 96) -> SensePairs:
        """The run's pairs read, split and encoded with ``tokenizer`` (a ``tokenizers`` tokenizer); ``layers``:
        the encoder's layers, of which those from ``learning_from`` (1-based) up learn."""
        cfg = ctx.spec.model
        if cfg.sense_layer > layers:
            raise ValueError(f"sense_layer {cfg.sense_layer}: the encoder has {layers} layers")
        shaped = cfg.sense_layer or layers
        if shaped < learning_from:
            raise ValueError(f"the sense loss reads layer {shaped}, but only layers {learning_from}-{layers} learn "
                             f"(train_layers {layers - learning_from + 1}): raise train_layers or the layer")
        pairs = read_sense_pairs(cfg.sense_pairs)
        held_out = set(range(HELD_OUT_EVERY - 1, len(pairs), HELD_OUT_EVERY)[:MAX_HELD_OUT])
        held = [p for k, p in enumerate(pairs) if k in held_out]
        train = [p for k, p in enumerate(pairs) if k not in held_out]
        if len(train) < cfg.sense_batch or len({p.same for p in train}) < 2:
            raise CorpusError(f"sense pairs: {cfg.sense_pairs} gives {len(train)} training pairs (one in ten is held "
                              f"out); a step needs {cfg.sense_batch} (sense_batch) of both labels")
        special = (cls_id, sep_id, pad, max_len)
        ids, pieces = encode_pairs(train, tokenizer, *special)
        held_ids, held_pieces = encode_pairs(held, tokenizer, *special) if held else (ids[:0], pieces[:0])
        taught = {p.word.lower() for p in pairs}
        new = [p for p in read_sense_pairs(DEVELOPMENT) if p.word.lower() not in taught]
        new = new[:: -(-len(new) // MAX_HELD_OUT) or 1]  # every k-th, as many of each word: at most MAX_HELD_OUT
        new_ids, new_pieces = encode_pairs(new, tokenizer, *special) if new else (ids[:0], pieces[:0])
        device = ctx.device
        pairs_fp = fingerprint(pairs)
        config = {"sense_pairs_fingerprint": pairs_fp, "sense_pairs_trained": len(train), "sense_pairs_heldout": len(held)}
        notes = [f"word-in-context pairs: {len(train):,} from {cfg.sense_pairs} ({len(held)} held out), "
                 f"{cfg.sense_batch} a step at layer {shaped}, weight {cfg.sense_weight:g}; scored also on "
                 f"{len(new)} pairs of {len({p.word for p in new})} words it is not taught ({DEVELOPMENT.name})"]
        if ctx.spec.resume:
            from engine.checkpoints.reading import read_config

            before = read_config(ctx.run_dir).get("sense_pairs_fingerprint")
            if before and before != pairs_fp:
                notes.append(f"the word-in-context pairs in {cfg.sense_pairs} changed since this run started; "
                             "it goes on with the pairs the file holds now")
        return cls(torch.from_numpy(ids).to(device), torch.from_numpy(pieces).to(device),
                   torch.tensor([p.same for p in train], device=device), torch.from_numpy(held_ids).to(device),
                   torch.from_numpy(held_pieces).to(device), torch.tensor([p.same for p in held], dtype=torch.bool,
                                                                          device=device),
                   torch.from_numpy(new_ids).to(device), torch.from_numpy(new_pieces).to(device),
                   torch.tensor([p.same for p in new], dtype=torch.bool, device=device),
                   pad=pad, layer=cfg.sense_layer, seed=ctx.spec.seed, config=config, notes=notes)

    def extra(self, windows: int, epoch: int = 0) -> dict[str, Any]:
        """Per-window pair indices (every pair as often as the windows allow, in an order seeded by the run's
        seed and the epoch) for the batches, and the config.json fields that say what the run learned from."""
        n = self.same.shape[0]
        gen = torch.Generator().manual_seed(self.seed * 7_919 + 17 + 1_000_003 * epoch)
        repeats = -(-windows // n)
        order = torch.cat([torch.randperm(n, generator=gen) for _ in range(repeats)])[:windows]
        return {"data": {"pair": order.to(self.same.device)}, "config": self.config}

    def loss(self, encode: Encode, index: torch.Tensor) -> dict[str, torch.Tensor]:
        rows = torch.stack([2 * index, 2 * index + 1], 1).reshape(-1)
        return sense_pair_loss(encode, self.ids[rows].long(), self.pieces[rows], self.same[index], self.pad, self.layer)

    def evaluate(self, encode: Encode) -> dict[str, float]:
        """The held-out pairs' accuracy at their median cosine (WiC's labels are balanced) and their count; the
        same for the development set's pairs of words not taught (``_new_words``)."""
        out = {}
        for suffix, ids, pieces, same in (("", self.held_ids, self.held_pieces, self.held_same),
                                          ("_new_words", self.new_ids, self.new_pieces, self.new_same)):
            scored = self._scored(encode, ids, pieces, same)
            if scored is not None:
                out[f"sense_pair_accuracy{suffix}"], out[f"sense_pairs{suffix}_scored"] = scored
        return out

    def _scored(self, encode: Encode, ids: torch.Tensor, pieces: torch.Tensor,
                same: torch.Tensor) -> tuple[float, float] | None:
        """The share of pairs on the right side of their median cosine (same sense above it), and how many."""
        pairs = same.shape[0]
        if pairs == 0:
            return None
        cosines = []
        for first in range(0, pairs, EVAL_PAIRS):
            rows = slice(2 * first, 2 * min(first + EVAL_PAIRS, pairs))
            cosines.append(pair_cosines(encode, ids[rows].long(), pieces[rows], self.pad, self.layer))
        cos = torch.cat(cosines)
        found = found_in_both(pieces)
        cos, same = cos[found], same[found]
        if cos.numel() == 0:
            return None
        return float(((cos >= cos.median()) == same).float().mean()), float(cos.numel())
