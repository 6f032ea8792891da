"""The cache folder heals: a missing, truncated, corrupt, foreign or misshapen entry is built again with
one notice (never an error on every click); a cache that cannot be written leaves the engine working
and says so once; two processes building one entry end with one sound entry."""

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.data import cache
from engine.data.corpora import get_corpus
from engine.inspection.occurrences import word_index

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("WORD2BERT_CACHE", str(folder))
    return folder


@pytest.fixture
def notices(caplog):
    caplog.set_level(logging.WARNING, logger="word2bert.cache")
    return lambda: [r.getMessage() for r in caplog.records if r.name == "word2bert.cache"]


def _entry(folder: Path) -> Path:
    cache.write_entry(folder, "built from A", {"data.bin": lambda p: p.write_bytes(b"x" * 1000),
                                                "doc.json": lambda p: p.write_text("{}")})
    return folder


@pytest.mark.parametrize("damage", ["truncated", "corrupt", "missing", "a folder", "no record", "record garbage"])
def test_a_damaged_entry_is_refused_removed_and_said_once(own_cache, notices, damage):
    folder = _entry(own_cache / "kind" / "key")
    assert cache.open_entry(folder, "built from A") == folder
    data = folder / "data.bin"
    if damage == "truncated":
        data.write_bytes(b"x" * 300)
    elif damage == "corrupt":
        data.write_bytes(b"y" + b"x" * 999)  # the same size: only the checksum tells
    elif damage == "missing":
        data.unlink()
    elif damage == "a folder":
        data.unlink()
        data.mkdir()
    elif damage == "no record":
        (folder / cache.MANIFEST).unlink()
    else:
        (folder / cache.MANIFEST).write_bytes(os.urandom(200))
    assert cache.open_entry(folder, "built from A") is None
    assert not folder.exists() and len(notices()) == 1 and "building it again" in notices()[0]
    assert cache.open_entry(folder, "built from A") is None and len(notices()) == 1  # gone: nothing more to say


def test_an_entry_built_from_other_data_is_foreign(own_cache, notices):
    folder = _entry(own_cache / "kind" / "key")
    assert cache.open_entry(folder, "built from B") is None
    assert "built from other data" in notices()[0]


def test_a_damaged_word_index_is_rebuilt_with_a_notice_and_answers_as_before(own_cache, notices, topic_corpus):
    first = word_index(str(topic_corpus))
    count = first.count("piano")
    assert count > 0 and not notices()
    [folder] = (own_cache / "word-index").glob("v*/*")
    for how in ("random bytes", "empty", "a third"):
        index = folder / "index.safetensors"
        data = index.read_bytes()
        index.write_bytes({"random bytes": os.urandom(len(data) // 2), "empty": b"", "a third": data[: len(data) // 3]}[how])
        cache._verified.clear()  # as a new process finds it
        again = word_index(str(topic_corpus))
        assert again.count("piano") == count and len(again) == len(first), how  # never less data than before
        said = len(notices())
        assert said == ("random bytes", "empty", "a third").index(how) + 1, (how, notices())  # one line each time
        assert word_index(str(topic_corpus)).count("piano") == count  # read from the rebuilt entry, no notice
        assert len(notices()) == said


def test_a_converted_corpus_replaced_by_a_folder_or_cut_short_is_converted_again(own_cache, notices):
    docs = sum(1 for _ in get_corpus("enwiki-sample").documents())
    [folder] = (own_cache / "corpora").glob("enwiki-sample-*")
    text = folder / "text.txt"
    size = text.stat().st_size
    with open(text, "r+b") as f:
        f.truncate(size // 3)
    cache._verified.clear()
    assert sum(1 for _ in get_corpus("enwiki-sample").documents()) == docs  # not a shorter corpus read silently
    text.unlink()
    text.mkdir()  # was: a raw IsADirectoryError
    cache._verified.clear()
    assert sum(1 for _ in get_corpus("enwiki-sample").documents()) == docs
    assert len(notices()) == 2


def test_a_cache_that_cannot_be_written_leaves_everything_working_and_says_so_once(tmp_path, monkeypatch, notices,
                                                                                 topic_corpus):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("WORD2BERT_CACHE", str(blocker / "cache"))  # any user, root included, cannot make it
    assert word_index(str(topic_corpus)).count("piano") > 0
    assert word_index(str(topic_corpus)).count("piano") > 0
    assert sum(1 for _ in get_corpus("enwiki-sample").documents()) > 50
    said = notices()
    assert len(said) == 1 and "cannot be written" in said[0] and "working without caching" in said[0]


def test_two_processes_building_one_entry_end_with_one_sound_entry(own_cache, tmp_path):
    corpus = tmp_path / "big.txt"
    lines = [f"Sentence {i} of the shared corpus talks about the river bank and the word {i % 977}." for i in range(60_000)]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = ("import sys; from engine.inspection.occurrences import word_index; "
            "i = word_index(sys.argv[1]); print(len(i), i.count('bank'), i.count('977'))")
    env = {**os.environ, "WORD2BERT_CACHE": str(own_cache), "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(corpus)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert outs[0][0] == outs[1][0] and outs[0][0].split()[0] == "60000"
    [folder] = (own_cache / "word-index").glob("v*/*")
    assert cache.open_entry(folder, json.loads((folder / cache.MANIFEST).read_text())["source"]) == folder
    assert not [p.name for p in folder.parent.iterdir() if p.name.startswith(".")]  # no build folder left


def test_clear_cache_empties_the_folder_and_everything_is_built_again(own_cache, topic_corpus):
    from engine import api

    word_index(str(topic_corpus))
    entries, size = api.clear_cache()
    assert entries >= 1 and size > 0 and not any(own_cache.iterdir())
    assert word_index(str(topic_corpus)).count("piano") > 0


def test_an_entry_written_where_another_process_put_one_first_keeps_that_one(own_cache, notices):
    folder = _entry(own_cache / "kind" / "key")
    theirs = (folder / cache.MANIFEST).read_text()
    assert cache.write_entry(folder, "built from A", {"data.bin": lambda p: p.write_bytes(b"x" * 1000),
                                                      "doc.json": lambda p: p.write_text("{}")})
    assert (folder / cache.MANIFEST).read_text() == theirs and not notices()
    assert [p.name for p in folder.parent.iterdir()] == ["key"]  # our copy dropped, nothing left beside it
    (folder / "data.bin").write_bytes(b"")  # a damaged one in the way is replaced by ours
    cache._verified.clear()
    assert cache.write_entry(folder, "built from A", {"data.bin": lambda p: p.write_bytes(b"z" * 10)})
    assert (folder / "data.bin").read_bytes() == b"z" * 10 and cache.open_entry(folder, "built from A") == folder
