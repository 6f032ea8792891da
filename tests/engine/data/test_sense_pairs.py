"""Word-in-context pair files (WiC's layout, or one TSV with a label column): read, checked, encoded."""

import pytest

from engine.data.sense_pairs import encode_pairs, fingerprint, read_sense_pairs
from engine.errors import CorpusError

PAIRS = [
    ("bank", "N", "6-1", "She deposited the money at the bank .", "The bank approved the loan on Monday .", "T"),
    ("bank", "N", "6-5", "She deposited the money at the bank .", "We sat on the grassy bank of the river .", "F"),
    ("play", "V", "2-3", "The children play football outside .", "My cousins often play tennis .", "T"),
    ("play", "N", "1-3", "The play opened at the theatre .", "Children love to play outside .", "F"),
]


def write_wic(folder, rows, gold=True):
    data = folder / "pairs.data.txt"
    data.write_text("\n".join("\t".join(r[:5]) for r in rows) + "\n", encoding="utf-8")
    if gold:
        (folder / "pairs.gold.txt").write_text("\n".join(r[5] for r in rows) + "\n", encoding="utf-8")
    return data


def test_wic_layout_and_one_file_with_labels_read_the_same_pairs(tmp_path):
    wic = read_sense_pairs(write_wic(tmp_path, PAIRS))
    single = tmp_path / "pairs.tsv"
    single.write_text("\n".join("\t".join(r) for r in PAIRS), encoding="utf-8")
    one = read_sense_pairs(single)
    assert wic == one and [p.same for p in wic] == [True, False, True, False]
    assert wic[1].sentence2.split(" ")[wic[1].index2] == "bank"
    assert fingerprint(wic) == fingerprint(one) != fingerprint(wic[:3])


@pytest.mark.parametrize("rows, gold, message", [
    ([PAIRS[0][:5] + ("maybe",), PAIRS[1]], False, "label must be T or F"),
    ([("bank", "N", "9-1", *PAIRS[0][3:])], False, "points past the end"),
    ([("bank", "N", "x", *PAIRS[0][3:])], False, "indices must look like"),
    ([PAIRS[0][:4]], False, "found 4 columns"),
    ([PAIRS[0], PAIRS[2]], False, "same label"),
    ([r[:5] for r in PAIRS], False, "found 5 columns"),  # WiC's data file without its gold file beside it
])
def test_a_malformed_file_is_refused_with_its_line(tmp_path, rows, gold, message):
    path = tmp_path / "bad.tsv"
    path.write_text("\n".join("\t".join(r) for r in rows), encoding="utf-8")
    with pytest.raises(CorpusError, match=message):
        read_sense_pairs(path)


def test_a_gold_file_of_another_length_or_a_missing_file_is_refused(tmp_path):
    data = write_wic(tmp_path, PAIRS)
    (tmp_path / "pairs.gold.txt").write_text("T\nF\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="4 pairs but"):
        read_sense_pairs(data)
    with pytest.raises(CorpusError, match="is neither a file nor a bundled set"):
        read_sense_pairs(tmp_path / "nowhere.tsv")


def test_the_target_words_pieces_are_marked(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "she", "deposited", "the", "money", "at",
                                         "ban", "##k", ".", "we", "sat", "on", "grassy", "of", "river"])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    pairs = read_sense_pairs(write_wic(tmp_path, [PAIRS[1], PAIRS[0]]))
    ids, pieces = encode_pairs(pairs, tok, cls=1, sep=2, pad=0)
    assert ids.shape == pieces.shape and ids.shape[0] == 4
    marked = [vocab_id for vocab_id, m in zip(ids[0], pieces[0], strict=True) if m]
    assert marked == [vocab["ban"], vocab["##k"]]  # "bank": both of its pieces, nothing else
    assert ids[0, 0] == 1 and pieces[0, 0] == 0  # [CLS] is never the word
    assert pieces[1].sum() == 2 and ids[1, int(pieces[1].argmax())] == vocab["ban"]


def test_sentences_grouped_by_sense_make_every_pair_of_one_word(tmp_path):
    path = tmp_path / "bank.tsv"
    path.write_text("# word, sense, sentence\n"
                    "bank\triver\tWe sat on the bank.\n"
                    "bank\triver\tThe muddy bank was steep.\n"
                    "bank\tmoney\t\"Bank\" loans are dear.\n"
                    "play\tstage\tThe play was long.\n", encoding="utf-8")
    pairs = read_sense_pairs(path)
    assert len(pairs) == 3  # bank: 3 sentences, 3 pairs; play: one sentence, none
    assert [p.same for p in pairs] == [True, False, False]
    first = pairs[0]
    assert first.sentence1 == "We sat on the bank ." and first.sentence1.split(" ")[first.index1] == "bank"
    assert pairs[1].sentence2 == '" Bank " loans are dear.' and pairs[1].sentence2.split(" ")[pairs[1].index2] == "Bank"


def test_a_sentence_without_its_word_is_refused_with_its_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("bank\triver\tWe sat on the bank.\nbank\tmoney\tThe banks lend money.\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="line 2: the word 'bank' is not in its sentence"):
        read_sense_pairs(path)


def test_the_bundled_training_sentences_leave_the_scored_sense_set_unseen():
    from engine.inspection.quality import SETS, sense_items

    pairs = read_sense_pairs("sense-train")
    assert pairs == read_sense_pairs(SETS / "sense_train.tsv")
    words = {p.word for p in pairs}
    assert len(words) >= 30 and {True, False} == {p.same for p in pairs}
    assert not words & {item.word for item in sense_items()}  # no word of the benches' sense set is taught
