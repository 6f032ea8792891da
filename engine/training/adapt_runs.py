"""Adapting a foreign encoder: a masked-LM head (and the top layers) trained on the corpus for a
pre-trained encoder that has none, so it can fill [MASK] (engine/models/masked_lm_head.py); or the
encoder made causal and trained as a left-to-right LM (``run_clm_head``: a GPT from the encoder's weights).

The corpus's train part, tokenized with the encoder's own WordPiece vocabulary, is packed into windows
``[CLS] text [SEP]`` of ``seq_len`` tokens (or whole sentences packed and padded: ``windows``); masking (whole words by default, 80/10/10) is drawn afresh
at every step. Held-out: MLM loss, accuracy and top-10 accuracy at the masked positions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from engine.data.inputs import byte_level, whole_texts
from engine.errors import CheckpointError, CorpusError
from engine.training import distributed
from engine.training.context import TrainContext
from engine.training.continued import earlier_start
from engine.training.events import TrainEvent
from engine.training.pretrain import Recipe, pretrain
from engine.training.pretrain_data import Document, encode_documents

EVAL_EXAMPLES = 256


def mlm_windows(docs: list[Document], seq_len: int, cls: int, sep: int) -> np.ndarray:
    """The documents as one stream ([SEP] after each), cut into (N, seq_len) windows [CLS] … [SEP]."""
    body = seq_len - 2
    parts: list[np.ndarray] = []
    for doc in docs:
        parts.extend(doc)
        parts.append(np.asarray([sep], np.int32))
    stream = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    n = len(stream) // body
    out = np.empty((n, seq_len), np.int32)
    out[:, 0], out[:, -1] = cls, sep
    out[:, 1:-1] = stream[: n * body].reshape(n, body)
    return out


def mlm_sentence_windows(docs: list[Document], seq_len: int, cls: int, sep: int, pad: int,
                         one: bool = False) -> np.ndarray:
    """Whole sentences of one document packed into (N, seq_len) windows [CLS] … [SEP] [PAD]…: every window
    starts at a sentence's start, as a sentence typed into the app does (a stream window starts anywhere);
    a sentence longer than a window is cut at its end. ``one``: a single sentence per window, as the app's
    views and the cloze and held-out sets give a masked LM one sentence with nothing around it."""
    body = seq_len - 2
    rows: list[np.ndarray] = []
    for doc in docs:
        held: list[np.ndarray] = []
        size = 0
        for sentence in doc:
            sentence = sentence[:body]
            if held and (one or size + len(sentence) > body):
                rows.append(np.concatenate(held))
                held, size = [], 0
            held.append(sentence)
            size += len(sentence)
        if held:
            rows.append(np.concatenate(held))
    out = np.full((len(rows), seq_len), pad, np.int32)
    out[:, 0] = cls
    for i, row in enumerate(rows):
        out[i, 1 : 1 + len(row)] = row
        out[i, 1 + len(row)] = sep
    return out


def trim_padding(ids: torch.Tensor, pad: int | None) -> torch.Tensor:
    """A batch without the columns that are padding in every row (padded sentence windows): no work is
    spent on them, and nothing changes, since no token attends to padding."""
    if pad is None or ids.shape[1] == 0:
        return ids
    text = (ids != pad).any(0)
    last = int(text.nonzero().max()) + 1 if bool(text.any()) else 1
    return ids[:, :last] if last < ids.shape[1] else ids


def sentence_windows(docs: list[Document], seq_len: int, start: int) -> np.ndarray:
    """A causal LM's training text: every sentence after a start token (as the model reads a sentence it
    scores), one stream cut into (N, seq_len) windows."""
    parts: list[np.ndarray] = []
    first = np.asarray([start], np.int32)
    for doc in docs:
        for sentence in doc:
            parts.append(first)
            parts.append(sentence)
    stream = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    n = len(stream) // seq_len
    return stream[: n * seq_len].reshape(n, seq_len).copy()


def warm_start(model: Any, init_from: str, base: str, train_layers: int, kind: str = "mlm-head") -> dict[str, Any]:
    """Start from what an earlier run of the same kind and base trained (its head and top layers): a longer
    adaptation with more layers learning need not learn the head again. The run's config records it."""
    from engine.checkpoints.reading import read_config, read_tensors
    from engine.checkpoints.shipped import run_folder
    from engine.models.masked_lm_head import load_trained

    folder = run_folder(init_from)
    config = read_config(folder)
    if config.get("kind") != kind:
        raise CheckpointError(f"init_from: {folder} is a {config.get('kind')!r} run, not a {kind} run")
    if config.get("model", {}).get("base") != base:
        raise CheckpointError(f"init_from: {folder} adapted {config.get('model', {}).get('base')!r}, not {base!r}")
    earlier_layers, layers = int(config.get("model", {}).get("train_layers", 0)), int(train_layers)
    if earlier_layers > layers:  # its lower trained layers would be frozen here and never saved: lost on load
        raise CheckpointError(f"init_from: {folder} trained its top {earlier_layers} layers; this run would keep only "
                              f"its top {layers} (train_layers): use --train-layers {earlier_layers} or more")
    load_trained(model, read_tensors(folder, config), str(folder))
    return {"init_from": str(init_from), "init_from_steps": int(config.get("trained_steps", 0))}


