"""Training recipes of the contextual families (BERT, GPT, ELMo) for the loop in pretrain.py.

Each builds (or, on resume, reloads) its tokenizer from the run folder, turns the corpus's train part
into example tensors on the device, and evaluates on the held-out part: MLM loss/accuracy and NSP
accuracy for BERT, perplexity per token for GPT and ELMo.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch import nn

from engine.data.inputs import byte_level
from engine.data.inputs import separator as separator_token
from engine.data.text import load_subword_tokenizer, train_subword_tokenizer
from engine.errors import CheckpointError, CorpusError, InputError
from engine.training import continued, distributed
from engine.training.context import TrainContext
from engine.training.continued import Source, earlier_start
from engine.training.events import TrainEvent
from engine.training.init_embeddings import init_token_embeddings
from engine.training.pretrain import Recipe, pretrain
from engine.training.pretrain_data import bert_pairs, encode_documents, token_windows, word_windows
from engine.training.teacher import (
    MaskedLMTeacher,
    Teacher,
    is_masked_lm_run,
    student_words,
    teacher_vocabulary,
)

EVAL_EXAMPLES = 256
TOKENIZER = "tokenizer.json"


def _train_docs(ctx: TrainContext) -> list:
    docs = list(ctx.corpus.documents("train"))
    if not docs:
        raise CorpusError(f"the corpus '{ctx.corpus.name}' has no text")
    return docs


def _tokenizer(ctx: TrainContext, docs: list, kind: str, vocab_size: int, lowercase: bool,
               earlier: Source | None = None) -> Any:
    """Train the sub-word tokenizer on the train part (rank 0), or take the one of the run this one goes on
    from, or reload it when resuming."""
    path = ctx.run_dir / TOKENIZER
    if earlier is not None and distributed.is_main():
        tok = load_subword_tokenizer(earlier.file(str(earlier.config.get("tokenizer") or TOKENIZER)))
        ctx.run_dir.mkdir(parents=True, exist_ok=True)
        tok.save(str(path))
    elif not ctx.spec.resume and distributed.is_main():
        budget = ctx.spec.max_words

        def sentences() -> Iterator[str]:
            n = 0
            for doc in docs:
                yield from doc.sentences
                n += sum(len(s.split()) for s in doc.sentences)
                if budget and n >= budget:
                    return

        ctx.run_dir.mkdir(parents=True, exist_ok=True)
        train_subword_tokenizer(sentences(), kind, vocab_size, lowercase).save(str(path))
    distributed.barrier()
    return load_subword_tokenizer(path)


def _teacher_tokenizer(ctx: TrainContext, teacher: Any) -> tuple[Any, np.ndarray]:
    """A student of a masked-LM teacher takes its WordPiece (reordered, engine/training/teacher.py); saved
    in the run folder like a trained one, reloaded when resuming. Returns (tokenizer, student id -> teacher id)."""
    path = ctx.run_dir / TOKENIZER
    tok, to_teacher = teacher_vocabulary(teacher.tokenizer_json)
    if not ctx.spec.resume and distributed.is_main():
        ctx.run_dir.mkdir(parents=True, exist_ok=True)
        tok.save(str(path))
    distributed.barrier()
    saved = load_subword_tokenizer(path)
    if saved.get_vocab() != tok.get_vocab():
        raise CheckpointError(f"{path} is not the vocabulary of the teacher {teacher.name!r}")
    return saved, to_teacher


def _began(ctx: TrainContext, earlier: Source | None, fresh: Any) -> dict[str, Any]:
    """The config.json fields of how the run began: from an earlier run, or ``fresh()`` (GloVe embeddings, or
    nothing); a resumed run keeps what its first segment recorded."""
    if ctx.spec.resume:
        return earlier_start(ctx.run_dir)
    return earlier.started() if earlier is not None else fresh()


def _heldout_docs(ctx: TrainContext, tokenizer: Any, spaced: bool = False) -> list:
    docs, _ = encode_documents(ctx.corpus.documents("heldout"), tokenizer, max_words=60_000, spaced=spaced)
    return docs


def _batches(data: dict[str, torch.Tensor], size: int) -> Iterator[dict[str, torch.Tensor]]:
    n = next(iter(data.values())).shape[0]
    for i in range(0, n, size):
        yield {k: v[i : i + size] for k, v in data.items()}


def _device_tensors(arrays: dict[str, np.ndarray], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(v).to(device) for k, v in arrays.items()}


# ---------------------------------------------------------------- BERT

def run_bert(ctx: TrainContext) -> Iterator[TrainEvent]:
    from engine.models.bert import IGNORE, Bert, mask_tokens
    from engine.models.distill import (
        DistilledBert,
        WordDistillation,
        layer_pairs,
        pool_words,
        word_index,
    )
    from engine.models.masking import mask_words

    ctx.device = distributed.setup(ctx.device)
    cfg = ctx.spec.model
    earlier = continued.source("bert", cfg, ctx.spec.resume)  # (its architecture now cfg's)
    if cfg.seq_len > cfg.max_len:
        raise ValueError(f"seq_len {cfg.seq_len} exceeds the position table (max_len {cfg.max_len})")
    docs = _train_docs(ctx)
    mlm_teacher = MaskedLMTeacher(cfg.teacher, ctx.device) if cfg.teacher and is_masked_lm_run(cfg.teacher) else None
    teacher = Teacher(cfg.teacher, ctx.device) if cfg.teacher and mlm_teacher is None else None
    source = mlm_teacher if mlm_teacher is not None else teacher  # whose states the student learns
    if source is not None and cfg.distill_map == "identity" and cfg.hidden != source.dim:
        raise InputError(f"distill_map identity needs the student as wide as its teacher {cfg.teacher!r}: hidden "
                         f"{cfg.hidden}, teacher {source.dim} (set --hidden {source.dim}, or --distill-map linear)")
    if mlm_teacher is not None:  # the student reads and predicts in its teacher's vocabulary
        tok, to_teacher_ids = _teacher_tokenizer(ctx, mlm_teacher)
        to_teacher = torch.from_numpy(to_teacher_ids).to(ctx.device)
    else:
        tok = _tokenizer(ctx, docs, "wordpiece", cfg.vocab_size, cfg.lowercase, earlier)
    cfg.vocab_size = tok.get_vocab_size()
    pad, cls, sep, mask = (tok.token_to_id(t) for t in ("[PAD]", "[CLS]", "[SEP]", "[MASK]"))
    first_normal = 5  # ids 0-4 are [PAD] [UNK] [CLS] [SEP] [MASK]
    train_docs, n_tokens = encode_documents(docs, tok, ctx.spec.max_words)
    heldout = _heldout_docs(ctx, tok) or train_docs[:20]

    def pairs(doc_list: list, seed: int) -> dict[str, np.ndarray]:
        out = bert_pairs(doc_list, cfg.seq_len, np.random.default_rng(seed), cls_id=cls, sep_id=sep, pad_id=pad,
                         nsp=cfg.nsp)
        return {k: out[k] for k in ("ids", "segments", "is_next")}

    first = pairs(train_docs, ctx.spec.seed * 7919)
    eval_data = _device_tensors({k: v[:EVAL_EXAMPLES] for k, v in pairs(heldout, 12345).items()}, ctx.device)

    senses = None
    if cfg.sense_pairs:  # word senses taught directly: pairs ride along each step's examples
        from engine.training.sense_pairs import SensePairs

        senses = SensePairs.build(ctx, cfg.layers, 1, tok, cls, sep, pad, min(96, cfg.max_len))

    def epoch_data(epoch: int) -> dict[str, torch.Tensor]:
        data = _device_tensors(first if epoch == 0 else pairs(train_docs, ctx.spec.seed * 7919 + epoch), ctx.device)
        if senses is not None:
            data.update(senses.extra(len(data["ids"]), epoch)["data"])
        return data

    distillation_pairs = layer_pairs(cfg.layers, source.layers) if source is not None else []
    vocabulary = [tok.id_to_token(i) for i in range(cfg.vocab_size)]
    continuation = torch.tensor([t.startswith("##") for t in vocabulary], device=ctx.device)
    ordinary = torch.arange(first_normal, cfg.vocab_size, device=ctx.device)
    model = Bert(cfg)
    if earlier is not None:
        earlier.load_into(model)
    started = _began(ctx, earlier, lambda: init_token_embeddings(model.token_emb, tok, cfg.init_embeddings, ctx.spec.seed))

    def step_loss(model: nn.Module, batch: dict[str, torch.Tensor],
                  generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        out = pretraining_loss(model, batch, generator)
        if senses is None or "pair" not in batch:
            return out
        pairs = senses.loss(bert_states(model), batch["pair"][: cfg.sense_batch])
        return {**out, **{k: v for k, v in pairs.items() if k != "loss"},
                "loss": out["loss"] + cfg.sense_weight * pairs["loss"]}

    def pretraining_loss(model: nn.Module, batch: dict[str, torch.Tensor],
                         generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        ids = batch["ids"].long()
        if cfg.whole_word:
            inputs, labels = mask_words(ids, ids < first_normal, continuation, ordinary, mask_id=mask,
                                        prob=cfg.mask_prob, generator=generator)
        else:
            inputs, labels = mask_tokens(ids, ids < first_normal, mask_id=mask, vocab_size=cfg.vocab_size,
                                         first_normal=first_normal, prob=cfg.mask_prob, generator=generator)
        is_next = batch["is_next"] if cfg.nsp else None
        if teacher is None and mlm_teacher is None:
            return model(inputs, batch["segments"].long(), ids != pad, labels, is_next)
        layers = [j for _, j in distillation_pairs]
        if mlm_teacher is not None:  # the same masked text, the same tokens: its predictions and its states
            index, lengths = word_index(ids, ids < first_normal, continuation)  # on the device: no host round trip
            soft, states = mlm_teacher.read(to_teacher[inputs], ids != pad, labels != IGNORE, layers)
            soft = soft[:, to_teacher]  # (M, V_student): the teacher's scores of the student's pieces
            n_words = ids.shape[1]  # at most one word per token; the rest is left out by ``valid``
            valid = torch.arange(n_words, device=ids.device)[None] < lengths[:, None]
            targets = [pool_words(state, index, n_words) for state in states]
            return model(inputs, batch["segments"].long(), ids != pad, labels, is_next, index, targets, valid, soft)
        # an encoder teacher reads the unmasked words (spelled on the host for its own tokenizer); the student
        # learns its states from the masked text
        assert teacher is not None
        host_index, words = student_words(ids.cpu().numpy(), vocabulary, set(range(first_normal)))
        targets, valid = teacher.word_states(words, layers)
        return model(inputs, batch["segments"].long(), ids != pad, labels, is_next,
                     torch.from_numpy(host_index).to(ids.device), targets, valid)

    def evaluate(model: nn.Module) -> dict[str, float]:
        gen = torch.Generator(device=ctx.device).manual_seed(0)  # the same masks at every evaluation
        loss = correct = count = nsp_correct = n = distill = soft = 0.0
        for batch in _batches(eval_data, cfg.batch_size):
            out = step_loss(model, batch, gen)
            distill += float(out.get("distill_loss", 0.0)) * batch["ids"].shape[0]
            soft += float(out.get("soft_loss", 0.0)) * batch["ids"].shape[0]
            loss += float(out["mlm_loss"]) * float(out["mlm_count"])
            correct += float(out["mlm_correct"])
            count += float(out["mlm_count"])
            if "nsp_correct" in out:
                nsp_correct += float(out["nsp_correct"])
            n += batch["ids"].shape[0]
        result = {"mlm_loss": loss / max(count, 1), "mlm_accuracy": correct / max(count, 1)}
        result["mlm_perplexity"] = math.exp(min(result["mlm_loss"], 50))
        if cfg.nsp:
            result["nsp_accuracy"] = nsp_correct / max(n, 1)
        if source is not None:
            result["distill_loss"] = distill / max(n, 1)
        if mlm_teacher is not None:
            result["soft_loss"] = soft / max(n, 1)
        if senses is not None:
            result.update(senses.evaluate(bert_states(model)))
        return result

    net: nn.Module = model
    notes: list[str] = earlier.notes if earlier is not None else []
    if source is not None:  # only the student is saved; the maps to the teacher's space exist for training
        net = DistilledBert(model, WordDistillation(cfg.hidden, source.dim, distillation_pairs, cfg.distill_map == "identity"),
                            cfg.distill_weight,
                            cfg.soft_weight if mlm_teacher is not None else 0.0, cfg.temperature)
        started = {**started, "distilled_from": cfg.teacher, "distill_layers": distillation_pairs,
                   "distill_map": cfg.distill_map}
        if mlm_teacher is not None:
            started = {**started, "soft_targets_from": cfg.teacher, "vocabulary_from": cfg.teacher,
                       "teacher_save_id": mlm_teacher.save_id}
            notes = notes + _teacher_changed(ctx, mlm_teacher.save_id)
    recipe = Recipe("bert", net, len(first["ids"]), cfg.seq_len, epoch_data, step_loss, evaluate,
                    {TOKENIZER: lambda p: tok.save(str(p))},
                    {"corpus_tokens": n_tokens, "vocabulary_size": cfg.vocab_size, "tokenizer": TOKENIZER, **started,
                     **(senses.config if senses is not None else {})},
                    weights=model.state_dict if source is not None else None,
                    notes=notes + (senses.notes if senses is not None else []))
    yield from pretrain(ctx, recipe)


def bert_states(net: nn.Module) -> Any:
    """The sense loss's ``Encode`` of our BERT (or of the student inside a distillation)."""
    bert: Any = getattr(net, "student", net)

    def encode(ids: torch.Tensor, attention: torch.Tensor) -> list[torch.Tensor]:
        return bert.encode(ids, None, attention)[0]
    return encode


