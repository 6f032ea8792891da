"""GloVe's cached word list is read a chunk of lines at a time (so a load lets the window's thread run between
chunks): the same words, in order, as one split of the whole file, whatever the chunk size and the text."""

import pytest


@pytest.mark.parametrize("text", ["", "bank\n", "bank\nriver\n", "é\nß\n日本\n" * 5000, "x\n\ny\n", "a\u2028b\nc\x0bd\n"])
@pytest.mark.parametrize("chunk", [1, 3, 64, 1 << 18])
def test_the_words_read_a_chunk_at_a_time_are_the_files_lines(tmp_path, monkeypatch, text, chunk):
    import engine.models.glove as glove

    path = tmp_path / "words.txt"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(glove, "WORDS_CHUNK", chunk)
    assert glove.read_words(path) == text.split("\n")[:-1]  # (not splitlines: a word may hold U+2028)
