"""``word2bert-train tuned-lens --model M``: a tuned lens for any loaded Transformer language model (ours,
a shipped one, a Hugging Face folder), trained by the one gradient loop on the corpus's sentences.

The model stays frozen and in evaluation mode; each step runs a batch of sentences through it (a masked
LM with 15% of its words masked, as it was trained), samples ``positions`` real tokens and trains the
translators to make every layer's translated state read, through the model's own head, as the output
layer's distribution. Held out: each layer's KL divergence from the output under the tuned lens and
under the plain logit lens (what the translators bought)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from engine.checkpoints.reading import save_id
from engine.data.inputs import encode_text
from engine.errors import CorpusError, InputError, Unsupported
from engine.models.tuned_lens import TunedLens, lens_kl
from engine.training.context import TrainContext
from engine.training.events import TrainEvent
from engine.training.pretrain import Recipe, pretrain

MAX_SENTENCES = 50_000  # the training sentences read (a tuned lens of a small model needs far fewer steps)
HELDOUT_SENTENCES = 256


class LensTraining(nn.Module):
    """The translators as the gradient loop's model; the frozen network is an attribute, not a submodule
    (its weights are neither optimised nor saved)."""

    def __init__(self, lens: TunedLens, adapter: Any) -> None:
        super().__init__()
        self.lens = lens
        self.adapter = adapter


def sentence_windows(sentences: list[str], adapter: Any, seq_len: int) -> np.ndarray:
    """(N, seq_len) token ids, one sentence per row as the model reads a query (its own specials), right-
    padded with -1 (never a token id)."""
    rows = []
    for sentence in sentences:
        ids = encode_text(adapter.tokenizer, adapter.specials, sentence, None, seq_len).ids
        if len(ids) >= 4:
            rows.append(ids + [-1] * (seq_len - len(ids)))
    return np.asarray(rows, dtype=np.int64).reshape(-1, seq_len)


def run_tuned_lens(ctx: TrainContext) -> Iterator[TrainEvent]:
    cfg = ctx.spec.model
    if ctx.load is None:
        raise Unsupported("a tuned lens loads the model it reads: train it through engine.api or word2bert-train")
    base = str(cfg.base)
    if Path(base).expanduser().exists():  # a folder: recorded as an absolute path, so the run opens anywhere
        base = str(Path(base).expanduser().resolve())
    handle = ctx.load(base)
    adapter = getattr(handle, "adapter", None)
    if adapter is None or adapter.objective not in ("masked", "causal") or getattr(adapter, "encoder_decoder", False):
        raise Unsupported(f"{handle.name} has no output head on its layers: a tuned lens reads a Transformer language "
                          "model (BERT, GPT, a Hugging Face masked or causal LM; not an encoder-decoder)")
    if cfg.seq_len > adapter.max_len:
        raise InputError(f"seq_len {cfg.seq_len} exceeds the {adapter.max_len} tokens {handle.name} reads")
    network = adapter.model  # the network with its output head
    network.to(ctx.device).eval()
    for p in network.parameters():
        p.requires_grad_(False)
    adapter.device = ctx.device
    sentences = [s for s in ctx.corpus.sentences("train") if len(s) >= 12][:MAX_SENTENCES]
    held = [s for s in ctx.corpus.sentences("heldout") if len(s) >= 12][:HELDOUT_SENTENCES]
    windows = sentence_windows(sentences, adapter, cfg.seq_len)
    heldout = sentence_windows(held, adapter, cfg.seq_len)
    if len(windows) < cfg.batch_size:
        raise CorpusError(f"the corpus gives {len(windows)} sentences, fewer than one batch")
    if len(heldout) == 0:
        heldout = windows[: cfg.batch_size]
    lens = TunedLens(adapter.n_layers + 1, adapter.hidden_size)
    model = LensTraining(lens, adapter)
    masked = adapter.objective == "masked"
    eval_ids = torch.from_numpy(heldout).to(ctx.device)

    def states(batch: torch.Tensor, generator: torch.Generator | None) -> tuple[list[torch.Tensor], torch.Tensor]:
        """The frozen model's hidden states at the batch's real tokens ((layers + 1) x (P, d)), a masked LM
        reading 15% of its words as [MASK]."""
        real = batch >= 0
        ids = batch.clamp_min(0)
        if masked:
            draw = torch.rand(ids.shape, device=ids.device, generator=generator)
            specials = set(adapter.specials.prefix) | set(adapter.specials.suffix)
            plain = real & ~torch.isin(ids, torch.tensor(sorted(specials), device=ids.device, dtype=ids.dtype))
            ids = torch.where(plain & (draw < cfg.mask_prob), torch.full_like(ids, adapter.mask_id), ids)
        with torch.no_grad():
            hidden = adapter.forward(ids, None, pad_mask=real).hidden
        where = real.nonzero()
        if len(where) > cfg.positions:
            pick = torch.randperm(len(where), device=ids.device, generator=generator)[: cfg.positions]
            where = where[pick]
        return [h[where[:, 0], where[:, 1]].float() for h in hidden], where

    def step_loss(net: Any, batch: dict[str, torch.Tensor],
                  generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        hidden, _ = states(batch["ids"], generator)
        kl = lens_kl(adapter.read_layers, net.lens.translate(hidden))
        return {"loss": kl.mean()}

    def evaluate(net: Any) -> dict[str, float]:
        tuned, logit = torch.zeros(lens.states - 1), torch.zeros(lens.states - 1)
        batches = 0
        generator = torch.Generator(device=ctx.device).manual_seed(0)  # the same masks at every evaluation
        with torch.no_grad():
            for first in range(0, len(eval_ids), cfg.batch_size):
                hidden, _ = states(eval_ids[first : first + cfg.batch_size], generator)
                tuned += lens_kl(adapter.read_layers, net.lens.translate(hidden)).cpu()
                logit += lens_kl(adapter.read_layers, hidden).cpu()
                batches += 1
        tuned, logit = tuned / max(batches, 1), logit / max(batches, 1)
        out = {"loss": float(tuned.mean()), "kl_tuned": float(tuned.mean()), "kl_logit": float(logit.mean())}
        for layer in range(len(tuned)):
            out[f"kl_tuned_layer_{layer}"] = float(tuned[layer])
            out[f"kl_logit_layer_{layer}"] = float(logit[layer])
        return out

    train_data = {"ids": torch.from_numpy(windows).to(ctx.device)}
    real_per_window = float((windows >= 0).sum()) / max(len(windows), 1)
    recipe = Recipe("tuned-lens", model, len(windows), real_per_window, lambda epoch: train_data, step_loss,
                    evaluate, {}, {"base": base, "base_name": handle.name, "states": lens.states,
                                   "dim": adapter.hidden_size, "objective": adapter.objective,
                                   "base_save_id": save_id(handle.path) if handle.path else ""},
                    weights=lambda: {k: v.detach() for k, v in lens.state_dict().items()},
                    notes=[f"a tuned lens for {handle.name}: {lens.states - 1} translators of {adapter.hidden_size}"
                           f"² weights, the model frozen"])
    yield from pretrain(ctx, recipe)
