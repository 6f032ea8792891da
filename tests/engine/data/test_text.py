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
