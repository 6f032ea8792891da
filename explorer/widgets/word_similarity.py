"""How far a model's static vectors agree with people (WordSim-353's Spearman ρ, measured by the engine): the
number beside its nearest words, so a list from vectors that agree little (a small NNLM's input features) is not
read as the word's meaning."""

from __future__ import annotations

AGREEMENT_TIP = ("How far a model's word vectors agree with people: the rank correlation (Spearman's ρ) of its "
                 "cosines with people's similarity ratings of WordSim-353's word pairs. 1: the same order as people's; "
                 "0: none. Higher: its nearest words are nearer the ones people would name.")
MIN_COVERAGE = 0.5  # a ρ over fewer of the pairs than this says little of the model: not shown


def agreement_cell(name: str, similarity: dict[str, float | None] | None) -> tuple[str, str]:
    """The static table's WordSim-353 cell of a model: (its text, its tooltip)."""
    if similarity is None:
        return "—", "WordSim-353's word pairs are not installed (gensim's test data)"
    rho, coverage = similarity.get("spearman"), float(similarity.get("coverage") or 0.0)
    if rho is None or coverage < MIN_COVERAGE:
        return "—", f"{name} knows {coverage:.0%} of WordSim-353's word pairs: too few to say"
    return f"{rho:.2f}", (f"{name}: ρ = {rho:.2f} over the {coverage:.0%} of WordSim-353's 353 word pairs whose "
                          "words it knows")


def agreement_sentence(name: str, similarity: dict[str, float | None] | None) -> str:
    """``agreement_cell`` as a clause of a note ("" where there is nothing to say)."""
    text, _ = agreement_cell(name, similarity)
    if text == "—":
        return ""
    return (f"; its vectors agree with people's similarity ratings at ρ = {text} (WordSim-353's word pairs: 1 would be "
            "people's order exactly)")
