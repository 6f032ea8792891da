"""Text to Transformer inputs, one path for every use: queries (engine/handles/transformer.py) and
fine-tuning (engine/finetune/encoders.py) both turn text into ids here.

    [prefix] A [middle] B [suffix]      e.g. BERT: [CLS] A [SEP] B [SEP], segments 0…0 1…1

The text is tokenized without the tokenizer's own special tokens; the model's specials are placed by
``assemble``, which cuts the text (never a special token) to fit ``max_len`` and keeps, per token, the
word it belongs to and its characters in its own text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Specials:
    prefix: tuple[int, ...] = ()
    middle: tuple[int, ...] = ()  # between the two texts of a pair
    suffix: tuple[int, ...] = ()
    segment_b: int = 1  # the segment id of the second text (0 where the model has one segment type)


@dataclass
class Encoded:
    ids: list[int]
    segments: list[int]
    words: list[int]  # per token: the word it belongs to (-1 for special tokens and the second text)
    offsets: list[tuple[int, int]]  # per token: characters in its own text
    second: list[bool]  # per token: True when it comes from the second text (pairs, span contexts)
    truncated: bool = False
    special: list[bool] = field(default_factory=list)  # per token: a special token placed by ``assemble``
    length: int = 0  # tokens before truncation


def assemble(a: Any, b: Any | None, specials: Specials, max_len: int, truncate_first: bool = True) -> Encoded:
    """``a``/``b``: tokenizations (``ids``, ``word_ids``, ``offsets``) of the text and the optional second text.
    Too long: the longer text is cut first (``truncate_first``), or only the second (a span's context)."""
    prefix, middle, suffix = list(specials.prefix), list(specials.middle), list(specials.suffix)
    a_ids, b_ids = list(a.ids), list(b.ids) if b is not None else []
    fixed = len(prefix) + len(suffix) + (len(middle) if b is not None else 0)
    room = max_len - fixed
    truncated = len(a_ids) + len(b_ids) > room
    na, nb = len(a_ids), len(b_ids)
    if truncated:
        if b is None:
            na = room
        elif truncate_first:  # longest first
            while na + nb > room:
                if na >= nb:
                    na -= 1
                else:
                    nb -= 1
        else:  # keep the first text (a question), cut the second (its context)
            na = min(na, max(room // 2, room - nb))
            nb = room - na
    na, nb = max(na, 0), max(nb, 0)
    ids = [*prefix, *a_ids[:na]]
    words = [-1] * len(prefix) + [w if w is not None else -1 for w in a.word_ids[:na]]
    offsets = [(0, 0)] * len(prefix) + list(a.offsets[:na])
    second = [False] * len(ids)
    segments = [0] * len(ids)
    special = [True] * len(prefix) + [False] * na
    if b is not None:
        ids += [*middle, *b_ids[:nb]]
        words += [-1] * (len(middle) + nb)
        offsets += [(0, 0)] * len(middle) + list(b.offsets[:nb])
        second += [False] * len(middle) + [True] * nb
        segments += [0] * len(middle) + [specials.segment_b] * nb
        special += [True] * len(middle) + [False] * nb
    ids += suffix
    words += [-1] * len(suffix)
    offsets += [(0, 0)] * len(suffix)
    second += [False] * len(suffix)
    segments += [segments[-1] if b is not None and segments else 0] * len(suffix)
    special += [True] * len(suffix)
    return Encoded(ids, segments, words, offsets, second, truncated, special, fixed + len(a_ids) + len(b_ids))


def encode_text(tokenizer: Any, specials: Specials, text: str | list[str], pair: str | None = None,
                max_len: int = 512, truncate_first: bool = True) -> Encoded:
    """A ``tokenizers.Tokenizer``'s tokens of ``text`` (a string, or words already split) and ``pair``,
    with the model's special tokens, cut to ``max_len``."""
    pretokenized = isinstance(text, list)
    a = tokenizer.encode(text, is_pretokenized=pretokenized, add_special_tokens=False)
    b = tokenizer.encode(pair, add_special_tokens=False) if pair is not None else None
    return assemble(a, b, specials, max_len, truncate_first)


def bert_specials(tokenizer: Any) -> Specials:
    """Our BERT's WordPiece vocabulary: [CLS] A [SEP] B [SEP]."""
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    return Specials((cls,), (sep,), (sep,), 1)


def hf_specials(hf_tokenizer: Any, model_type: str, causal: bool, takes_segments: bool) -> Specials:
    """A Hugging Face checkpoint's specials, from its tokenizer: a decoder gets its BOS first (and EOS
    between and after a pair's texts); an encoder [CLS]/[SEP] or <s>/</s> (RoBERTa doubles the middle one)."""
    t = hf_tokenizer
    if causal:
        end = t.eos_token_id if t.eos_token_id is not None else t.bos_token_id
        prefix = (t.bos_token_id,) if t.bos_token_id is not None else ()
        return Specials(prefix, (end,) if end is not None else (), (end,) if end is not None else (), 0)
    cls = t.cls_token_id if t.cls_token_id is not None else t.bos_token_id
    sep = t.sep_token_id if t.sep_token_id is not None else t.eos_token_id
    double = model_type in ("roberta", "xlm-roberta", "camembert", "longformer", "bart")
    prefix = (cls,) if cls is not None else ()  # (T5 starts with the text and ends each one with </s>)
    return Specials(prefix, (sep, sep) if double else (sep,), (sep,), 1 if takes_segments else 0)


# ---------------------------------------------------------------- decided once for every wrapper

def separator(byte_level: bool) -> str:
    """The token that starts and separates texts for a left-to-right model: GPT-2's ``<|endoftext|>``
    with a byte-level tokenizer, ``[SEP]`` with a WordPiece one."""
    return "<|endoftext|>" if byte_level else "[SEP]"


def byte_level(backend: Any) -> bool:
    """Whether a tokenizers backend keeps spaces in its tokens (GPT-2's byte-level BPE, RoBERTa's): text read
    as sentences one after another needs the space between them ("day. She"), or it reads "day.She"."""
    return "ByteLevel" in repr(backend.pre_tokenizer) + repr(backend.decoder)


def whole_texts(backend: Any) -> Any:
    """A tokenizers backend that neither truncates nor pads: the caller cuts and pads (as the model's
    maximum length and the batch say), every wrapper the same way."""
    backend.no_truncation()
    backend.no_padding()
    return backend


def reads_left_to_right(config: Any) -> bool:
    """Whether a Hugging Face model is a decoder (each position sees only what comes before): a config
    that says ``is_decoder``, or a model type transformers has as a causal LM and not as a masked LM."""
    from transformers.models.auto import modeling_auto

    model_type = getattr(config, "model_type", "")
    if getattr(config, "is_decoder", False):
        return True
    return (model_type in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
            and model_type not in modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES)
