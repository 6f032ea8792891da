"""Tokenizers: a word-level tokenizer for the static models, and WordPiece / byte-level BPE
trained with Hugging Face ``tokenizers`` for the contextual ones (saved as tokenizer.json).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

_WORD = re.compile(r"\w+(?:[-'.]\w+)*|[^\w\s]")

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def word_tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Split text into words and punctuation: "Don't stop." -> ["don't", "stop", "."]."""
    if lowercase:
        text = text.lower()
    return _WORD.findall(text)


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the words of ``text`` (as shown to users; the same split as word_tokenize)."""
    return [m.span() for m in _WORD.finditer(text)]


def tokenized_sentences(sentences: Iterable[str], lowercase: bool = True, max_words: int | None = None
                        ) -> Iterator[list[str]]:
    """The non-empty sentences as words, stopping once ``max_words`` words have been given."""
    n = 0
    for s in sentences:
        words = word_tokenize(s, lowercase)
        if words:
            yield words
            n += len(words)
            if max_words is not None and n >= max_words:
                return


def encode_sentences(
    sentences: Iterable[list[str]], index: dict[str, int], unk: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Map tokenized sentences to one flat int32 id array and the start offset of each sentence.

    Words missing from ``index`` are dropped (word2vec, GloVe) or mapped to ``unk`` (language models).
    Returns ``(ids, starts)`` with ``starts[-1] == len(ids)``.
    """
    chunks: list[np.ndarray] = []
    starts = [0]
    total = 0
    get = index.get
    for words in sentences:
        if unk is None:
            ids = [i for i in map(get, words) if i is not None]
        else:
            ids = [get(w, unk) for w in words]
        if not ids:
            continue
        chunks.append(np.asarray(ids, dtype=np.int32))
        total += len(ids)
        starts.append(total)
    flat = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int32)
    return flat, np.asarray(starts, dtype=np.int64)


def count_and_encode(sentences: Iterable[list[str]], path: Path, block: int = 1 << 20
                     ) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
    """One pass over tokenized sentences: every word gets a provisional id in order of first sight, the ids
    go to ``path`` in blocks, the words are counted. Returns (word -> provisional id, counts (W,),
    ids memory-mapped, sentence starts); ``remap_ids`` then keeps the words a vocabulary keeps.

    Per block, only the block's distinct words are looked at in Python; the ids come from a C-level
    ``map`` over the dictionary and the counts from ``np.bincount`` (a per-word Python loop took 1.2 s
    of a 1-epoch word2vec run's 6 s on the default corpus)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    index: dict[str, int] = {}
    counts = np.zeros(0, dtype=np.int64)
    starts = [0]
    total = 0
    pending: list[str] = []

    def flush(f: Any) -> None:
        nonlocal counts
        for w in dict.fromkeys(pending):  # the block's distinct words, in first-sight order
            if w not in index:
                index[w] = len(index)
        ids = np.fromiter(map(index.__getitem__, pending), dtype=np.int32, count=len(pending))
        f.write(ids.tobytes())
        block_counts = np.bincount(ids, minlength=len(index)) if len(ids) else np.zeros(len(index), np.int64)
        counts = np.concatenate([counts, np.zeros(len(index) - len(counts), np.int64)]) + block_counts
        pending.clear()

    with open(path, "wb") as f:
        for words in sentences:
            pending.extend(words)
            total += len(words)
            starts.append(total)
            if len(pending) >= block:
                flush(f)
        flush(f)
    ids = np.memmap(path, dtype=np.int32, mode="r", shape=(total,)) if total else np.zeros(0, np.int32)
    return index, counts, ids, np.asarray(starts, dtype=np.int64)


def remap_ids(ids: np.ndarray, starts: np.ndarray, mapping: np.ndarray, path: Path, block: int = 1 << 24
              ) -> tuple[np.ndarray, np.ndarray]:
    """Provisional ids -> final ids (``mapping``: -1 drops a word), written to ``path`` block by block and
    memory-mapped; sentences left empty are dropped. The same result as ``encode_sentences`` with the final
    vocabulary, from one corpus pass instead of two, and never all in memory."""
    kept_before = np.zeros(len(starts), dtype=np.int64)  # kept tokens before each sentence start
    running = 0
    with open(path, "wb") as f:
        for a in range(0, max(len(ids), 1), block):
            chunk = mapping[np.asarray(ids[a : a + block])]
            keep = chunk >= 0
            f.write(chunk[keep].astype(np.int32).tobytes())
            prefix = np.concatenate([[0], np.cumsum(keep)]) + running
            inside = (starts >= a) & (starts <= a + len(chunk))
            kept_before[inside] = prefix[starts[inside] - a]
            running = int(prefix[-1])
    lengths = np.diff(kept_before)
    new_starts = np.concatenate([[0], np.cumsum(lengths[lengths > 0])]).astype(np.int64)
    out = np.memmap(path, dtype=np.int32, mode="r", shape=(running,)) if running else np.zeros(0, np.int32)
    return out, new_starts


def train_subword_tokenizer(
    sentences: Iterable[str],
    kind: str = "wordpiece",
    vocab_size: int = 8000,
    lowercase: bool = True,
    min_frequency: int = 2,
):
    """Train a WordPiece (BERT-style, with [CLS]/[SEP]/[MASK]/[PAD]) or byte-level BPE (GPT-style)
    tokenizer on any stream of sentences. Returns a ``tokenizers.Tokenizer``; save it with
    ``tokenizer.save(run_dir / "tokenizer.json")``."""
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )

    if kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        norm = [normalizers.NFD(), normalizers.StripAccents()]
        if lowercase:
            norm.insert(0, normalizers.Lowercase())
        tok.normalizer = normalizers.Sequence(norm)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(
            vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=SPECIAL_TOKENS
        )
        tok.train_from_iterator(sentences, trainer=trainer)
        cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
        )
        return tok
    if kind == "bpe":
        tok = Tokenizer(models.BPE())
        if lowercase:
            tok.normalizer = normalizers.Lowercase()
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(  # type: ignore[assignment]
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        tok.train_from_iterator(sentences, trainer=trainer)
        return tok
    raise ValueError(f"unknown tokenizer kind '{kind}' (wordpiece or bpe)")


def load_subword_tokenizer(path: str | Path):
    """A ``tokenizers`` tokenizer.json: a regular file of a sane size, or a ``CheckpointError`` saying why not."""
    import stat

    from tokenizers import Tokenizer

    from engine.errors import CheckpointError

    path = Path(path)
    try:
        info = path.stat()
    except OSError:
        raise CheckpointError(f"{path} is missing: the run folder has no tokenizer") from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > 200 * 2**20:
        raise CheckpointError(f"{path} is not a tokenizer file (not a regular file, or over 200 MB)")
    try:
        return Tokenizer.from_file(str(path))
    except Exception as e:  # tokenizers raises a bare Exception for a damaged file
        raise CheckpointError(f"{path} is not a valid tokenizer file ({e})") from None
