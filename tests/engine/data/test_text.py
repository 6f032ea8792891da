from engine.data.corpora import get_corpus
from engine.data.text import load_subword_tokenizer, train_subword_tokenizer, word_tokenize


def test_word_tokenizer_splits_punctuation_and_lowercases():
    assert word_tokenize("Don't stop, U.S. Bank!") == ["don't", "stop", ",", "u.s", ".", "bank", "!"]
    assert word_tokenize("Bank", lowercase=False) == ["Bank"]


def test_wordpiece_trains_saves_and_adds_bert_specials(topic_corpus, tmp_path):
    sentences = list(get_corpus(str(topic_corpus)).sentences())
    tok = train_subword_tokenizer(sentences, "wordpiece", vocab_size=200)
    for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"):
        assert tok.token_to_id(special) is not None
    tok.save(str(tmp_path / "tokenizer.json"))
    again = load_subword_tokenizer(tmp_path / "tokenizer.json")
    enc = again.encode("She played the guitar.", "The truck stopped.")
    assert enc.tokens[0] == "[CLS]" and enc.tokens.count("[SEP]") == 2
    assert set(enc.type_ids) == {0, 1}
    # an unseen word is split into known pieces rather than lost
    assert "[UNK]" not in again.encode("guitars").tokens


def test_byte_level_bpe_round_trips_any_text(topic_corpus):
    sentences = list(get_corpus(str(topic_corpus)).sentences())
    tok = train_subword_tokenizer(sentences, "bpe", vocab_size=400)
    text = "she played the zither, naïvely ☃"
    assert tok.decode(tok.encode(text).ids) == text


def test_one_pass_count_and_encode_equals_building_the_vocabulary_then_encoding(tmp_path):
    import random

    import numpy as np

    from engine.data.text import count_and_encode, encode_sentences, remap_ids
    from engine.data.vocab import Vocab

    rng = random.Random(0)
    words = [f"w{i}" for i in range(60)]
    sentences = [[rng.choice(words[: rng.randint(1, 60)]) for _ in range(rng.randint(1, 9))] for _ in range(400)]
    sentences += [["rare1"], ["rare2", "rare3"]]  # sentences that vanish when their words are dropped
    vocab = Vocab.build(sentences, min_count=4, max_vocab=40)
    want_ids, want_starts = encode_sentences(sentences, vocab.index)  # build, then encode in memory
    index, counts, raw, starts = count_and_encode(sentences, tmp_path / "raw", block=7)
    one = Vocab.from_counts(dict(zip(index, counts.tolist(), strict=True)), min_count=4, max_vocab=40)
    assert one.words == vocab.words and np.array_equal(one.counts, vocab.counts)
    mapping = np.array([one.index.get(w, -1) for w in index])
    ids, new_starts = remap_ids(raw, starts, mapping, tmp_path / "one-pass", block=13)  # blocks cut sentences
    assert np.array_equal(np.asarray(ids), np.asarray(want_ids)) and np.array_equal(new_starts, want_starts)
