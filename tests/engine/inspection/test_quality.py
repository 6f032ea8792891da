"""The bundled quality sets and their scores: cloze top-k, leave-one-out sense separation per layer,
and the GloVe bag-of-context baseline."""

import math

import numpy as np
import pytest

from engine import api
from engine.inspection.quality import (
    ClozeItem,
    SenseItem,
    _leave_one_out,
    cloze_items,
    cloze_scores,
    glove_context_baseline,
    sense_dev_items,
    sense_items,
    sense_separation,
)


def test_the_bundled_sets_are_what_the_issue_asks_for():
    cloze = cloze_items()
    assert len(cloze) >= 60 and {c.kind for c in cloze} == {"everyday", "news", "knowledge"}
    assert all(c.text.count("[MASK]") == 1 and c.answers for c in cloze)
    senses = sense_items()
    words = {s.word for s in senses}
    assert len(words) >= 10
    for word in words:
        per_sense = {}
        for s in senses:
            if s.word == word:
                per_sense[s.sense] = per_sense.get(s.sense, 0) + 1
        assert len(per_sense) == 2 and min(per_sense.values()) >= 8, word


def test_leave_one_out_gives_each_row_its_nearest_neighbours_sense():
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.8, 0.3]])
    assert _leave_one_out(vectors, ["a", "a", "b", "b", "a"]) == (5, 5)
    assert _leave_one_out(vectors, ["a", "b", "a", "b", "a"]) == (0, 5)  # every nearest neighbour has the other label


def test_rows_equally_near_share_the_choice_whatever_their_order():
    """A left-to-right model gives two sentences that begin alike the same vector: a row nearest to both gets
    half a right answer, not the sense of whichever came first (nor of whichever the rounding favoured)."""
    vectors = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.1], [0.0, 1.0]])
    senses = ["a", "b", "a", "b"]
    for order in ([0, 1, 2, 3], [1, 0, 2, 3], [2, 3, 1, 0], [3, 2, 0, 1]):
        right, counted = _leave_one_out(vectors[order], [senses[i] for i in order])
        # row 0 and row 1: each other (different senses, 0); row 2: rows 0 and 1 tied (1/2); row 3: row 2 (0)
        assert (right, counted) == (0.5, 4), order


def test_the_glove_baseline_separates_senses_by_their_context_words():
    items = [SenseItem("bank", "river", s) for s in (
        "the river bank was muddy and wet", "fish swam near the bank of the stream", "the bank flooded when the river rose")]
    items += [SenseItem("bank", "money", s) for s in (
        "the bank lent money to the company", "she paid the loan at the bank", "the bank raised interest rates on loans")]
    glove = api.load("glove-6b-50d")
    assert glove_context_baseline(glove, items) == 1.0


def test_sense_separation_has_one_score_per_layer(contextual_runs):
    bert = api.load(contextual_runs["bert"][0])
    items = [SenseItem("piano", "x", "She played the piano on stage."), SenseItem("piano", "x", "The piano was old."),
             SenseItem("piano", "y", "He tuned the piano at home."), SenseItem("piano", "y", "A piano fell.")]
    scores = sense_separation(bert, items)
    assert scores.shape == (bert.info["vector_layers"],) and ((scores >= 0) & (scores <= 1)).all()
    with pytest.raises(api.Unsupported):
        sense_separation(api.load("glove-6b-50d"), items)


def test_cloze_scores_count_accepted_answers(contextual_runs):
    bert = api.load(contextual_runs["bert"][0])
    first = bert.fill_mask("the [MASK] played the piano", k=10)[0].tokens
    items = [ClozeItem("everyday", "the [MASK] played the piano", (first[0].removeprefix("##"),)),
             ClozeItem("everyday", "the [MASK] played the piano", ("zzzz-not-a-word",))]
    scores = cloze_scores(bert, items)
    copies = first[0] in ("the", "played", "piano")  # the second item's first guess (not its answer) is a copy
    assert scores == {"cloze_top1": 0.5, "cloze_top10": 0.5, "cloze_items": 2.0, "cloze_copied": 0.5 * copies}
    with pytest.raises(api.Unsupported):
        cloze_scores(api.load(contextual_runs["gpt"][0]), items)


def test_a_cloze_guess_that_copies_a_word_of_the_sentence_is_counted():
    from types import SimpleNamespace

    class Copier:  # its first guess is always "paris"
        capabilities = {api.Capability.FILL_BLANK}

        def fill_mask(self, text, k=10):
            return [SimpleNamespace(tokens=("paris", "france") + ("x",) * (k - 2))]

    items = [ClozeItem("knowledge", "Paris is the capital of [MASK].", ("france",)),  # a copy, wrong
             ClozeItem("knowledge", "He flew to [MASK] and saw Paris.", ("paris",)),  # a copy, right: not counted
             ClozeItem("knowledge", "The capital of France is [MASK].", ("paris",))]  # no copy
    scores = cloze_scores(Copier(), items)
    assert scores["cloze_copied"] == pytest.approx(1 / 3) and scores["cloze_top1"] == pytest.approx(2 / 3)