@dataclass
class Adapted:
    """A base encoder built for a run (warm-started, its top layers set to learn) and its corpus as windows."""

    model: Any
    tokenizer: Any  # the transformers tokenizer (special-token ids)
    windows: np.ndarray  # (N, seq_len) training windows
    heldout: np.ndarray  # (M, seq_len) held-out windows
    tokens: int  # sub-word tokens in the training text
    started: dict[str, Any]  # config fields of a warm start (init_from)


def adapt(ctx: TrainContext, kind: str, cut: Callable[[Any, list[Document]], np.ndarray]) -> Adapted:
    """What both adaptations do before training: the encoder built (causal for ``clm-head``), warm-started
    from ``init_from``, its top ``train_layers`` layers made to learn; the corpus's train part and 60,000
    held-out words encoded with its own tokenizer and cut into windows by ``cut(tokenizer, documents)``."""
    from engine.models.masked_lm_head import build, set_trainable

    ctx.device = distributed.setup(ctx.device)
    cfg = ctx.spec.model
    model, hf_tokenizer = build(cfg.base, causal=cfg.causal)
    positions = int(getattr(model.config, "max_position_embeddings", 512))
    if cfg.seq_len > positions:
        raise ValueError(f"seq_len {cfg.seq_len} exceeds the encoder's {positions} positions")
    started = (earlier_start(ctx.run_dir) if ctx.spec.resume else
               warm_start(model, cfg.init_from, cfg.base, cfg.train_layers, kind) if cfg.init_from else {})
    set_trainable(model, cfg.train_layers)
    tok = whole_texts(hf_tokenizer.backend_tokenizer)
    docs = list(ctx.corpus.documents("train"))
    if not docs:
        raise CorpusError(f"the corpus '{ctx.corpus.name}' has no text")
    # a masked LM's windows hold sentences one after another: as text, with the spaces a byte-level tokenizer
    # keeps (a causal one puts its start token before each sentence, which begins as a typed text does)
    spaced = kind == "mlm-head" and byte_level(tok)
    train_docs, n_tokens = encode_documents(docs, tok, ctx.spec.max_words, spaced=spaced)
    windows = cut(hf_tokenizer, train_docs)
    heldout_docs, _ = encode_documents(ctx.corpus.documents("heldout"), tok, max_words=60_000, spaced=spaced)
    heldout = cut(hf_tokenizer, heldout_docs)
    if len(windows) < cfg.batch_size:
        raise CorpusError(f"the corpus gives {len(windows)} windows of {cfg.seq_len} tokens, fewer than one batch")
    if len(heldout) == 0:
        heldout = windows[:8]
    return Adapted(model, hf_tokenizer, windows, heldout, n_tokens, started)