def _teacher_changed(ctx: TrainContext, save_id: str) -> list[str]:
    """A resumed student whose masked-LM teacher was saved again since (a shipped name remade, a run
    trained further): it goes on learning from the new one — said, since the run's earlier steps learned
    from the old."""
    if not ctx.spec.resume:
        return []
    from engine.checkpoints.reading import read_config

    before = read_config(ctx.run_dir).get("teacher_save_id")
    if not before or before == save_id:
        return []
    return [f"the teacher {ctx.spec.model.teacher!r} was saved again since this run last learned from it "
            f"(save {str(before)[:8]} → {save_id[:8]}): the steps from here learn from the new one"]


# ---------------------------------------------------------------- GPT

def run_gpt(ctx: TrainContext) -> Iterator[TrainEvent]:
    from engine.models.gpt import GPT

    ctx.device = distributed.setup(ctx.device)
    cfg = ctx.spec.model
    earlier = continued.source("gpt", cfg, ctx.spec.resume)  # (its architecture now cfg's)
    if cfg.seq_len > cfg.max_len:
        raise ValueError(f"seq_len {cfg.seq_len} exceeds the position table (max_len {cfg.max_len})")
    docs = _train_docs(ctx)
    tok = _tokenizer(ctx, docs, cfg.tokenizer, cfg.vocab_size, cfg.lowercase, earlier)
    cfg.vocab_size = tok.get_vocab_size()
    separator = tok.token_to_id(separator_token(cfg.tokenizer == "bpe"))
    spaced = byte_level(tok)  # (a document's sentences one after another, as text: "day. She")
    train_docs, n_tokens = encode_documents(docs, tok, ctx.spec.max_words, spaced=spaced)
    windows = token_windows(train_docs, cfg.seq_len, separator)
    heldout = token_windows(_heldout_docs(ctx, tok, spaced), cfg.seq_len, separator)
    if len(heldout) == 0:
        heldout = windows[:8]
    train_data = _device_tensors({"w": windows}, ctx.device)
    eval_data = _device_tensors({"w": heldout[:EVAL_EXAMPLES]}, ctx.device)

    def step_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        w = batch["w"].long()
        return model(w[:, :-1], w[:, 1:])

    def evaluate(model: nn.Module) -> dict[str, float]:
        total = count = 0.0
        for batch in _batches(eval_data, cfg.batch_size):
            k = batch["w"].shape[0] * cfg.seq_len
            total += float(step_loss(model, batch)["loss"]) * k
            count += k
        loss = total / max(count, 1)
        return {"loss": loss, "perplexity": math.exp(min(loss, 50))}

    model = GPT(cfg)
    if earlier is not None:
        earlier.load_into(model)
    started = _began(ctx, earlier, lambda: init_token_embeddings(model.token_emb, tok, cfg.init_embeddings, ctx.spec.seed))
    recipe = Recipe("gpt", model, len(windows), cfg.seq_len, lambda epoch: train_data, step_loss, evaluate,
                    {TOKENIZER: lambda p: tok.save(str(p))},
                    {"corpus_tokens": n_tokens, "vocabulary_size": cfg.vocab_size, "tokenizer": TOKENIZER,
                     "sentences_spaced": spaced, **started},
                    notes=earlier.notes if earlier is not None else [])
    yield from pretrain(ctx, recipe)