def test_perplexity_per_word_scores_the_same_words_for_word_and_subword_models(runs, contextual_runs):
    import math

    from engine.inspection.quality import perplexity_per_word

    sentences = ["the piano played a soft tune .", "a red bus drove down the road"]
    ngram = api.load(runs["ngram"][0])
    scores = [ngram.score(s) for s in sentences]
    word_logprob = sum(sum(lp for t, lp in zip(r.tokens, r.token_logprobs, strict=True) if t != "</s>") for r in scores)
    result = perplexity_per_word(ngram, sentences)
    assert result["words"] == 14 and result["perplexity_per_word"] == pytest.approx(math.exp(-word_logprob / 14))
    gpt = api.load(contextual_runs["gpt"][0])
    total = sum(gpt.score(s).logprob for s in sentences)  # every BPE piece of every word
    assert perplexity_per_word(gpt, sentences)["perplexity_per_word"] == pytest.approx(math.exp(-total / 14))
    with pytest.raises(api.Unsupported):
        perplexity_per_word(api.load(contextual_runs["bert"][0]), sentences)


def test_spelling_is_a_distribution_over_words_that_prefers_familiar_spellings():
    from itertools import product

    from engine.inspection.quality import Spelling

    spelling = Spelling(["cat", "car", "bat", "tab"])
    # every string over its alphabet (a, b, c, r, t and "any other character"), plus ending: the mass of
    # all strings up to length 6 approaches 1 from below, never beyond
    letters = ["a", "b", "c", "r", "t", "?"]
    mass = sum(math.exp(spelling.logprob("".join(w))) for n in range(7) for w in product(letters, repeat=n))
    assert 0.5 < mass <= 1.0
    assert spelling.logprob("cat") > spelling.logprob("tca") > spelling.logprob("qqq")
    assert spelling.logprob("CAT") == spelling.logprob("cat")


def test_open_vocabulary_perplexity_charges_a_word_model_for_spelling_the_words_it_does_not_know(runs):
    from engine.inspection.quality import Spelling, perplexity_per_word

    ngram = api.load(runs["ngram"][0])
    unknown = "the zqxvwy ."
    assert ngram.score(unknown).unknown == (False, True, False, False)  # ..., "</s>"
    assert ngram.score("the qwzzk zqxvwy").unknown == (False, True, True, False)
    known = "the ."
    spelling = Spelling(["the", "piano", "zebra"])
    closed = perplexity_per_word(ngram, [unknown])
    opened = perplexity_per_word(ngram, [unknown], spelling)
    assert closed["unknown_words"] == opened["unknown_words"] == 1
    # the same words, one of them now paid for letter by letter
    expected = math.exp(-(-math.log(closed["perplexity_per_word"]) * 3 + spelling.logprob("zqxvwy")) / 3)
    assert opened["perplexity_per_word"] == pytest.approx(expected)
    assert opened["closed_perplexity_per_word"] == closed["perplexity_per_word"]  # (both from the one pass)
    both, alone = perplexity_per_word(ngram, [known], spelling), perplexity_per_word(ngram, [known])
    assert both["perplexity_per_word"] == both["closed_perplexity_per_word"] == alone["perplexity_per_word"]


def test_masked_word_scores_mask_one_word_per_sentence_and_count_the_models_hits(contextual_runs):
    from engine.inspection.quality import masked_word_scores

    bert = api.load(contextual_runs["bert"][0])
    sentences = ["the cat sat on the mat", "a dog ran in the park today", "too short .", "the red bus drove"]
    scores = masked_word_scores(bert, sentences)
    assert scores["masked_items"] == 3  # "too short ." has too few words to mask
    assert 0 <= scores["masked_top1"] <= scores["masked_top10"] <= 1
    assert masked_word_scores(bert, sentences) == scores  # seeded: the same words every time

    class Oracle:  # a model that always proposes the words of the sentence: every masked word is in its top 10
        capabilities = bert.capabilities

        def fill_mask(self, text, k=10):
            from types import SimpleNamespace

            words = [w for w in sentences[0].split() + sentences[1].split() + sentences[3].split()]
            return [SimpleNamespace(tokens=tuple(dict.fromkeys(words))[:10])]

    oracle = masked_word_scores(Oracle(), [sentences[0]])
    assert oracle["masked_top10"] == 1.0
    with pytest.raises(api.Unsupported):
        masked_word_scores(api.load(contextual_runs["gpt"][0]), sentences)