def train_adapted(ctx: TrainContext, kind: str, run: Adapted, step_loss: Callable[..., dict[str, torch.Tensor]],
                  evaluate: Callable[[Any], dict[str, float]], extra: dict[str, Any] | None = None,
                  notes: list[str] | None = None) -> Iterator[TrainEvent]:
    """The adapted encoder trained by the gradient loop; ``extra``: more per-window tensors for the batches
    and more config.json fields (``data`` / ``config``), e.g. the word-in-context pairs that ride along."""
    from engine.models.masked_lm_head import trained_state

    model, cfg = run.model, ctx.spec.model
    extra = extra or {}
    train_data = {"ids": torch.from_numpy(run.windows).to(ctx.device), **extra.get("data", {})}
    pad = run.tokenizer.pad_token_id  # whole-sentence windows end in padding: it is not text the run saw
    per_window = cfg.seq_len if pad is None else float((run.windows != pad).sum()) / max(len(run.windows), 1)
    recipe = Recipe(kind, model, len(run.windows), per_window, lambda epoch: train_data, step_loss, evaluate,
                    {}, {"corpus_tokens": run.tokens, "base": cfg.base, **run.started, **extra.get("config", {}),
                         "trained_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad)},
                    weights=lambda: trained_state(model), notes=notes or [])
    yield from pretrain(ctx, recipe)


def run_mlm_head(ctx: TrainContext) -> Iterator[TrainEvent]:
    from engine.models.masked_lm_head import masked_lm_loss
    from engine.models.masking import mask_words, vocabulary_roles
    from engine.models.sense_loss import hf_states

    cfg = ctx.spec.model

    def cut(t: Any, docs: list[Document]) -> np.ndarray:
        if cfg.windows in ("sentences", "sentence"):
            if t.pad_token_id is None:
                raise ValueError(f"windows {cfg.windows!r} pads its windows, but {cfg.base}'s tokenizer has no [PAD] token")
            return mlm_sentence_windows(docs, cfg.seq_len, t.cls_token_id, t.sep_token_id, t.pad_token_id,
                                        one=cfg.windows == "sentence")
        return mlm_windows(docs, cfg.seq_len, t.cls_token_id, t.sep_token_id)

    run = adapt(ctx, "mlm-head", cut)
    hf_tokenizer = run.tokenizer
    cls, sep, pad, mask = (hf_tokenizer.cls_token_id, hf_tokenizer.sep_token_id, hf_tokenizer.pad_token_id,
                           hf_tokenizer.mask_token_id)
    continuation, ordinary = (t.to(ctx.device) for t in vocabulary_roles(hf_tokenizer))
    eval_ids = torch.from_numpy(run.heldout[:EVAL_EXAMPLES]).to(ctx.device)

    senses = sense_pairs_for(ctx, run) if cfg.sense_pairs else None

    def mlm_loss(net: Any, batch: dict[str, torch.Tensor],
                 generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        ids = trim_padding(batch["ids"].long(), pad)
        special = (ids == cls) | (ids == sep) | (ids == pad)
        inputs, labels = mask_words(ids, special, continuation, ordinary, mask_id=mask, prob=cfg.mask_prob,
                                    whole_word=cfg.whole_word, generator=generator)
        attention = (ids != pad).long() if pad is not None else torch.ones_like(ids)  # sentence windows end in padding
        seen = ~special & (inputs != mask)  # the words the model reads: what it could copy into a blank
        return masked_lm_loss(net, inputs, attention, labels, cfg.unlikelihood, seen)

    def step_loss(net: Any, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        out = mlm_loss(net, batch)
        if senses is None:
            return out
        pairs = senses.loss(hf_states(net), batch["pair"][: cfg.sense_batch])
        return {**out, **{k: v for k, v in pairs.items() if k != "loss"},
                "loss": out["loss"] + cfg.sense_weight * pairs["loss"]}

    def evaluate(net: Any) -> dict[str, float]:
        gen = torch.Generator(device=ctx.device).manual_seed(0)  # the same masks at every evaluation
        loss = correct = top10 = count = 0.0
        for start in range(0, len(eval_ids), cfg.batch_size):
            out = mlm_loss(net, {"ids": eval_ids[start : start + cfg.batch_size]}, gen)
            n = float(out["mlm_count"])
            loss += float(out["mlm_loss"]) * n
            correct += float(out["mlm_correct"])
            top10 += float(out["mlm_top10"])
            count += n
        mean = loss / max(count, 1)
        metrics = {"mlm_loss": mean, "mlm_accuracy": correct / max(count, 1), "mlm_top10": top10 / max(count, 1),
                   "mlm_perplexity": math.exp(min(mean, 50))}
        return {**metrics, **senses.evaluate(hf_states(net))} if senses is not None else metrics

    extra = senses.extra(len(run.windows)) if senses is not None else None
    yield from train_adapted(ctx, "mlm-head", run, step_loss, evaluate, extra, senses.notes if senses else None)


def sense_pairs_for(ctx: TrainContext, run: Adapted) -> Any:
    from engine.training.sense_pairs import SensePairs

    layers, t = int(run.model.config.num_hidden_layers), run.tokenizer
    return SensePairs.build(ctx, layers, layers - ctx.spec.model.train_layers + 1, t.backend_tokenizer, t.cls_token_id,
                            t.sep_token_id, t.pad_token_id if t.pad_token_id is not None else 0)


def run_clm_head(ctx: TrainContext) -> Iterator[TrainEvent]:
    """The encoder made causal and trained to predict the next token (all positions), its layers starting
    from the encoder's. Held-out: loss, perplexity and accuracy per token."""
    from engine.models.masked_lm_head import causal_lm_loss

    cfg = ctx.spec.model
    run = adapt(ctx, "clm-head", lambda t, docs: sentence_windows(docs, cfg.seq_len, int(t.bos_token_id)))
    eval_ids = torch.from_numpy(run.heldout[:EVAL_EXAMPLES]).to(ctx.device)

    def step_loss(net: Any, batch: dict[str, torch.Tensor],
                  generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        return causal_lm_loss(net, batch["ids"].long())

    def evaluate(net: Any) -> dict[str, float]:
        loss = correct = count = 0.0
        for first in range(0, len(eval_ids), cfg.batch_size):
            out = step_loss(net, {"ids": eval_ids[first : first + cfg.batch_size]})
            n = float(out["lm_count"])
            loss += float(out["lm_loss"]) * n
            correct += float(out["lm_correct"])
            count += n
        mean = loss / max(count, 1)
        return {"loss": mean, "perplexity": math.exp(min(mean, 50)), "accuracy": correct / max(count, 1)}

    yield from train_adapted(ctx, "clm-head", run, step_loss, evaluate)
