"""bench/studies/averaging.py says whether the chosen candidate's lead is beyond the noise of the masked words
(a paired interval over the same words), instead of a sentence that called every lead noise."""

import numpy as np

from bench.studies.averaging import paired_difference, verdict


def _hits(rng, n, p1, p10):
    top10 = rng.random(n) < p10
    return (top10 & (rng.random(n) < p1 / p10)), top10


def _row(label, hits):
    return (label, "", float(hits[0].mean()), float(hits[1].mean()), len(hits[0]), {}, {}, np.zeros(1), (0, 0), hits)


def test_a_three_point_lead_on_twenty_thousand_words_is_beyond_the_noise_and_a_few_words_are_not():
    rng = np.random.default_rng(0)
    shipped = _hits(rng, 20_000, 0.28, 0.58)
    better = (shipped[0] | (rng.random(20_000) < 0.04), shipped[1] | (rng.random(20_000) < 0.08))
    mean, half = paired_difference(better, shipped)
    assert mean > half > 0
    best = _row("run", better)
    said = verdict(best, [_row("shipped", shipped), best])
    assert "beyond the noise" in said and "over shipped" in said
    # 300 words more in the top ten and 294 fewer, as two close saves differ: a lead of six, within the noise
    close = (shipped[0].copy(), shipped[1].copy())
    close[1][np.flatnonzero(~close[1])[:300]] = True
    close[1][np.flatnonzero(shipped[1] & ~shipped[0])[:294]] = False
    mean, half = paired_difference(close, shipped)
    assert 0 < mean < half
    best = _row("close", close)
    assert "within the noise" in verdict(best, [best, _row("shipped", shipped)])
    assert "+6 in the top ten" in verdict(best, [best, _row("shipped", shipped)])
