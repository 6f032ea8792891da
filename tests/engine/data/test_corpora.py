import json

import pytest

from engine.data.corpora import (
    corpus_identity,
    corpus_label,
    get_corpus,
    run_corpus_fields,
    split_sentences,
    trained_on,
)
from engine.errors import CorpusError


def test_text_file_with_blank_lines_is_documents(tmp_path):
    p = tmp_path / "c.txt"
    p.write_text("First doc. It has two sentences.\n\nSecond doc here.\nStill second.\n", encoding="utf-8")
    docs = list(get_corpus(str(p)).documents())
    assert len(docs) == 2
    assert docs[0].sentences == ("First doc.", "It has two sentences.")
    assert docs[1].sentences == ("Second doc here.", "Still second.")


def test_text_file_without_blank_lines_is_one_document_per_line(tmp_path):
    p = tmp_path / "c.txt"
    p.write_text("one line here.\nanother line.\nthird.\n", encoding="utf-8")
    assert len(list(get_corpus(str(p)).documents())) == 3


def test_folder_and_jsonl(tmp_path):
    (tmp_path / "a.txt").write_text("Alpha text.\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(json.dumps({"text": "Beta one. Beta two."}) + "\n", encoding="utf-8")
    docs = list(get_corpus(str(tmp_path)).documents())
    assert [d.sentences for d in docs] == [("Alpha text.",), ("Beta one.", "Beta two.")]


def test_non_utf8_file_gives_clear_error(tmp_path):
    p = tmp_path / "latin.txt"
    p.write_bytes("caf\xe9 au lait.\n".encode("latin-1"))
    with pytest.raises(CorpusError, match="not UTF-8"):
        list(get_corpus(str(p)).documents())


def test_missing_corpus_names_the_known_ones():
    with pytest.raises(CorpusError, match="default"):
        get_corpus("/no/such/corpus.txt")


def test_sentence_splitting_keeps_abbreviations():
    assert split_sentences("Mr. Smith went to Washington. He met Dr. Jones.") == [
        "Mr. Smith went to Washington.", "He met Dr. Jones."]


def test_text_typed_in_lower_case_splits_into_its_sentences():
    """A user's "i went home. she said" is two sentences (a word-level model reads </s> <s> between them); a
    corpus's sentences are made as before, and text with capitals still needs one to begin a sentence."""
    assert split_sentences("i went home. she said hi", typed=True) == ["i went home.", "she said hi"]
    assert split_sentences("i went home. she said hi") == ["i went home. she said hi"]
    assert split_sentences("the u.s. army left. then it rained! ok", typed=True) == [
        "the u.s. army left.", "then it rained!", "ok"]
    assert split_sentences("e.g. this one. and it costs 3.5 dollars", typed=True) == [
        "e.g. this one.", "and it costs 3.5 dollars"]
    assert split_sentences("I went home. she said", typed=True) == ["I went home. she said"]


def test_default_corpus_sources_and_document_level_heldout_split():
    corpus = get_corpus("default")
    sources, heldout, total, words = set(), 0, 0, 0
    for doc in corpus.documents():
        sources.add(doc.source)
        total += 1
        heldout += doc.heldout
        words += sum(len(s.split()) for s in doc.sentences)
    assert sources == {"wiki-vital", "bbc-news", "enwiki-sample", "chitchat"}
    assert words > 4_000_000
    assert 0.015 < heldout / total < 0.05
    titles_train = {(d.source, d.title) for d in corpus.documents("train")}
    titles_held = {(d.source, d.title) for d in corpus.documents("heldout")}
    assert titles_held and not titles_train & titles_held


def test_the_conversation_corpus_is_everyday_english_as_people_typed_it():
    corpus = get_corpus("chitchat")
    docs = list(corpus.documents())
    assert len(docs) == 7168 and all(d.source == "chitchat" for d in docs)
    lines = [s for d in docs for s in d.sentences]
    assert 250_000 < len(lines) < 270_000 and 2_300_000 < sum(len(s.split()) for s in lines) < 2_700_000
    assert "Im alright, I just took a nap." in docs[0].sentences[5]  # one message a line, spelled as typed
    heldout = {d.title for d in corpus.documents("heldout")}
    assert 0.015 < len(heldout) / len(docs) < 0.05 and not heldout & {d.title for d in corpus.documents("train")}
    # the same split inside the default: a conversation held out here is held out there
    assert heldout == {d.title for d in get_corpus("default").documents("heldout") if d.source == "chitchat"}


def test_a_run_trained_on_the_old_default_names_the_same_text_again():
    old = get_corpus("wiki-news")
    assert {d.source for d in old.documents("heldout")} == {"wiki-vital", "bbc-news", "enwiki-sample"}
    # a run of before 2026-11-27 records "default" without its sources: it meant the wiki-news union
    assert trained_on({"corpus": "default"}) == "wiki-vital+bbc-news+enwiki-sample"
    assert trained_on({"corpus": "default", "corpus_sources": list(get_corpus("default").sources)}) == "default"
    assert trained_on({"corpus": "bbc-news"}) == "bbc-news"
    union = get_corpus(trained_on({"corpus": "default"}))
    assert [d.title for d in union.documents("heldout")] == [d.title for d in old.documents("heldout")]
    assert corpus_identity("default") != corpus_identity("wiki-news")  # their caches are apart
    assert corpus_identity("wiki-news") == corpus_identity("wiki-vital+bbc-news+enwiki-sample")
    with pytest.raises(CorpusError, match="wiki-news"):
        get_corpus("wiki-vital+no-such-corpus")
    # the library and `word2bert-eval` say which default a run had
    assert corpus_label({"corpus": "default"}) == "default (wiki-vital + bbc-news + enwiki-sample)"
    assert corpus_label(run_corpus_fields(get_corpus("default"))).endswith("+ chitchat)")
    assert corpus_label({"corpus": "/home/me/notes.txt"}) == "notes.txt"


def test_an_edited_text_file_is_another_corpus_for_the_caches(tmp_path):
    p = tmp_path / "mine.txt"
    p.write_text("The first sentence is here.\n", encoding="utf-8")
    before = corpus_identity(str(p))
    p.write_text("The first sentence is here. And a second one.\n", encoding="utf-8")
    assert corpus_identity(str(p)) != before


def test_a_held_out_part_read_to_its_end_is_kept_for_the_next_reader_until_its_file_changes(tmp_path, monkeypatch):
    """Finding the held-out documents walks the whole corpus in Python; the window asks for them at each training
    example and each checkpoint's scores. Read to the end once, they come from memory; a reader that stops early
    keeps nothing; an edited file is read again; a folder's are never kept (editing a file in it does not change
    the folder's time)."""
    from engine.data import corpora

    def write(path, tag):
        path.write_text("".join(f"{tag} paragraph {i} has a sentence. And another one.\n\n" for i in range(400)))

    text = tmp_path / "notes.txt"
    write(text, "first")
    corpus = corpora.get_corpus(str(text))
    walks = []
    make = corpus._make
    corpus._make = lambda: walks.append(1) or make()  # type: ignore[method-assign]
    early = next(iter(corpus.documents("heldout")))  # a reader that stops at the first
    assert early.sentences[0].startswith("first") and corpora.corpus_identity(str(text)) not in corpora._held
    held = list(corpus.documents("heldout"))
    assert 0 < len(held) < 40 and len(walks) == 2
    assert [d.title for d in corpus.documents("heldout")] == [d.title for d in held] and len(walks) == 2  # memory
    assert [d.title for d in corpora.get_corpus(str(text)).documents("heldout")] == [d.title for d in held]
    write(text, "second, longer")  # edited: another size, another time
    again = list(corpora.get_corpus(str(text)).documents("heldout"))
    assert [d.title for d in again] == [d.title for d in held] and again[0].sentences[0].startswith("second")
    folder = tmp_path / "folder"
    folder.mkdir()
    write(folder / "a.txt", "third")
    list(corpora.get_corpus(str(folder)).documents("heldout"))
    assert not any(k.startswith(str(folder.resolve())) for k in corpora._held)
    monkeypatch.setattr(corpora, "HELDOUT_KEPT_SENTENCES", 3)  # past the bound: streamed, not kept
    write(text, "fourth, longer still")
    assert list(corpora.get_corpus(str(text)).documents("heldout"))
    assert corpora.corpus_identity(str(text)) not in corpora._held


def test_a_cancelled_job_stops_converting_a_corpus_and_leaves_no_entry(tmp_path):
    """The conversion of the package corpora into the cache (the default corpus's first read: tens of seconds) stops
    at a cancelled job's next check, and the half-written entry goes (an unloaded model's fetch held it till then)."""
    import threading

    from engine.cancel import cancellable
    from engine.data.cache import write_entry
    from engine.data.corpora import Document, _write_cache
    from engine.errors import Cancelled

    stop = threading.Event()
    written = []

    def docs():
        for i in range(10_000):
            written.append(i)
            if i == 2500:
                stop.set()  # (cancelled while it converts)
            yield Document("s", f"t{i}", (f"Sentence {i}.",))

    with cancellable(stop), pytest.raises(Cancelled):
        write_entry(tmp_path / "corpus", "test", {"text.txt": lambda path: _write_cache(path, docs())})
    assert len(written) <= 4001 and list(tmp_path.iterdir()) == []
