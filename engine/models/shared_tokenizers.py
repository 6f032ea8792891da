"""One tokenizer object for every model loaded from the same tokenizer files.

The Run history loads a checkpoint at each step the slider rests on, and every checkpoint of a MiniLM run reads its
tokenizer from the same base folder; the lens, the masked LM and a tuned lens load MiniLM's again. Each load made
its own tokenizer: for MiniLM's 30,522 word pieces, two 2.1 MB hash tables in the Rust tokenizer (word → id and
id → word) and some 61,000 small strings, loaded again and again into a heap full of holes, where the small
strings fill the holes and keep mostly free pages (bench/robustness/RESULTS.md, "Chaos in the window": the 32-byte
blocks of the 2,162,720-byte tables). Ten such tokenizers were alive at once in the chaos bench's window.

Here a tokenizer is made once per content of its files (and variant: a left-to-right MiniLM's tokenizer starts
sentences with [CLS], so it is not the masked one's) and shared while any model holds it, and the last few made stay
for a model loaded again. Sharing is safe because nothing changes a loaded tokenizer: the engine encodes through
the Rust tokenizer, which neither truncates nor pads (``engine.data.inputs.whole_texts``), and whose reads take no
exclusive hold, so several threads may encode with it at once.

Our own runs' tokenizers (bert-tiny's, gpt-tiny's, the user's: a ``tokenizers.Tokenizer``) are shared the same way,
keyed by the one file ``Tokenizer.from_file`` reads, so that every checkpoint of a run shares one. Their word pieces
(an 8,000-word vocabulary's, held by 540,704-byte tables) kept 3.3-5.8 MB of mostly free pages in the chaos bench's
runs Z42 and Z42b, one tokenizer per load."""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

# a folder's weights, which no tokenizer reads: every other file in it is part of the key (AutoTokenizer reads files
# by names that vary with the model: vocab.txt, spm.model, source.spm, vocab.bpe, …; a list of them would miss one,
# and two folders differing only in the missed file would share the first one's tokenizer)
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx", ".gguf", ".npy", ".npz")
READ_AT_MOST = 64 * 2**20  # a larger file (no tokenizer's) enters the key by its size and time, not its bytes
KEEP_RECENT = 2  # tokenizers kept after their last model is gone, for the next load of the same files

_lock = threading.Lock()
_alive: weakref.WeakValueDictionary[tuple[str, str], Any] = weakref.WeakValueDictionary()
_recent: deque[Any] = deque(maxlen=KEEP_RECENT)


def files_digest(folder: str | Path) -> str:
    """A digest of the files in ``folder`` that are not weights (their names and bytes): the same for two folders
    that hold the same tokenizer and configuration, another when any of them changes."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(Path(folder).iterdir()):
        if path.suffix in WEIGHT_SUFFIXES or not path.is_file():
            continue
        h.update(path.name.encode(errors="surrogateescape") + b"\0")
        try:
            info = path.stat()
            h.update(path.read_bytes() if info.st_size <= READ_AT_MOST else f"{info.st_size} {info.st_mtime_ns}".encode())
        except OSError as e:  # (unreadable: AutoTokenizer will say so, if it reads it)
            h.update(f"unreadable {e.errno}".encode())
        h.update(b"\0")
    return h.hexdigest()


def file_digest(path: str | Path) -> str:
    """A digest of one file's bytes (a tokenizer.json: what ``Tokenizer.from_file`` reads, and nothing else)."""
    try:
        with open(path, "rb") as f:  # (every byte: two files alike in their first megabytes are not one)
            return "file:" + hashlib.file_digest(f, lambda: hashlib.blake2b(digest_size=16)).hexdigest()
    except OSError as e:  # (the maker will say what is wrong with it)
        return f"file: unreadable {e.errno} {path}"


def shared_tokenizer(folder: str | Path, make: Callable[[], Any], variant: str = "",
                     file: str | Path | None = None) -> Any:
    """The tokenizer of ``folder``'s files (or of ``file`` alone, where that is all ``make`` reads): the one already
    made from the same files (and ``variant``) while it lives, else ``make()``'s, kept for the next. Whatever
    ``make`` raises reaches the caller; nothing is kept then."""
    key = (file_digest(file) if file is not None else files_digest(folder), variant)
    with _lock:
        found = _alive.get(key)
        if found is not None:
            _keep(found)
            return found
    made = make()
    with _lock:
        try:
            found = _alive.setdefault(key, made)  # (two threads that made one each: both get the first)
        except TypeError:  # (cannot be referred to weakly: not shared)
            return made
        _keep(found)
    return found


def _keep(tokenizer: Any) -> None:
    """``tokenizer`` as the most recent of those kept (under ``_lock``)."""
    for i, kept in enumerate(_recent):
        if kept is tokenizer:
            del _recent[i]
            break
    _recent.append(tokenizer)


def forget() -> None:
    """Lets go of the tokenizers kept for the next load (those models hold stay theirs)."""
    with _lock:
        _recent.clear()
