"""Training examples of the contextual models, built from a corpus's documents on the CPU as
int32 arrays (moved to the device once per epoch, then sliced per step: no per-step host work).

* BERT: sentence pairs ``[CLS] A [SEP] B [SEP]`` where B is the true continuation of A in the same
  document half the time and text from another document otherwise (the next-sentence task);
  masking happens on the device at each step (engine.models.bert.mask_tokens).
* GPT: the token stream of all documents, each ended by a separator, cut into windows.
* ELMo: the word stream (sentences wrapped in <s> ... </s>) cut into windows.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

Document = list[np.ndarray]  # one int32 array of token ids per sentence


def encode_documents(docs: Iterable, tokenizer, max_words: int | None = None, spaced: bool = False
                     ) -> tuple[list[Document], int]:
    """Sub-word ids (no special tokens) of every sentence; stops after ``max_words`` words. ``spaced``: each
    sentence after a document's first begins with the space that parts it from the one before (a byte-level
    tokenizer keeps spaces: read one after another, the sentences are then the document's text, "day. She",
    not "day.She"). Returns the documents and the number of sub-word tokens."""
    out: list[Document] = []
    words = tokens = 0
    for doc in docs:
        texts = list(doc.sentences)
        if spaced:
            texts[1:] = [" " + t for t in texts[1:]]
        encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
        sentences = [np.asarray(e.ids, dtype=np.int32) for e in encodings if e.ids]
        if sentences:
            out.append(sentences)
            tokens += sum(len(s) for s in sentences)
        words += sum(len(s.split()) for s in doc.sentences)
        if max_words is not None and words >= max_words:
            break
    return out, tokens


def bert_pairs(docs: list[Document], seq_len: int, rng: np.random.Generator, *, cls_id: int, sep_id: int,
               pad_id: int = 0, nsp: bool = True) -> dict[str, np.ndarray]:
    """One epoch of BERT examples (after Devlin et al.'s create_pretraining_data.py).

    Sentences of a document are gathered into chunks of about ``seq_len - 3`` tokens (at least two
    sentences when the document has them). A chunk splits at a random sentence boundary into A and
    B (a lone sentence splits between two tokens); with probability 1/2 B is replaced by text from a random other document (is_next = 0) and the
    unused sentences go back to the stream. Returns ids, segments (N, seq_len) int32, is_next (N,)
    int32, and the document numbers of A and B (doc_a, doc_b) for checks.
    """
    budget = seq_len - 3 if nsp else seq_len - 2
    ids_rows, seg_rows, is_next, doc_a, doc_b = [], [], [], [], []
    n_docs = len(docs)

    def emit(a: list[np.ndarray], b: list[np.ndarray], nxt: int, da: int, db: int) -> None:
        ta = np.concatenate(a) if a else np.zeros(0, np.int32)
        tb = np.concatenate(b) if b else np.zeros(0, np.int32)
        while len(ta) + len(tb) > budget:  # trim the longer side from the end
            if len(ta) >= len(tb):
                ta = ta[:-1]
            else:
                tb = tb[:-1]
        row = np.full(seq_len, pad_id, np.int32)
        seg = np.zeros(seq_len, np.int32)
        if nsp:
            tokens = [cls_id, *ta, sep_id, *tb, sep_id]
            seg[len(ta) + 2 : len(tokens)] = 1
        else:
            tokens = [cls_id, *ta, sep_id]
        row[: len(tokens)] = tokens
        ids_rows.append(row)
        seg_rows.append(seg)
        is_next.append(nxt)
        doc_a.append(da)
        doc_b.append(db)

    for d, doc in enumerate(docs):
        i = 0
        while i < len(doc):
            chunk: list[np.ndarray] = []
            length = 0
            while i < len(doc) and (length < budget or (nsp and len(chunk) < 2)):
                chunk.append(doc[i])
                length += len(doc[i])
                i += 1
            if not nsp:
                emit(chunk, [], 1, d, d)
                continue
            if rng.random() < 0.5:
                if len(chunk) >= 2:
                    split = int(rng.integers(1, len(chunk)))
                    emit(chunk[:split], chunk[split:], 1, d, d)
                    continue
                if len(chunk[0]) >= 2:  # a lone sentence: its two halves are A and its true continuation B
                    cut = int(rng.integers(1, len(chunk[0])))
                    emit([chunk[0][:cut]], [chunk[0][cut:]], 1, d, d)
                    continue
            split = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
            a = chunk[:split]
            i -= len(chunk) - split  # the unused sentences go back to the stream
            if n_docs < 2:
                continue  # no other document to draw a random B from
            other = int(rng.integers(0, n_docs - 1))
            other += other >= d
            target = budget - sum(len(s) for s in a)
            start = int(rng.integers(0, len(docs[other])))
            b, got = [], 0
            for s in docs[other][start:]:
                b.append(s)
                got += len(s)
                if got >= target:
                    break
            emit(a, b, 0, d, other)
    if not ids_rows:
        return {"ids": np.zeros((0, seq_len), np.int32), "segments": np.zeros((0, seq_len), np.int32),
                "is_next": np.zeros(0, np.int32), "doc_a": np.zeros(0, np.int32), "doc_b": np.zeros(0, np.int32)}
    return {"ids": np.stack(ids_rows), "segments": np.stack(seg_rows), "is_next": np.asarray(is_next, np.int32),
            "doc_a": np.asarray(doc_a, np.int32), "doc_b": np.asarray(doc_b, np.int32)}


def token_windows(docs: list[Document], seq_len: int, separator: int) -> np.ndarray:
    """GPT: all documents as one stream (each followed by ``separator``), cut into (N, seq_len + 1)
    windows overlapping by one token (inputs = w[:-1], targets = w[1:])."""
    parts = []
    for doc in docs:
        parts.extend(doc)
        parts.append(np.asarray([separator], np.int32))
    stream = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    n = (len(stream) - 1) // seq_len
    if n <= 0:
        return np.zeros((0, seq_len + 1), np.int32)
    idx = np.arange(n)[:, None] * seq_len + np.arange(seq_len + 1)[None]
    return stream[idx]


def word_windows(sentences: Iterable[list[str]], seq_len: int, input_index: dict[str, int],
                 output_index: dict[str, int], unk: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """ELMo: the word stream, sentences wrapped in <s> ... </s>, cut into (N, seq_len + 2) windows
    overlapping by two words (inputs = w[1:-1], next words = w[2:], previous words = w[:-2]).

    Returns the windows as input-type ids (every distinct word, so the char-CNN sees the real word)
    and as output ids (the softmax vocabulary, rare words -> <unk>), and the input types added.
    """
    from engine.models.elmo import BOS_WORD, EOS_WORD

    new_types: list[str] = []
    in_ids, out_ids = [], []
    for words in sentences:
        for w in (BOS_WORD, *words, EOS_WORD):
            t = input_index.get(w)
            if t is None:
                t = input_index[w] = len(input_index)
                new_types.append(w)
            in_ids.append(t)
            out_ids.append(output_index.get(w, unk))
    stream_in, stream_out = np.asarray(in_ids, np.int32), np.asarray(out_ids, np.int32)
    n = (len(stream_in) - 2) // seq_len
    if n <= 0:
        empty = np.zeros((0, seq_len + 2), np.int32)
        return empty, empty, new_types
    idx = np.arange(n)[:, None] * seq_len + np.arange(seq_len + 2)[None]
    return stream_in[idx], stream_out[idx], new_types
