"""A vocabulary kept as one buffer stands in for the list of words it replaces: the same words in the same order, the
same answers to indexing, slicing, ``in`` and ``index``, whatever the words' characters and lengths."""

import random

import numpy as np
import pytest

from engine.data.word_list import WordList, _hash

ODD = ["bank", "", "river", "é", "ß", "日本", "a\u2028b", "c\x0bd", "bank", "x" * 300, "\u00a0", "Bank", "  ", "🙂"]


def _random_words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdeé日\u2028 \t-"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(0, 12))) for _ in range(n)]


@pytest.mark.parametrize("words", [[], ["bank"], ODD, _random_words(5000, 1)], ids=["empty", "one", "odd", "random"])
def test_a_word_list_answers_as_the_list_does(words):
    wl = WordList.from_words(words)
    assert len(wl) == len(words) and list(wl) == words and wl == words
    assert [wl[i] for i in range(len(words))] == words
    for s in (slice(None), slice(2, 7), slice(-3, None), slice(None, None, 3), slice(5, 2)):
        assert wl[s] == words[s]
    for w in set(words):
        assert w in wl and wl.index(w) == words.index(w) and wl.find(w) == words.index(w)  # the first of repeats
    for w in ("not a word here", "bank ", "ban", "日", "x" * 299):
        assert (w in wl) == (w in words)
        assert wl.find(w) == (words.index(w) if w in words else None)
    assert wl.find(3) is None and 3 not in wl and "a\nb" not in wl
    if words:
        assert wl[-1] == words[-1]
        with pytest.raises(IndexError):
            wl[len(words)]


def test_a_missing_word_raises_as_list_index_does():
    wl = WordList.from_words(["a", "b"])
    with pytest.raises(ValueError):
        wl.index("c")
    assert wl.index("b", 1) == 1


def test_a_file_of_lines_gives_its_lines_and_a_file_that_is_not_utf8_is_refused():
    assert WordList.from_lines(b"bank\nriver") == ["bank", "river"]
    assert WordList.from_lines("é\n\nß\n".encode()) == ["é", "", "ß"]
    assert list(WordList.from_lines(b"")) == []
    with pytest.raises(UnicodeDecodeError):
        WordList.from_lines(b"bank\n\xff\xfe\n")
    with pytest.raises(ValueError):
        WordList.from_words(["a\nb"])


def test_words_whose_hashes_collide_are_told_apart_by_their_bytes(monkeypatch):
    import engine.data.word_list as word_list

    words = ["bank", "river", "money", "bank"]
    monkeypatch.setattr(word_list, "_hash", lambda b: 0)  # every word one hash: the lookup must compare bytes
    wl = WordList.from_words(words)
    wl._hashes[:] = 0
    assert [wl.find(w) for w in ("bank", "river", "money", "stage")] == [0, 1, 2, None]


def test_the_lookups_hash_is_the_one_the_whole_list_was_hashed_with():
    words = _random_words(2000, 2) + ODD
    wl = WordList.from_words(words)
    by_row = np.empty_like(wl._hashes)
    by_row[wl._order] = wl._hashes
    assert [int(h) for h in by_row] == [_hash(w.encode()) for w in words]


@pytest.mark.parametrize("chunk", [1, 7, 1 << 16])
def test_iteration_a_chunk_at_a_time_gives_every_word(monkeypatch, chunk):
    import engine.data.word_list as word_list

    monkeypatch.setattr(word_list, "_CHUNK", chunk)
    words = _random_words(3000, 3)
    assert list(WordList.from_words(words)) == words
    assert WordList.from_words(words)[100:2000] == words[100:2000]


@pytest.mark.parametrize("text", ["", "bank\n", "bank\nriver\n", "é\nß\n日本\n" * 5000, "x\n\ny\n", "a\u2028b\nc\x0bd\n"])
@pytest.mark.parametrize("chunk", [1, 3, 64, 1 << 16])
def test_a_words_file_read_a_chunk_at_a_time_gives_the_files_lines(monkeypatch, text, chunk):
    import engine.data.word_list as word_list

    monkeypatch.setattr(word_list, "_CHUNK", chunk)
    assert list(WordList.from_lines(text.encode())) == text.split("\n")[:-1]  # (not splitlines: U+2028 is in a word)
