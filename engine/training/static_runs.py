"""Training recipes of the static families: each ``run(ctx)`` is a generator of events.

All of them read the train part of the corpus, evaluate on the held-out part (or the word-similarity
sets), save into the run folder at each epoch end and when stopped, and resume from
``training_state.pt`` (``training_state.json`` from word2vec run without torch: numpy arrays and the
compiled kernel on a CPU-only machine). The loss is read from the device only when an event is logged.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from engine.checkpoints.reading import read_tensors, read_training_state
from engine.checkpoints.saves import save_run
from engine.data import prefetch
from engine.data.corpora import run_corpus_fields
from engine.data.text import encode_sentences, remap_ids
from engine.data.vocab import Vocab
from engine.errors import CheckpointError, CorpusError
from engine.training.context import TrainContext
from engine.training.events import TrainEvent
from engine.training.hand_loop import HandLoop


def _base_config(ctx: TrainContext, vocab: Vocab, corpus_words: int, metrics: dict[str, Any]) -> dict[str, Any]:
    return {"model": dataclasses.asdict(ctx.spec.model), **run_corpus_fields(ctx.corpus), "corpus_words": corpus_words,
            "vocabulary_size": len(vocab), "device": str(ctx.device), "seed": ctx.spec.seed,
            "trained_steps": ctx.step, "metrics": metrics}


ID_CACHE = ".corpus-ids.int32"  # the training text as word ids, memory-mapped (removed when the run ends)


def _vocab(ctx: TrainContext, sentences: Iterable[list[str]], min_count: int, max_vocab: int | None,
           reserved: tuple[str, ...] = ()) -> Vocab:
    if ctx.spec.resume:
        return Vocab.load(ctx.run_dir / "vocab.txt")
    if isinstance(sentences, list) and not sentences:
        raise CorpusError(f"the corpus '{ctx.corpus.name}' has no text in its training part")
    return Vocab.build(sentences, min_count, max_vocab, reserved)


def _vocab_and_ids(ctx: TrainContext, lowercase: bool, min_count: int, max_vocab: int | None
                   ) -> tuple[Vocab, np.ndarray, np.ndarray]:
    """The vocabulary (built, or the resumed run's) and the training text as its ids, memory-mapped in
    RUN/.corpus-ids.int32, from one pass over the corpus — made by the command's reading process while it
    started (engine.data.prefetch), or read here."""
    text = prefetch.take(ctx.spec.corpus, "train", lowercase, ctx.spec.max_words, ctx.stop)
    if text is None:
        text = prefetch.encode(ctx.sentence_stream("train", lowercase), ctx.run_dir / (ID_CACHE + ".raw"))
    try:
        if ctx.spec.resume:
            vocab = Vocab.load(ctx.run_dir / "vocab.txt")
        elif not text.index:
            raise CorpusError(f"the corpus '{ctx.corpus.name}' has no text in its training part")
        else:
            vocab = Vocab.from_counts(dict(zip(text.index, text.counts.tolist(), strict=True)), min_count, max_vocab)
        mapping = np.array([vocab.index.get(w, -1) for w in text.index], dtype=np.int64)
        ids, starts = remap_ids(text.ids, text.starts, mapping, ctx.run_dir / ID_CACHE)
    finally:
        text.close()
    return vocab, ids, starts


def _quick_similarity(words: list[str], vectors: np.ndarray) -> dict[str, float]:
    from engine.data.evaluation import quick_word_similarity
    from engine.data.keyed_vectors import StaticVectors

    ws = quick_word_similarity(StaticVectors(words, vectors), "wordsim353")
    out = {"wordsim353_coverage": float(ws["coverage"] or 0.0)}
    if ws["spearman"] is not None:
        out["wordsim353"] = float(ws["spearman"])
    return out


# ---------------------------------------------------------------- word2vec

def run_word2vec(ctx: TrainContext) -> Iterator[TrainEvent]:
    cfg = ctx.spec.model
    if ctx.device.type == "cpu":  # the kernel loads (about 15 s the first time, then cached) before the clock
        # starts, while the command's reading process finishes the corpus
        from engine.models.word2vec import cpu as word2vec_cpu

        if word2vec_cpu.available():
            word2vec_cpu.compile_now()
    # the corpus streams once: counted and written as provisional ids, then mapped to the kept words
    vocab, ids, starts = _vocab_and_ids(ctx, cfg.lowercase, cfg.min_count, cfg.max_vocab)
    try:
        yield from _train_word2vec(ctx, vocab, ids, starts)
    finally:  # completed, stopped or failed: a resume encodes the text again
        del ids
        with contextlib.suppress(OSError):
            (ctx.run_dir / ID_CACHE).unlink(missing_ok=True)


def _word2vec_model(ctx: TrainContext, vocab: Vocab) -> tuple[Any, Callable[..., Iterator[dict]]]:
    """The model and its step generator: numpy arrays and the compiled kernel on a run without torch
    (``engine.device.CPU``: a CPU-only machine), else torch tensors (the kernel on their numpy views on a
    CPU, batched steps on a GPU)."""
    from engine.device import CpuDevice

    cfg = ctx.spec.model
    if isinstance(ctx.device, CpuDevice):
        from engine.models.word2vec.arrays import KernelSteps, Word2VecArrays
        from engine.models.word2vec.steps import run_chunks

        arrays = Word2VecArrays(vocab, cfg, ctx.spec.seed)
        return arrays, lambda ids, starts, **kw: run_chunks(arrays, ids, starts, KernelSteps(arrays, kw["seed"]), **kw)
    from engine.models.word2vec.model import Word2VecModel, train_steps

    model = Word2VecModel(vocab, cfg, ctx.device, ctx.spec.seed)
    return model, lambda ids, starts, **kw: train_steps(model, ids, starts, **kw)


def _train_word2vec(ctx: TrainContext, vocab: Vocab, ids: np.ndarray, starts: np.ndarray) -> Iterator[TrainEvent]:
    from engine.device import CpuDevice
    from engine.models.word2vec.steps import chunk_bounds

    cfg = ctx.spec.model
    model, train_steps = _word2vec_model(ctx, vocab)
    start_epoch = start_chunk = 0
    if ctx.spec.resume:
        state = read_training_state(ctx.run_dir)
        from engine.checkpoints.reading import read_config

        framework = "np" if isinstance(ctx.device, CpuDevice) else "pt"
        model.load_tensors(read_tensors(ctx.run_dir, read_config(ctx.run_dir), model.expected_shapes(), framework))
        try:
            start_epoch, start_chunk, ctx.step = int(state["epoch"]), int(state["chunk"]), int(state["step"])
        except (KeyError, TypeError, ValueError):
            raise CheckpointError(f"{ctx.run_dir}: its training state lacks the epoch, chunk and step to resume "
                                  "from") from None
    n_words = len(ids)
    if start_epoch >= cfg.epochs:
        yield ctx.finished("completed", "the run had already finished")
        return
    yield ctx.started(cfg.epochs * n_words, "words", {"vocabulary_size": len(vocab), "corpus_words": n_words})

    def save(position: dict[str, int]) -> None:
        save_run(ctx.run_dir, "word2vec", _base_config(ctx, vocab, n_words, loop.metrics), model.tensors(),
                 files={"vocab.txt": vocab.save}, training_state={**position, "step": ctx.step})

    bounds = chunk_bounds(starts)
    done_before = start_epoch * n_words + (int(starts[bounds[start_chunk][0]]) if start_chunk < len(bounds) else 0)
    loop = HandLoop(ctx, save, model.finite, hint="try a smaller --alpha")
    for info in train_steps(ids, starts, seed=ctx.spec.seed, start_epoch=start_epoch, start_chunk=start_chunk):
        # the loss: numbers from the CPU kernel, 0-d tensors from the GPU steps (read only when logged)
        yield from loop.step(info["step_loss"], info["loss_pairs"], info["epoch"], info["words_done"], info["lr"],
                             done_before)
        if loop.ended:
            return
        if not info["chunk_done"]:
            continue
        epoch, chunk = info["epoch"], info["chunk"] + 1
        if chunk == info["n_chunks"]:
            epoch, chunk = epoch + 1, 0
        position = {"epoch": epoch, "chunk": chunk}
        if chunk == 0:  # an epoch's end: its word similarity, a save, and a stop there if one was asked for
            yield from loop.epoch_end(position, lambda: _quick_similarity(vocab.words, model.word_vectors()),
                                      last=epoch >= cfg.epochs)
        elif ctx.stop.is_set() or loop.past_max_steps():  # mid-epoch: saved where it is
            yield from loop.stop(position)
        if loop.ended:
            return
    yield ctx.finished("completed", metrics=loop.metrics)


# ---------------------------------------------------------------- GloVe

def run_glove(ctx: TrainContext) -> Iterator[TrainEvent]:
    import torch

    from engine.models.glove import GloveModel, cooccurrence, train_steps

    cfg = ctx.spec.model
    vocab, ids, starts = _vocab_and_ids(ctx, cfg.lowercase, cfg.min_count, cfg.max_vocab)  # one corpus pass
    rows, cols, vals = cooccurrence(ids, starts, len(vocab), cfg.window)
    n_words = len(ids)
    del ids
    (ctx.run_dir / ID_CACHE).unlink(missing_ok=True)  # the counts are all GloVe needs
    if len(vals) == 0:
        raise CorpusError("no two known words occur together in the corpus: nothing to fit")
    model = GloveModel(len(vocab), cfg, ctx.spec.seed).to(ctx.device)
    opt = torch.optim.Adagrad(model.parameters(), lr=cfg.learning_rate, initial_accumulator_value=1.0)
    start_epoch = start_batch = 0
    if ctx.spec.resume:
        state = read_training_state(ctx.run_dir)
        model.load_state_dict({k: v.to(ctx.device) for k, v in state["model"].items()})
        opt.load_state_dict(state["optimizer"])
        start_epoch, ctx.step = int(state["epoch"]), int(state["step"])
        start_batch = int(state.get("batch", 0))  # stopped mid-epoch: the rest of that epoch first
    yield ctx.started(cfg.epochs * len(vals), "pairs", {"vocabulary_size": len(vocab), "nonzeros": len(vals)})

    def save(position: dict[str, int]) -> None:
        state = {**position, "step": ctx.step, "model": {k: v.cpu() for k, v in model.state_dict().items()},
                 "optimizer": opt.state_dict()}
        save_run(ctx.run_dir, "glove", _base_config(ctx, vocab, n_words, loop.metrics), {"vectors": model.vectors()},
                 files={"vocab.txt": vocab.save}, training_state=state)

    loop = HandLoop(ctx, save, lambda: bool(np.isfinite(model.vectors()).all()))
    steps = train_steps(model, rows, cols, vals, ctx.device, seed=ctx.spec.seed, start_epoch=start_epoch,
                        optimizer=opt, start_batch=start_batch)
    for info in steps:
        epoch = info["epoch"]
        yield from loop.step(info["step_loss"], info["count"], epoch, info["done"], cfg.learning_rate,
                             log=info["epoch_done"])
        if loop.ended:
            return
        if info["epoch_done"]:
            yield from loop.epoch_end({"epoch": epoch + 1, "batch": 0},
                                      lambda: _quick_similarity(vocab.words, model.vectors()), last=epoch + 1 >= cfg.epochs)
        elif ctx.stop.is_set():  # Ctrl-C mid-epoch: saved where it is, at once (the rest of the epoch on --resume)
            yield from loop.stop({"epoch": epoch, "batch": info["batch"]}, f"at step {ctx.step} (epoch {epoch + 1})")
        if loop.ended:
            return
    yield ctx.finished("completed", metrics=loop.metrics)


# ---------------------------------------------------------------- n-gram

def run_ngram(ctx: TrainContext) -> Iterator[TrainEvent]:
    from engine.models.ngram import RESERVED, UNK, NGramLM

    cfg = ctx.spec.model
    sentences = ctx.sentence_stream("train", cfg.lowercase)  # streamed twice: counted, then encoded
    vocab = _vocab(ctx, sentences, cfg.min_count, None, RESERVED)
    unk = vocab.index[UNK]
    ids, starts = encode_sentences(sentences, vocab.index, unk)  # compact int32, not lists of lists
    if not len(ids):
        raise CorpusError(f"the corpus '{ctx.corpus.name}' has no text in its training part")
    n_words = len(ids)
    yield ctx.started(n_words, "words", {"vocabulary_size": len(vocab)})
    lm = NGramLM(vocab, cfg).fit_flat(ids, starts)
    del ids, starts
    ctx.step = 1
    heldout = [[vocab.index.get(w, unk) for w in s] for s in ctx.sentences("heldout", cfg.lowercase)]
    metrics = {"heldout_perplexity": lm.perplexity(heldout)} if heldout else {}
    yield ctx.step_metrics(0, n_words, float("nan"), 0.0)
    yield ctx.eval_metrics(metrics)
    save_run(ctx.run_dir, "ngram", _base_config(ctx, vocab, n_words, metrics), lm.tensors(), files={"vocab.txt": vocab.save})
    yield ctx.saved()
    yield ctx.finished("completed", metrics=metrics)


# ---------------------------------------------------------------- NNLM

def run_nnlm(ctx: TrainContext) -> Iterator[TrainEvent]:
    """Bengio's NNLM as a recipe of the one gradient loop (engine.training.pretrain): AdamW, clipping,
    mixed precision, a resume mid-epoch, the held-out perplexity at the end."""
    import torch

    from engine.models.ngram import BOS, EOS, RESERVED, UNK
    from engine.models.nnlm import NNLM, flat_windows, perplexity
    from engine.training.pretrain import Recipe, pretrain

    cfg = ctx.spec.model
    sentences = ctx.sentence_stream("train", cfg.lowercase)  # streamed twice: counted, then encoded
    vocab = _vocab(ctx, sentences, cfg.min_count, cfg.max_vocab, RESERVED)
    unk, bos, eos = vocab.index[UNK], vocab.index[BOS], vocab.index[EOS]
    ids, starts = encode_sentences(sentences, vocab.index, unk)
    if not len(ids):
        raise CorpusError(f"the corpus '{ctx.corpus.name}' has no text in its training part")
    heldout = [[vocab.index.get(w, unk) for w in s] for s in ctx.sentences("heldout", cfg.lowercase)]
    hist_np, target_np = flat_windows(ids, starts, cfg.context, bos, eos)
    n_words = len(ids)
    del ids, starts
    data = {"hist": torch.from_numpy(hist_np).to(ctx.device), "target": torch.from_numpy(target_np).to(ctx.device)}

    def step_loss(model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {"loss": torch.nn.functional.cross_entropy(model(batch["hist"]).float(), batch["target"])}

    network = NNLM(len(vocab), cfg)

    def evaluate(model: torch.nn.Module) -> dict[str, float]:
        return {"heldout_perplexity": perplexity(network, heldout, bos, eos, ctx.device)} if heldout else {}

    # torch's AdamW moments (0.9, 0.999), as NNLM's own loop had: a rare word's row keeps its second
    # moment between its sightings (BERT's 0.98 forgot it and gave rare words large steps: perplexity 166
    # against 162 on bench/quality/language_models.py)
    recipe = Recipe("nnlm", network, len(target_np), 1.0, lambda epoch: data, step_loss, evaluate,
                    {"vocab.txt": vocab.save}, {"corpus_words": n_words, "vocabulary_size": len(vocab)},
                    betas=(0.9, 0.999), eps=1e-8)
    yield from pretrain(ctx, recipe)
