"""One BERT training example drawn as the engine trains (engine.training.pretrain_data.bert_pairs, then
the masking the model itself was trained with: engine.models.masking.mask_words by whole words, or
engine.models.bert.mask_tokens piece by piece as the original BERT): a sentence pair from the corpus, half
the time with a random second sentence, 15% of its words (or pieces) chosen, 80% of those replaced by
[MASK], 10% by a random token, 10% kept — and what a masked-LM model predicts at each chosen position."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from engine.errors import CorpusError, Unsupported, Word2BertError
from engine.results import Capability


@dataclass(frozen=True)
class TrainingExample:
    original: tuple[str, ...]  # the pair as tokens: [CLS] A [SEP] B [SEP]
    inputs: tuple[str, ...]  # what the model reads after masking
    segments: tuple[int, ...]
    chosen: tuple[int, ...]  # positions chosen for prediction
    how: tuple[str, ...]  # for each chosen position: "[MASK]", "random" or "kept"
    predictions: tuple[tuple[tuple[str, float], ...], ...]  # top 5 (token, probability) per chosen position
    is_next: bool  # True when B really follows A in the corpus
    next_probability: float | None  # the model's P(IsNext), when it has the head
    whole_word: bool = False  # whole words chosen (every piece of a chosen word), as the model was trained
    mask_prob: float = 0.15


def trained_masking(handle: Any) -> tuple[bool, float]:
    """(whole words?, rate) as ``handle`` was trained, from its run folder's config.json; a model trained
    elsewhere (a Hugging Face folder) gets the original BERT's: piece by piece, 15%."""
    from engine.checkpoints.reading import read_config

    try:
        model = (read_config(handle.path).get("model") or {}) if handle.path else {}
        return bool(model.get("whole_word", False)), float(model.get("mask_prob", 0.15))
    except (Word2BertError, OSError, ValueError, TypeError, AttributeError):  # not a run folder of ours
        return False, 0.15


def bert_training_example(handle: Any, corpus: str = "default", seed: int = 0, seq_len: int = 48,
                          mask_prob: float | None = None) -> TrainingExample:
    """``mask_prob``: None for the model's own (its run's config)."""
    from engine.data.corpora import get_corpus
    from engine.models.bert import mask_tokens
    from engine.models.masking import mask_words, vocabulary_roles
    from engine.training.pretrain_data import bert_pairs, encode_documents

    if Capability.MASKED_LM not in handle.capabilities:
        raise Unsupported(handle.missing(Capability.MASKED_LM))
    adapter = handle.adapter
    tok = adapter.tokenizer
    rng = np.random.default_rng(seed)
    docs = list(get_corpus(corpus).documents("heldout"))
    if len(docs) < 2:
        raise CorpusError(f"the corpus '{corpus}' has too few held-out documents for sentence pairs")
    # 8 documents give dozens of pairs to draw one from (40 made hundreds, each a Python loop on the window's time)
    picked = [docs[i] for i in rng.choice(len(docs), size=min(8, len(docs)), replace=False)]
    encoded, _ = encode_documents(picked, tok)
    specials = {name: tok.token_to_id(name) for name in ("[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]")}
    if any(v is None for v in specials.values()):
        raise Unsupported(f"{handle.name}'s tokenizer has no BERT special tokens")
    pairs = bert_pairs(encoded, seq_len, rng, cls_id=specials["[CLS]"], sep_id=specials["[SEP]"],
                       pad_id=specials["[PAD]"])
    row = int(rng.integers(len(pairs["ids"])))
    ids = torch.tensor(pairs["ids"][row], dtype=torch.long)
    length = int((ids != specials["[PAD]"]).sum())
    ids, segments = ids[:length][None], pairs["segments"][row][:length].tolist()
    special = torch.isin(ids, torch.tensor([specials[k] for k in ("[PAD]", "[CLS]", "[SEP]")]))
    generator = torch.Generator().manual_seed(seed)
    first_normal = max(specials.values()) + 1
    whole_word, own_prob = trained_masking(handle)
    prob = own_prob if mask_prob is None else mask_prob
    roles = vocabulary_roles(tok) if whole_word else None
    for _ in range(20):  # a short pair may get no chosen token: draw the masks again
        if roles is not None:
            inputs, labels = mask_words(ids, special, *roles, mask_id=specials["[MASK]"], prob=prob,
                                        generator=generator)
        else:
            inputs, labels = mask_tokens(ids, special, mask_id=specials["[MASK]"], vocab_size=tok.get_vocab_size(),
                                         first_normal=first_normal, prob=prob, generator=generator)
        chosen = [int(i) for i in torch.nonzero(labels[0] >= 0)[:, 0]]
        if chosen:
            break
    how = tuple("[MASK]" if int(inputs[0, i]) == specials["[MASK]"] else "kept" if int(inputs[0, i]) == int(ids[0, i])
                else "random" for i in chosen)
    out = handle._forward(inputs[0].tolist(), segments, logits=True, positions=chosen,
                          nsp=Capability.NEXT_SENTENCE in handle.capabilities)
    probs = out.logits[0].float().softmax(-1)  # (chosen, V)
    top = probs.topk(5, dim=-1)
    predictions = tuple(tuple((handle._token_text(int(t)), float(p)) for t, p in zip(ti, pi, strict=True))
                        for ti, pi in zip(top.indices, top.values, strict=True))
    next_probability = float(out.nsp[0].float().softmax(-1)[0]) if out.nsp is not None else None
    return TrainingExample(tuple(handle._token_text(int(i)) for i in ids[0]),
                           tuple(handle._token_text(int(i)) for i in inputs[0]), tuple(segments), tuple(chosen), how,
                           predictions, bool(pairs["is_next"][row]), next_probability, whole_word, prob)
