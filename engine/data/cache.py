"""The cache folder: what word2bert builds once and reads again — the converted corpora, GloVe's vectors,
the word index, a model's occurrence vectors, corpus indexes.

Each cache *entry* is a folder of files plus ``entry.json``, which records what the entry was built
from (``source``) and every file's size and checksum. An entry is written in a private folder and
renamed into place, so no one ever reads half of one, and two processes building the same entry at
once end with one of them (the other's copy is dropped). It is verified when a process first opens it:
a missing, truncated, corrupt or foreign entry (built from other data) is removed and built again with
a one-line notice, never an error on every click. A cache folder that cannot be written (read-only,
full) leaves the app working without caching; it says so once.

Notices go to the ``word2bert.cache`` logger: on stderr for the command line, on the status bar in the app.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import stat
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

MANIFEST = "entry.json"
LAYOUT = 1
STALE_TEMPORARY_S = 3600.0  # a private build folder this old belongs to a process that died
log = logging.getLogger("word2bert.cache")

_lock = threading.Lock()
_verified: dict[Path, tuple[object, ...]] = {}  # entry -> its files' stat when its checksums were verified
_said: set[str] = set()


def cache_dir() -> Path:
    """The cache folder: ``$WORD2BERT_CACHE``, else the platform's user cache folder for word2bert."""
    override = os.environ.get("WORD2BERT_CACHE")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("word2bert"))


def notice(message: str, once: str | None = None) -> None:
    """One line for the user (``once``: a key said at most once per process)."""
    if once is not None:
        with _lock:
            if once in _said:
                return
            _said.add(once)
    log.warning(message)


def digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _problem(folder: Path, doc: object, source: str) -> str | None:
    """Why ``folder`` is not a sound entry built from ``source``, or None."""
    if not isinstance(doc, dict) or doc.get("layout") != LAYOUT or not isinstance(doc.get("files"), dict):
        return "its record is not one this version writes"
    if doc.get("source") != source:
        return "it was built from other data"
    for name, want in doc["files"].items():
        path = folder / str(name)
        try:
            st = path.stat()
        except OSError:
            return f"{name} is missing"
        if not stat.S_ISREG(st.st_mode):
            return f"{name} is not a file"
        if not isinstance(want, dict) or st.st_size != want.get("size"):
            return f"{name} is truncated or overwritten ({st.st_size:,} bytes, not {want.get('size')})"
        if digest(path) != want.get("digest"):
            return f"{name} is damaged (its checksum differs)"
    return None


def discard(folder: Path) -> None:
    """Remove an entry (first renamed aside, so its name is free at once, even while its files are open)."""
    aside = folder.with_name(f".{folder.name}.trash-{uuid.uuid4().hex[:8]}")
    try:
        os.rename(folder, aside)
    except OSError:
        aside = folder
    if aside.is_dir() and not aside.is_symlink():
        shutil.rmtree(aside, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            aside.unlink()
    with _lock:
        _verified.pop(folder, None)


def _stamp(folder: Path, doc: object) -> tuple[object, ...]:
    """What changes when any file of an entry is written again: sizes, times, inodes (a cheap stat each)."""
    names = [MANIFEST, *(doc.get("files") or {} if isinstance(doc, dict) else {})]
    out: list[object] = []
    for name in names:
        try:
            st = (folder / str(name)).stat()
            out.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            out.append((name, None))
    return tuple(out)


def open_entry(folder: Path, source: str) -> Path | None:
    """``folder`` if it is a complete entry built from ``source``; None if there is none, or if it was
    damaged or foreign (then it is removed, with a notice, and the caller builds it again). Checksums are
    computed once per process; afterwards a stat of each file tells whether anything was written since."""
    stamp: tuple[object, ...] = ()
    try:
        if not folder.exists() and not folder.is_symlink():
            return None
        doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        stamp = _stamp(folder, doc)
        with _lock:
            if _verified.get(folder) == stamp:
                return folder
        problem = _problem(folder, doc, source)
    except (OSError, ValueError) as e:
        problem = f"its record cannot be read ({getattr(e, 'strerror', None) or e})"
    if problem is None:
        with _lock:
            _verified[folder] = stamp
        return folder
    notice(f"cache: {_name(folder)} was unusable ({problem}); building it again")
    discard(folder)
    return None


def _name(folder: Path) -> str:
    try:
        return str(folder.relative_to(cache_dir()))
    except ValueError:
        return str(folder)


def _sweep(parent: Path, name: str) -> None:
    """Remove private build folders of this entry left by processes that died."""
    with contextlib.suppress(OSError):
        for old in parent.glob(f".{name}.*"):
            with contextlib.suppress(OSError):
                if time.time() - old.stat().st_mtime > STALE_TEMPORARY_S:
                    shutil.rmtree(old, ignore_errors=True)


def write_entry(folder: Path, source: str, writers: dict[str, Callable[[Path], object]]) -> bool:
    """Build an entry: each writer writes its file in a private folder, ``entry.json`` records sizes and
    checksums, then the folder is renamed into place. False (and one notice per process) where the cache
    cannot be written; the caller goes on with what it built in memory. Another process's entry that
    got there first is kept (ours is dropped): both were built from the same ``source``."""
    parent = folder.parent
    tmp: Path | None = None
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _sweep(parent, folder.name)
        tmp = parent / f".{folder.name}.tmp{os.getpid()}-{threading.get_ident()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        files = {}
        for name, write in writers.items():
            write(tmp / name)
            files[name] = {"size": (tmp / name).stat().st_size, "digest": digest(tmp / name)}
        doc = {"layout": LAYOUT, "source": source, "files": files, "written": time.strftime("%Y-%m-%d %H:%M:%S")}
        (tmp / MANIFEST).write_text(json.dumps(doc, indent=1), encoding="utf-8")
        try:
            os.rename(tmp, folder)
        except OSError:
            if open_entry(folder, source) is None:  # what was in the way was damaged (now removed): ours goes in
                os.rename(tmp, folder)
            else:
                discard(tmp)  # another process's, as good as ours
        tmp = None
        return True
    except OSError as e:
        notice(f"cache: the cache folder {cache_dir()} cannot be written ({e.strerror or e}); working without "
               "caching (answers are computed again each time)", once=f"unwritable {cache_dir()}")
        return False
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def clear_cache() -> tuple[int, int]:
    """Remove everything in the cache folder: (entries removed, bytes freed). Whatever another process
    still has open stays readable to it (POSIX) or is skipped (Windows)."""
    root = cache_dir()
    count = size = 0
    if not root.is_dir():
        return 0, 0
    for child in list(root.iterdir()):
        with contextlib.suppress(OSError):
            if child.is_dir() and not child.is_symlink():
                size += sum(p.stat().st_size for p in child.rglob("*") if p.is_file())
                count += sum(1 for _ in child.rglob(MANIFEST)) or 1
                shutil.rmtree(child, ignore_errors=True)
            else:
                size += child.stat().st_size
                count += 1
                child.unlink()
    with _lock:
        _verified.clear()
    return count, size
