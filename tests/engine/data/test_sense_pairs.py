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
    with pytest.raises(CorpusError, match="is not a file"):
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
