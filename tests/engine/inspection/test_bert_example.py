"""The "Learn how BERT was trained" example masks as the model itself was trained: bert-tiny and
minilm-mlm by whole words (every piece of a chosen word), a run without whole-word masking piece by piece."""

from engine import api
from engine.inspection.bert_example import bert_training_example, trained_masking


def word_of(tokens):
    """Each position's word number (pieces "##…" join the word before)."""
    out, n = [], -1
    for t in tokens:
        n += 0 if t.startswith("##") else 1
        out.append(n)
    return out


def test_a_whole_word_model_gets_whole_words_chosen():
    handle = api.load("bert-tiny")
    assert trained_masking(handle) == (True, 0.15)
    split_words = 0
    for seed in range(8):
        ex = bert_training_example(handle, seed=seed)
        assert ex.whole_word and ex.chosen
        words = word_of(ex.original)
        chosen_words = {words[i] for i in ex.chosen}
        pieces = [i for i, w in enumerate(words) if w in chosen_words]
        assert sorted(ex.chosen) == pieces  # a chosen word is chosen whole
        split_words += sum(1 for w in chosen_words if words.count(w) > 1)
    assert split_words  # (some chosen word had pieces: the check above had something to check)


def test_a_run_trained_piece_by_piece_draws_pieces(contextual_runs):
    handle = api.load(contextual_runs["bert"][0])
    assert trained_masking(handle) == (False, 0.15)
    ex = bert_training_example(handle, corpus="default", seed=0)
    assert not ex.whole_word and ex.chosen and ex.mask_prob == 0.15