# ---------------------------------------------------------------- ELMo

def run_elmo(ctx: TrainContext) -> Iterator[TrainEvent]:
    from engine.data.vocab import Vocab
    from engine.models.elmo import BiLM, word_chars
    from engine.models.ngram import RESERVED, UNK

    ctx.device = distributed.setup(ctx.device)
    cfg = ctx.spec.model
    earlier = continued.source("elmo", cfg, ctx.spec.resume)  # (its architecture now cfg's)
    sentences = ctx.sentences("train", cfg.lowercase)
    if not sentences:
        raise CorpusError(f"the corpus '{ctx.corpus.name}' has no text")
    if earlier is not None:  # its words: the output layer's rows are theirs
        vocab = Vocab.load(earlier.file("vocab.txt"))
    elif ctx.spec.resume:
        vocab = Vocab.load(ctx.run_dir / "vocab.txt")
    else:
        vocab = Vocab.build(sentences, cfg.min_count, cfg.max_vocab, RESERVED)
    unk = vocab.index[UNK]
    types: dict[str, int] = {}
    win_in, win_out, _ = word_windows(sentences, cfg.seq_len, types, vocab.index, unk)
    held_in, held_out, _ = word_windows(ctx.sentences("heldout", cfg.lowercase), cfg.seq_len, types, vocab.index, unk)
    if len(held_in) == 0:
        held_in, held_out = win_in[:8], win_out[:8]
    chars = torch.tensor([word_chars(w, cfg.max_chars) for w in types], dtype=torch.int16, device=ctx.device)
    n_words = sum(len(s) for s in sentences)
    del sentences
    train_data = _device_tensors({"inp": win_in, "out": win_out}, ctx.device)
    eval_data = _device_tensors({"inp": held_in[:EVAL_EXAMPLES], "out": held_out[:EVAL_EXAMPLES]}, ctx.device)

    def step_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        word_chars_batch = chars[batch["inp"][:, 1:-1].long()].long()  # (B, T, C)
        out = batch["out"].long()
        return model(word_chars_batch, out[:, 2:], out[:, :-2])

    def evaluate(model: nn.Module) -> dict[str, float]:
        f = b = n = 0.0
        for batch in _batches(eval_data, cfg.batch_size):
            out = step_loss(model, batch)
            k = batch["inp"].shape[0]
            f += float(out["forward_loss"]) * k
            b += float(out["backward_loss"]) * k
            n += k
        f, b = f / max(n, 1), b / max(n, 1)
        return {"loss": (f + b) / 2,  # nats a word, the mean of both directions: the training loss's scale
                "forward_perplexity": math.exp(min(f, 50)), "backward_perplexity": math.exp(min(b, 50)),
                "perplexity": math.exp(min((f + b) / 2, 50))}

    model = BiLM(cfg, len(vocab))
    if earlier is not None:
        earlier.load_into(model)
    recipe = Recipe("elmo", model, len(win_in), cfg.seq_len, lambda epoch: train_data, step_loss,
                    evaluate, {"vocab.txt": vocab.save},
                    {"corpus_words": n_words, "vocabulary_size": len(vocab), **_began(ctx, earlier, dict)},
                    notes=earlier.notes if earlier is not None else [])
    yield from pretrain(ctx, recipe)