def test_a_perplexity_ratio_pairs_sentences_so_a_few_long_ones_do_not_pass_for_many_words() -> None:
    """Two models that differ on two long sentences only: the interval is the sentences', so it stays wide; with the
    same difference spread evenly over every word it is as narrow as the difference is steady."""
    import numpy as np

    from engine.errors import Unsupported
    from engine.inspection.quality import perplexity_ratio

    words = np.array([10] * 38 + [200, 200])
    a = -4.0 * words.astype(float)
    lumped = a.copy()
    lumped[-2:] -= 40.0  # b pays 80 nats more, all on the two long sentences
    ratio, low, high = perplexity_ratio(a, lumped, words)
    assert ratio == pytest.approx(np.exp(-80 / words.sum()))
    assert low < ratio < high and high - low > 0.02  # 40 sentences, 2 of them differ: not a sure lead
    even = a - 80.0 * words / words.sum()
    r2, low2, high2 = perplexity_ratio(a, even, words)
    assert r2 == pytest.approx(ratio) and high2 - low2 < 1e-9
    with pytest.raises(Unsupported):
        perplexity_ratio(a[:1], a[:1], words[:1])


def test_a_view_of_senses_leaves_the_last_layer_only_for_a_layer_clearly_better():
    """An earlier layer that knows every word's senses where the last knows none is chosen; one that knows a single
    word's is a few sentences ahead, within the noise, and the last layer stays."""
    from engine.inspection.quality import clear_sense_layer

    class TwoLayers:  # layer 0 tells the senses of the words ``knows`` apart; layer 1 gives one vector whatever the sense
        capabilities = api.Capability.CONTEXTUAL

        def __init__(self, knows):
            self.knows = knows

        def contextual_vectors(self, sentence):
            word, sense, draw = sentence.split()
            noise = 0.01 * int(draw)  # (no two rows the same)
            first = [1.0, noise, (1.0 if sense == "b" else -1.0) if word in self.knows else 0.0]
            last = [1.0, noise, 0.0]
            return api.ContextVectors((word, sense, draw), np.array([[first] * 3, [last] * 3], np.float32), (True,) * 3)

    words = [f"w{k}" for k in range(12)]
    items = [SenseItem(w, s, f"{w} {s} {i}") for w in words for s in "ab" for i in range(4)]
    assert clear_sense_layer(TwoLayers(set(words)), items) == 0
    assert clear_sense_layer(TwoLayers({"w0"}), items) == 1

    class Typed(TwoLayers):  # the same, reading real sentences: the sense from the set itself
        def __init__(self, knows, items):
            super().__init__(knows)
            first = {}  # each word's first sense is "b" to TwoLayers, its other "a"
            self.sense = {item.sentence: (item.word, "b" if first.setdefault(item.word, item.sense) == item.sense
                                          else "a", k) for k, item in enumerate(items)}

        def contextual_vectors(self, sentence):
            word, sense, k = self.sense[sentence]
            return super().contextual_vectors(f"{word} {sense} {k}")

    dev, test = sense_dev_items(), sense_items()
    # chosen on the development set, whatever the test set says: nothing is chosen on the test set
    assert clear_sense_layer(Typed({i.word for i in dev}, dev + test)) == 0
    assert clear_sense_layer(Typed({i.word for i in test}, dev + test)) == 1


def test_the_development_sense_set_is_apart_from_the_test_set_and_the_taught_words():
    """Choosing a layer on the sense set the scores are reported on would flatter them; teaching senses on its words
    (sense_train.tsv, for bert-tiny and minilm-mlm) would make the choice about memory."""
    from engine.data.text import word_tokenize
    from engine.inspection.quality import SETS, _rows

    dev = sense_dev_items()
    words = {i.word for i in dev}
    assert len(words) >= 20
    for word in words:
        per_sense: dict[str, int] = {}
        for item in dev:
            if item.word == word:
                per_sense[item.sense] = per_sense.get(item.sense, 0) + 1
        assert len(per_sense) == 2 and set(per_sense.values()) == {8}, word
    for item in dev:  # the word once, as a word (the vector read is its first occurrence)
        assert [w.lower() for w in word_tokenize(item.sentence)].count(item.word) == 1, item.sentence
    taught = {row[0] for row in _rows("sense_train.tsv")}
    assert not words & ({i.word for i in sense_items()} | taught)
    assert (SETS / "senses_dev.tsv").exists() and len({i.sentence for i in dev}) == len(dev)
