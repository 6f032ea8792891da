"""bench/studies/language_models.py chooses by the declared rule: the lowest open-vocabulary perplexity among the
candidates that clear the sense-separation guard; none where none does."""

from bench.studies.language_models import Scored, chosen


def test_the_lowest_open_vocabulary_perplexity_above_the_guard_is_chosen() -> None:
    shipped = Scored("shipped", "elmo-tiny", 145.8, 255.8, 9000, [0.467, 0.642, 0.534])
    better = Scored("run", "runs/on3", 140.0, 250.0, 9000, [0.467, 0.630, 0.520])
    forgot = Scored("forgot", "runs/x", 120.0, 200.0, 9000, [0.467, 0.540, 0.500])  # lower, but senses lost
    closed_only = Scored("closed", "runs/y", 100.0, 260.0, 9000, [0.467, 0.700, 0.600])  # its own vocabulary only
    assert chosen([shipped, better, forgot, closed_only], 0.55) is better
    assert chosen([shipped, forgot], 0.55) is shipped
    assert chosen([forgot], 0.55) is None
    assert chosen([shipped, forgot], 0.0) is forgot


def test_a_lead_is_set_against_the_first_candidate_with_a_paired_interval() -> None:
    import numpy as np

    from bench.studies.language_models import against

    rng = np.random.default_rng(0)
    words = rng.integers(3, 30, size=400)
    shipped_each = -5.5 * words + rng.normal(0, 3, size=400)  # what each sentence costs the shipped model
    shipped = Scored("shipped", "gpt-tiny", 0, 0, 0, [0.6], shipped_each)
    steady = Scored("run", "runs/a", 0, 0, 0, [0.6], shipped_each + 0.05 * words)  # 0.05 nats a word cheaper
    assert against(steady, shipped, words).startswith("×0.951 (0.951–0.951, beyond the noise")
    swings = shipped_each + np.where(np.arange(400) % 2 == 0, 10.0, -10.0)  # as much better as worse
    mixed = against(Scored("run", "runs/b", 0, 0, 0, [0.6], swings), shipped, words)
    assert mixed.startswith("×1.000 (") and "within the noise" in mixed
    assert against(shipped, shipped, words) == "—"


def test_a_model_without_layers_is_scored_beside_the_others_and_passes_no_senses_guard():
    """An n-gram has perplexity but no layers: its row says so, and only a guard of 0 lets it be chosen."""
    from bench.studies.language_models import senses_cell

    ngram = Scored("kn3", "ngram-kn3", 150.0, 220.0, 900, [])
    gpt = Scored("gpt", "gpt-tiny", 200.0, 212.0, 0, [0.5, 0.64])
    assert chosen([ngram, gpt], 0.0) is gpt and chosen([ngram, gpt], 0.6) is gpt
    assert chosen([ngram], 0.0) is ngram and chosen([ngram], 0.5) is None
    assert senses_cell([]) == "— (no layers)" and senses_cell([0.5, 0.64]) == "0.500, 0.640 (0.640 at 1)"


def test_a_side_by_side_probe_writes_no_section_unless_it_is_given_one():
    from bench.studies.language_models import section_to_write

    assert section_to_write(None, side_by_side=True) is None
    assert section_to_write(None, side_by_side=False) == "language-model-choice"
    assert section_to_write("nnlm-vs-kn3", side_by_side=True) == "nnlm-vs-kn3"
