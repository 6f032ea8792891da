"""A Hugging Face tokenizer without the Python copy of its vocabulary that transformers keeps beside the Rust one.

transformers 5's ``BertTokenizer`` builds its Rust ``tokenizers.Tokenizer`` from a dict of every word piece to its id
and keeps the dict as ``_vocab``: 30,522 ``str``s and as many ``int``s for MiniLM's vocabulary, 3.4 MB of small
objects for each tokenizer loaded, which nothing reads once the Rust tokenizer exists (encoding, decoding, ids and
``get_vocab`` all ask the Rust one). Loaded again and again into a heap full of holes, such small objects fill the
holes and keep mostly free pages (bench/robustness/RESULTS.md, "Chaos in the window": the chaos bench found them
among what keeps those pages, with static vectors' words, now one buffer: engine/data/word_list.py).
"""

from __future__ import annotations

from typing import Any

# the classes that read ``_vocab`` only in their ``__init__`` (checked in transformers 5's sources: other classes,
# whisper's and layoutxlm's among them, read it later, so theirs is kept)
ONLY_WHILE_MADE = {"transformers.models.bert.tokenization_bert.BertTokenizer"}


def without_python_vocab(tokenizer: Any) -> Any:
    """``tokenizer``, its ``_vocab`` dropped where its class is known not to read it again."""
    cls = type(tokenizer)
    state = getattr(tokenizer, "__dict__", {})
    if f"{cls.__module__}.{cls.__qualname__}" in ONLY_WHILE_MADE and isinstance(state.get("_vocab"), dict) \
            and state.get("_tokenizer") is not None:
        tokenizer._vocab = None
    return tokenizer
