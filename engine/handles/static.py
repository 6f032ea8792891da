"""Loaders of the run folders of the static families and word-level language models: word2vec, GloVe,
n-gram and NNLM, each into a ``BaseHandle``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.checkpoints.reading import check_shapes, read_tensors
from engine.config.checks import config_from_dict
from engine.data.keyed_vectors import StaticVectors
from engine.data.vocab import Vocab
from engine.handles.base import BaseHandle, run_info
from engine.handles.continuation import last_sentence, next_words


def load_word2vec(run_dir: Path, config: dict) -> BaseHandle:
    from engine.models.word2vec.subwords import ngram_rows

    cfg = config_from_dict("word2vec", config["model"])
    vocab = Vocab.load(run_dir / "vocab.txt")
    rows = len(vocab) + (cfg.subword_buckets + 1 if cfg.subword_buckets else 0)
    out_rows = max(len(vocab) - 1, 1) if cfg.hs else len(vocab)
    expected = {"vectors": (len(vocab), cfg.vector_size), "syn0": (rows, cfg.vector_size), "syn1": (out_rows, cfg.vector_size)}
    if config.get("weights") == "inference":  # a slim copy (word2bert-export --to slim): no training matrices
        expected = {k: v for k, v in expected.items() if k == "vectors" or (k == "syn0" and cfg.subword_buckets)}
    tensors = read_tensors(run_dir, config, expected)
    vectors = tensors["vectors"].float().numpy()
    oov = None
    if cfg.subword_buckets:
        syn0 = tensors["syn0"].float().numpy()
        size = len(vocab)  # (not the Vocab itself: it would keep its list and dict of every word alive)

        def oov(word: str) -> np.ndarray | None:
            grams = ngram_rows(word, cfg, size)
            return syn0[grams].mean(0) if grams else None

    return BaseHandle("word2vec", run_dir.name, str(run_dir), run_info(run_dir, config),
                       vectors=StaticVectors(vocab.words, vectors, run_dir.name, oov, counts=vocab.counts),
                       lowercase=cfg.lowercase, subwords=bool(cfg.subword_buckets))


def load_glove(run_dir: Path, config: dict) -> BaseHandle:
    cfg = config_from_dict("glove", config["model"])
    vocab = Vocab.load(run_dir / "vocab.txt")
    tensors = read_tensors(run_dir, config, {"vectors": (len(vocab), cfg.vector_size)})
    return BaseHandle("glove", run_dir.name, str(run_dir), run_info(run_dir, config),
                       vectors=StaticVectors(vocab.words, tensors["vectors"].float().numpy(), run_dir.name,
                                             counts=vocab.counts),
                       lowercase=cfg.lowercase)


def load_ngram(run_dir: Path, config: dict) -> BaseHandle:
    from engine.models.ngram import UNK, NGramLM

    cfg = config_from_dict("ngram", config["model"])
    vocab = Vocab.load(run_dir / "vocab.txt")
    tensors = read_tensors(run_dir, config)
    sizes = NGramLM.sizes_of(tensors, cfg.order, len(vocab))
    check_shapes(tensors, NGramLM.tensor_shapes(cfg.order, sizes, pruned="discount" in tensors,
                                                keys="order1.keys" in tensors), str(run_dir))
    lm = NGramLM(vocab, cfg)
    lm.load_tensors({k: v.numpy() for k, v in tensors.items()})
    unk = vocab.index[UNK]

    def scorer(sentences: list[list[str]]) -> list[np.ndarray]:
        return lm.token_logprobs([[vocab.index.get(w, unk) for w in s] for s in sentences])

    def log_probs(context: list[str]) -> np.ndarray:  # (it reads one sentence: the last begun)
        return lm.next_word_logprobs([vocab.index.get(w, unk) for w in last_sentence(context)])

    info = run_info(run_dir, config) | {"order": cfg.order, "smoothing": cfg.smoothing}
    return BaseHandle("ngram", run_dir.name, str(run_dir), info, scorer=scorer, lowercase=cfg.lowercase,
                      knows=vocab.index.__contains__, next_words=next_words(vocab.words, vocab.index.get, log_probs))


def load_nnlm(run_dir: Path, config: dict) -> BaseHandle:
    import torch

    from engine.handles.nnlm import NnlmHandle
    from engine.models.ngram import BOS, EOS, UNK
    from engine.models.nnlm import NNLM, next_word_logprobs, token_logprobs

    cfg = config_from_dict("nnlm", config["model"])
    vocab = Vocab.load(run_dir / "vocab.txt")
    model = NNLM(len(vocab), cfg)
    state = model.state_dict()
    tensors = read_tensors(run_dir, config, {k: tuple(v.shape) for k, v in state.items()})
    model.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=True)
    model.eval()
    device = torch.device("cpu")
    unk, bos, eos = vocab.index[UNK], vocab.index[BOS], vocab.index[EOS]

    def scorer(sentences: list[list[str]]) -> list[np.ndarray]:
        return token_logprobs(model, [[vocab.index.get(w, unk) for w in s] for s in sentences], bos, eos, device)

    def log_probs(context: list[str]) -> np.ndarray:  # (it reads the last words of one sentence: the last begun)
        return next_word_logprobs(model, [vocab.index.get(w, unk) for w in last_sentence(context)], bos, device)

    keep = [i for i, w in enumerate(vocab.words) if w not in (UNK, BOS, EOS)]
    vectors = StaticVectors([vocab.words[i] for i in keep], model.C.weight.detach().numpy()[keep], run_dir.name,
                            counts=vocab.counts[keep])
    return NnlmHandle(run_dir.name, str(run_dir), run_info(run_dir, config), model, vocab.index, vocab.words,
                      vectors=vectors, scorer=scorer, lowercase=cfg.lowercase, knows=vocab.index.__contains__,
                      next_words=next_words(vocab.words, vocab.index.get, log_probs))
