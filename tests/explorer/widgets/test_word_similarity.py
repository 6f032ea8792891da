"""The WordSim-353 cell beside a static model's nearest words: a ρ where the model knows enough of the pairs, a dash
that says why where it does not (a ρ over a few pairs would be read as the model's)."""

from explorer.widgets.word_similarity import agreement_cell, agreement_sentence


def test_a_rho_is_shown_only_over_enough_of_the_pairs():
    assert agreement_cell("w2v", {"spearman": 0.6145, "coverage": 0.963}) == (
        "0.61", "w2v: ρ = 0.61 over the 96% of WordSim-353's 353 word pairs whose words it knows")
    text, tip = agreement_cell("small", {"spearman": 0.9, "coverage": 0.2})
    assert text == "—" and "knows 20% of WordSim-353's word pairs: too few" in tip
    assert agreement_cell("none", {"spearman": None, "coverage": 0.0})[0] == "—"
    assert agreement_cell("x", None) == ("—", "WordSim-353's word pairs are not installed (gensim's test data)")
    assert "ρ = 0.61" in agreement_sentence("w2v", {"spearman": 0.6145, "coverage": 0.963})
    assert agreement_sentence("small", {"spearman": 0.9, "coverage": 0.2}) == ""
