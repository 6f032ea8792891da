"""How a run's metrics read in the app's status line, the CLI and the bench tables."""

from engine import api


def test_counts_read_as_counts_and_scores_keep_their_digits():
    metrics = {"mlm_accuracy": 0.37512, "sense_pairs_scored": 224.0, "masked_items": 20268.0, "perplexity": 45.2519}
    assert api.metrics_text(metrics) == (
        "mlm_accuracy 0.375, sense_pairs_scored 224, masked_items 20,268, perplexity 45.252")
    assert api.metrics_text({"loss": 4.35012}, digits=4) == "loss 4.3501"


def test_what_is_not_a_number_is_left_out_and_nothing_reads_as_empty():
    assert api.metrics_text({"accuracy": 1.0, "labels": ["a", "b"], "done": True}) == "accuracy 1.000"
    assert api.metrics_text({}) == ""
    assert api.metrics_text({"words": float("nan")}) == "words nan"
