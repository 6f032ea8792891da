"""bench/studies/sentence_spacing.py splits the next token's probability after a sentence's end three ways: a token
that begins with a space, the end of text, and the rest (glued on)."""

import numpy as np
import pytest

from bench.studies.sentence_spacing import shares


def test_the_probability_after_a_sentence_end_is_split_three_ways() -> None:
    # vocabulary: 0 end of text, 1 " she", 2 "she", 3 " the"
    spaced = np.array([False, True, False, True])
    ended = np.array([True, False, False, False])
    probs = np.array([[0.1, 0.2, 0.6, 0.1],  # glued on is likeliest
                      [0.5, 0.3, 0.1, 0.1]])  # the text ends
    s = shares(probs, spaced, ended)
    assert (s.spaced, s.ended, s.glued) == pytest.approx((0.35, 0.3, 0.35))
    assert (s.top_spaced, s.top_ended, s.top_glued) == (0.0, 0.5, 0.5)
    spaced_model = shares(np.array([[0.0, 0.7, 0.1, 0.2]]), spaced, ended)
    assert spaced_model.top_spaced == 1.0 and spaced_model.glued == pytest.approx(0.1)
