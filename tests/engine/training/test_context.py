"""TrainContext: what the events say about speed."""


import pytest

from tests.engine.helpers import run, w2v_spec  # noqa: F401


def test_throughput_is_measured_over_half_a_second_not_between_close_events(topic_corpus, tmp_path, monkeypatch):
    """Events a few ms apart would plot timer jitter; the speed covers at least RATE_WINDOW_S."""
    from engine.training import context

    clock = [100.0]
    monkeypatch.setattr(context.time, "perf_counter", lambda: clock[0])
    ctx = context.TrainContext(w2v_spec(topic_corpus, tmp_path / "t"), None)
    ctx.started(1e6, "words")
    rates, done = [], 0
    for dt, words in [(0.1, 1000), (0.01, 900), (0.02, 50), (0.5, 4000), (0.6, 600)]:  # seconds, words since
        clock[0] += dt
        done += words
        rates.append(ctx.step_metrics(0, done, 1.0, 0.01).throughput)
    assert rates[0] == pytest.approx(1000 / 0.1)  # the first: since the start
    assert rates[1] == rates[2] == rates[0]  # 10 and 30 ms later: too soon to measure again
    assert rates[3] == pytest.approx((900 + 50 + 4000) / 0.53)
    assert rates[4] == pytest.approx(600 / 0.6)
