"""The training text as word ids, read by a second process while the command starts.

A word2vec or GloVe command spends its first second importing (torch too, for GloVe or on a GPU machine) and
loading word2vec's compiled kernel, and about as long again reading the corpus into word ids — one after the
other, on one core, while the other core waits. ``start`` forks a process before those imports (nothing but the standard library, numpy and
the corpus readers are loaded then) that reads the corpus into a folder under the cache; the run's
``take`` finds it done or waits for it. Off Linux (no fork on Windows; on macOS fork is unsafe for system
libraries), or where the reading process fails or is stopped, ``take`` returns None and the run reads the
corpus itself: the same ids, the same error messages.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.data.corpora import cache_dir, get_corpus
from engine.data.text import count_and_encode, tokenized_sentences

Key = tuple[str, str, bool, int | None]  # corpus, part, lowercase, max_words

_RAW, _WORDS, _COUNTS, _STARTS = "ids.int32", "words.txt", "counts.npy", "starts.npy"
_STALE_S = 24 * 3600  # a folder left by a killed command is removed by a later one


@dataclass
class EncodedText:
    """A corpus part as provisional word ids (``count_and_encode``): word -> id in order of first sight,
    each word's count, the ids (memory-mapped from ``folder``) and the sentence starts."""

    index: dict[str, int]
    counts: np.ndarray
    ids: np.ndarray
    starts: np.ndarray
    folder: Path

    def close(self) -> None:
        """Drop the map, then its folder (Windows keeps mapped files)."""
        self.ids = np.zeros(0, np.int32)
        shutil.rmtree(self.folder, ignore_errors=True)


def encode(sentences: Iterable[list[str]], folder: Path) -> EncodedText:
    """Read tokenized sentences into ids in ``folder`` (created; ``close`` removes it)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        index, counts, ids, starts = count_and_encode(sentences, folder / _RAW)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return EncodedText(index, counts, ids, starts, folder)


@dataclass
class _Pending:
    process: multiprocessing.process.BaseProcess
    folder: Path


_pending: dict[Key, _Pending] = {}


def _folders() -> Path:
    return cache_dir() / "prefetch"


def _remove_stale() -> None:
    with contextlib.suppress(OSError):
        for old in _folders().iterdir():
            with contextlib.suppress(OSError):
                if time.time() - old.stat().st_mtime > _STALE_S:
                    shutil.rmtree(old, ignore_errors=True)


def _read(key: Key, folder: str) -> None:
    """The forked process: read, then write the words, counts and starts beside the ids."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it ends this process
    corpus, part, lowercase, max_words = key
    path = Path(folder)
    code = 1
    with contextlib.suppress(BaseException):  # the parent then reads the corpus itself and says what is wrong
        text = encode(tokenized_sentences(get_corpus(corpus).sentences(part), lowercase, max_words), path)
        np.save(path / _COUNTS, text.counts)
        np.save(path / _STARTS, text.starts)
        (path / _WORDS).write_text("\n".join(text.index), encoding="utf-8")  # words never hold whitespace
        code = 0
    os._exit(code)  # no teardown of what the parent had loaded


def start(corpus: str, part: str, lowercase: bool, max_words: int | None) -> bool:
    """Begin reading the corpus part in a forked process, for a later ``take`` with the same arguments.
    False off Linux, or where the process could not start."""
    if not sys.platform.startswith("linux"):  # fork is not there (Windows) or not safe for system libraries (macOS)
        return False
    key: Key = (corpus, part, lowercase, max_words)
    try:
        _remove_stale()
        _folders().mkdir(parents=True, exist_ok=True)
        folder = _folders() / f"ids-{os.getpid()}-{time.monotonic_ns()}"
        process = multiprocessing.get_context("fork").Process(target=_read, args=(key, str(folder)), daemon=True)
        process.start()
    except OSError:
        return False
    _pending[key] = _Pending(process, folder)
    return True


def take(corpus: str, part: str, lowercase: bool, max_words: int | None,
         stop: threading.Event | None = None) -> EncodedText | None:
    """The text a ``start`` with the same arguments read (waiting for it), or None: nothing was started,
    the process failed, or ``stop`` was set (the process is then ended; so it is on Ctrl-C, re-raised)."""
    pending = _pending.pop((corpus, part, lowercase, max_words), None)
    if pending is None:
        return None
    process, folder = pending.process, pending.folder
    try:
        while process.is_alive() and not (stop is not None and stop.is_set()):
            process.join(0.05)
    except BaseException:  # Ctrl-C while waiting (the CLI's "stopped before training began")
        _end(pending)
        raise
    if (stop is not None and stop.is_set()) or process.is_alive() or process.exitcode != 0:  # stopped, or failed
        _end(pending)
        return None
    try:
        words = (folder / _WORDS).read_text(encoding="utf-8")
        index = {w: i for i, w in enumerate(words.split("\n"))} if words else {}
        starts = np.load(folder / _STARTS)
        total = int(starts[-1])
        ids = np.memmap(folder / _RAW, dtype=np.int32, mode="r", shape=(total,)) if total else np.zeros(0, np.int32)
        return EncodedText(index, np.load(folder / _COUNTS), ids, starts, folder)
    except (OSError, ValueError, IndexError):
        shutil.rmtree(folder, ignore_errors=True)
        return None


def _end(pending: _Pending) -> None:
    with contextlib.suppress(OSError, ValueError):
        if pending.process.is_alive():
            pending.process.kill()
        pending.process.join()
    shutil.rmtree(pending.folder, ignore_errors=True)


def cancel_all() -> None:
    """End every pending read and remove its folder (a command that will not train after all)."""
    while _pending:
        _end(_pending.popitem()[1])
