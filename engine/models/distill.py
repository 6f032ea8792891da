"""Distillation across vocabularies: a student's states pulled towards a teacher's, word by word.

The student (our BERT, its own WordPiece vocabulary) and the teacher (e.g. all-MiniLM-L6-v2, 30k
uncased WordPiece) split words differently, so states are compared per word: the mean of a word's
pieces on each side (TinyBERT matches tokens; a word is the unit both sides share). Student layer i is
matched with teacher layer round(i · L_teacher / L_student) through a learned linear map, and the loss
is 1 − cosine (direction is what nearest-neighbour views and sense separation read).

    student layer i (B, T_s, d_s) --pool by word--> (B, W, d_s) --W_i--> (B, W, d_t)
    teacher layer j (B, T_t, d_t) --pool by word--> (B, W, d_t)          loss_i = mean over words (1 − cos)

A teacher that is itself a masked LM (an adapted MiniLM, minilm-mlm) also gives its predictions at the
masked positions: the student, which then shares its vocabulary, learns them as soft targets (DistilBERT,
Sanh et al. 2019): KL(teacher ‖ student) of the two distributions at temperature τ, times τ² — every
masked position teaches the whole distribution (*bank*, *atm*, *branch* …), not only the word that was there.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def layer_pairs(student_layers: int, teacher_layers: int) -> list[tuple[int, int]]:
    """(student layer, teacher layer) for every student layer 1..L_s, spread uniformly over the teacher's."""
    return [(i, round(i * teacher_layers / student_layers)) for i in range(1, student_layers + 1)]


def pool_words(states: torch.Tensor, word_index: torch.Tensor, n_words: int) -> torch.Tensor:
    """states (B, T, d), word_index (B, T) with -1 for tokens of no word -> (B, n_words, d) word means."""
    b, _, d = states.shape
    valid = word_index >= 0
    index = word_index.clamp(min=0)
    sums = states.new_zeros(b, n_words, d).scatter_add_(1, index[..., None].expand(-1, -1, d),
                                                        states * valid[..., None].to(states.dtype))
    counts = states.new_zeros(b, n_words).scatter_add_(1, index, valid.to(states.dtype))
    return sums / counts.clamp(min=1)[..., None]


def word_index(ids: torch.Tensor, special: torch.Tensor, continuation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """ids, special (B, T), continuation (V,) True on "##" pieces -> (each token's word number in its row,
    -1 on special tokens; (B,) words per row), on the ids' device. A word starts at a piece without "##", or
    at any piece first in its row or after a special token (engine/training/teacher.py's student_words, which
    also spells the words, does the same on the host)."""
    piece = continuation.to(ids.device)[ids] & ~special
    after_special = torch.ones_like(special)
    after_special[:, 1:] = special[:, :-1]
    starts = ~special & (~piece | after_special)
    index = (torch.cumsum(starts.long(), dim=1) - 1).masked_fill(special, -1)
    return index, starts.sum(dim=1)


class WordDistillation(nn.Module):
    """``identity``: no map (the widths must match): the student's own states are pulled to the teacher's
    directions, so the structure its nearest-neighbour views read (senses) is the one it was taught; a
    learned map lets a narrower student match the teacher only up to that map, which is not saved."""

    def __init__(self, student_dim: int, teacher_dim: int, pairs: list[tuple[int, int]], identity: bool = False) -> None:
        super().__init__()
        if identity and student_dim != teacher_dim:
            raise ValueError(f"distill_map identity needs the student as wide as its teacher: hidden {student_dim}, "
                             f"teacher {teacher_dim} (set hidden {teacher_dim}, or distill_map linear)")
        self.pairs = pairs
        self.maps = nn.ModuleList((nn.Identity() if identity else nn.Linear(student_dim, teacher_dim)) for _ in pairs)

    def forward(self, student_hidden: list[torch.Tensor], word_index: torch.Tensor, targets: list[torch.Tensor],
                valid: torch.Tensor) -> torch.Tensor:
        """student_hidden: the student's (L_s + 1) x (B, T, d_s); word_index (B, T); targets: per pair
        (B, W, d_t) teacher word states; valid (B, W): words both sides have. Returns the mean loss."""
        n_words = valid.shape[1]
        weight = valid.to(targets[0].dtype)
        total = targets[0].new_zeros(())
        for (layer, _), linear, target in zip(self.pairs, self.maps, targets, strict=True):
            words = linear(pool_words(student_hidden[layer], word_index, n_words))  # (B, W, d_t)
            distance = 1 - F.cosine_similarity(words.float(), target.float(), dim=-1)  # (B, W)
            total = total + (distance * weight).sum() / weight.sum().clamp(min=1)
        return total / len(self.pairs)


def soft_target_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """KL(teacher ‖ student) of the (M, V) distributions at ``temperature``, times its square (so the
    gradient keeps its size as τ changes), averaged over the M positions."""
    t = temperature
    student = F.log_softmax(student_logits.float() / t, dim=-1)
    teacher = F.log_softmax(teacher_logits.float() / t, dim=-1)
    return F.kl_div(student, teacher, log_target=True, reduction="batchmean") * t * t


class DistilledBert(nn.Module):
    """Our BERT training with a teacher: its own MLM (+ NSP) losses plus ``weight`` × the word-state loss
    and, from a masked-LM teacher, ``soft_weight`` × the soft-target loss. Only ``student`` is saved as
    the run's model: the maps exist for training."""

    def __init__(self, student: nn.Module, distillation: WordDistillation, weight: float, soft_weight: float = 0.0,
                 temperature: float = 1.0) -> None:
        super().__init__()
        self.student, self.distillation, self.weight = student, distillation, weight
        self.soft_weight, self.temperature = soft_weight, temperature

    def forward(self, ids: torch.Tensor, segments: torch.Tensor, pad_mask: torch.Tensor | None, labels: torch.Tensor,
                is_next: torch.Tensor | None = None, word_index: torch.Tensor | None = None,
                targets: list[torch.Tensor] | None = None, valid: torch.Tensor | None = None,
                soft: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """``soft``: the teacher's (M, V) logits at the masked positions (labels != IGNORE), in row order."""
        kept: list[list[torch.Tensor]] = []
        logits: list[torch.Tensor] = []
        out = self.student(ids, segments, pad_mask, labels, is_next, keep_hidden=kept,
                           keep_logits=logits if soft is not None else None)
        if targets is not None and word_index is not None and valid is not None:
            distance = self.distillation(kept[0], word_index, targets, valid)
            out["distill_loss"] = distance.detach()
            out["loss"] = out["loss"] + self.weight * distance
        if soft is not None and len(soft):
            kl = soft_target_loss(logits[0], soft, self.temperature)
            out["soft_loss"] = kl.detach()
            out["loss"] = out["loss"] + self.soft_weight * kl
        return out
