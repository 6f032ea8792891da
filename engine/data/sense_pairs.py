"""Word-in-context pairs: two sentences that use the same word, and whether they use it in the same sense
(WiC, Pilehvar & Camacho-Collados 2019). A masked-LM adaptation can learn from them beside its masked LM
(``--sense-pairs FILE``): the word's vectors in the two sentences are pulled together when the sense is the
same and pushed apart when it is not, so the model's nearest neighbours follow senses.

Two file layouts are read, both tab-separated, one pair per line, indices counting space-separated tokens
from 0:

* WiC's own: ``word  POS  i-j  sentence1  sentence2`` in ``NAME.data.txt``, with ``T``/``F`` per line in
  ``NAME.gold.txt`` beside it;
* one file: ``word  POS  i-j  sentence1  sentence2  T`` (the label as a sixth column: T/F, true/false, 1/0);

or sentences grouped by sense, ``word  sense  sentence`` (three columns, the word once in each sentence, as
in engine/data/sets/sense_train.tsv): every two sentences of one word make a pair, the same sense or not.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import CorpusError

MAX_PAIRS = 1_000_000
# pairs that ship with word2bert, by name: hand-written sentences of 34 words in two senses each
BUNDLED = {"sense-train": Path(__file__).resolve().parent / "sets" / "sense_train.tsv"}
# the development sense set's sentences (engine/inspection/quality.py): never taught by name, only scored — how far
# what a run learns from its pairs carries to words it was not taught
DEVELOPMENT = Path(__file__).resolve().parent / "sets" / "senses_dev.tsv"
_LABELS = {"t": True, "true": True, "1": True, "f": False, "false": False, "0": False}


@dataclass(frozen=True)
class SensePair:
    word: str
    sentence1: str
    index1: int  # the word's space-separated token in sentence1
    sentence2: str
    index2: int
    same: bool  # the same sense in both


def _gold_beside(path: Path) -> Path | None:
    name = path.name
    if ".data." in name:
        gold = path.with_name(name.replace(".data.", ".gold.", 1))
        return gold if gold.is_file() else None
    return None


def _label(text: str, where: str) -> bool:
    value = _LABELS.get(text.strip().lower())
    if value is None:
        raise CorpusError(f"{where}: the label must be T or F (or true/false, 1/0), not {text.strip()!r}")
    return value


def read_sense_pairs(path: str | Path) -> list[SensePair]:
    """The pairs of a WiC-style file (see the module's note); a clear ``CorpusError`` for a missing file, a
    malformed line, an index outside its sentence, or a file whose pairs are all one label."""
    path = BUNDLED.get(str(path)) or Path(path).expanduser()
    if not path.is_file():
        raise CorpusError(f"sense pairs: {path} is neither a file nor a bundled set ({', '.join(BUNDLED)})")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        gold_path = _gold_beside(path)
        gold = gold_path.read_text(encoding="utf-8").split() if gold_path else None
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"sense pairs: {path} cannot be read as UTF-8 text ({e})") from None
    rows = [(n, line.split("\t")) for n, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
    if rows and gold is None and all(len(cols) == 3 for _, cols in rows):
        return _checked(_bank_pairs(rows, path), path)
    if len(rows) > MAX_PAIRS:
        raise CorpusError(f"sense pairs: {path} has {len(rows):,} lines; at most {MAX_PAIRS:,} are read")
    if gold is not None and len(gold) != len(rows):
        raise CorpusError(f"sense pairs: {path} has {len(rows)} pairs but {gold_path} {len(gold)} labels")
    pairs = []
    for k, (n, cols) in enumerate(rows):
        where = f"{path}, line {n}"
        if len(cols) not in (5, 6) or (gold is None and len(cols) != 6):
            raise CorpusError(f"{where}: expected word, POS, i-j, sentence1, sentence2 and a label (T/F) separated "
                              f"by tabs, or WiC's .data.txt with its .gold.txt beside it; found {len(cols)} columns")
        word, _, idx, s1, s2 = (c.strip() for c in cols[:5])
        try:
            i, j = (int(x) for x in idx.split("-"))
        except ValueError:
            raise CorpusError(f"{where}: the indices must look like 2-5 (the word's token in each sentence), "
                              f"not {idx!r}") from None
        if not (0 <= i < len(s1.split(" ")) and 0 <= j < len(s2.split(" "))):
            raise CorpusError(f"{where}: the index {idx} points past the end of a sentence")
        same = _label(gold[k] if gold is not None else cols[5], where)
        pairs.append(SensePair(word, s1, i, s2, j, same))
    return _checked(pairs, path)


def _checked(pairs: list[SensePair], path: Path) -> list[SensePair]:
    if not pairs:
        raise CorpusError(f"sense pairs: {path} has no pairs")
    if len({p.same for p in pairs}) < 2:
        raise CorpusError(f"sense pairs: every pair in {path} has the same label; the loss needs both")
    return pairs


_EDGE = re.compile(r"^(\W*)(.*?)(\W*)$")


def _with_word_apart(word: str, sentence: str, where: str) -> tuple[str, int]:
    """The sentence with the word's token set apart from punctuation around it ("bank." -> "bank ."), and that
    token's index, so that only the word's own pieces are marked."""
    tokens = sentence.split()
    for k, token in enumerate(tokens):
        lead, core, trail = _EDGE.match(token).groups()  # type: ignore[union-attr]
        if core.lower() == word:
            parts = [t for t in (lead, core, trail) if t]
            return " ".join([*tokens[:k], *parts, *tokens[k + 1 :]]), k + (1 if lead else 0)
    raise CorpusError(f"{where}: the word {word!r} is not in its sentence")


def _bank_pairs(rows: list[tuple[int, list[str]]], path: Path) -> list[SensePair]:
    """Every two sentences of one word as a pair (sentences grouped by sense: word, sense, sentence)."""
    by_word: dict[str, list[tuple[str, str, int]]] = {}
    for n, (word, sense, sentence) in rows:
        word = word.strip().lower()
        text, index = _with_word_apart(word, sentence.strip(), f"{path}, line {n}")
        by_word.setdefault(word, []).append((sense.strip(), text, index))
    count = sum(len(group) * (len(group) - 1) // 2 for group in by_word.values())
    if count > MAX_PAIRS:
        raise CorpusError(f"sense pairs: {path} makes {count:,} pairs; at most {MAX_PAIRS:,} are read")
    return [SensePair(word, a[1], a[2], b[1], b[2], a[0] == b[0])
            for word, group in by_word.items() for a, b in itertools.combinations(group, 2)]


def fingerprint(pairs: list[SensePair]) -> str:
    """A short hash of the pairs (a run's config records it: a resume checks it reads the same pairs)."""
    h = hashlib.sha256()
    for p in pairs:
        h.update(f"{p.sentence1}\t{p.index1}\t{p.sentence2}\t{p.index2}\t{p.same}\n".encode())
    return h.hexdigest()[:16]


def token_span(sentence: str, index: int) -> tuple[int, int]:
    """The character span of the index-th space-separated token."""
    tokens = sentence.split(" ")
    start = sum(len(t) + 1 for t in tokens[:index])
    return start, start + len(tokens[index])


def encode_pairs(pairs: list[SensePair], tokenizer, cls: int, sep: int, pad: int,
                 max_len: int = 96) -> tuple[np.ndarray, np.ndarray]:
    """(ids, pieces), each (2P, L): rows 2k and 2k+1 are pair k's two sentences as ``[CLS] text [SEP]`` in a
    ``tokenizers`` tokenizer's pieces (padded with ``pad``; cut at ``max_len``), and a 0/1 mark of the
    pieces of the target word. A pair whose word falls past the cut has no marked pieces (the loss skips it)."""
    rows: list[list[int]] = []
    marks: list[list[int]] = []
    for p in pairs:
        for sentence, index in ((p.sentence1, p.index1), (p.sentence2, p.index2)):
            a, b = token_span(sentence, index)
            enc = tokenizer.encode(sentence, add_special_tokens=False)
            ids = [cls, *enc.ids[: max_len - 2], sep]
            mark = [0] + [int(e > s and s < b and e > a) for s, e in enc.offsets[: max_len - 2]] + [0]
            rows.append(ids)
            marks.append(mark)
    width = max(len(r) for r in rows)
    ids_arr = np.full((len(rows), width), pad, np.int32)
    mark_arr = np.zeros((len(rows), width), np.float32)
    for k, (r, m) in enumerate(zip(rows, marks, strict=True)):
        ids_arr[k, : len(r)] = r
        mark_arr[k, : len(m)] = m
    return ids_arr, mark_arr
