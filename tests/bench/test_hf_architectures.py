"""bench/robustness/hf_architectures.py runs (two architectures of its table, nothing written) and tells a crash
from a refusal: a query that raises anything but a Word2BertError is a crash, and the run exits 1."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.robustness import hf_architectures as bench  # noqa: E402


def test_the_bench_opens_two_architectures_and_counts_no_crash(capsys):
    assert bench.main(["--only", "GPT-2,BERT sentence classifier", "--no-write"]) == 0
    out = capsys.readouterr().out
    assert "| GPT-2 | attention, contextual, next token, sentence score | – | ✓ | ✓ |" in out
    assert "0 crashed" in out


def test_a_query_that_raises_is_a_crash_and_fails_the_run(monkeypatch, capsys):
    def broken(handle):
        raise KeyError("a defect")

    monkeypatch.setitem(bench.QUERIES, "vectors", broken)
    assert bench.main(["--only", "GPT-2", "--no-write"]) == 1
    assert "GPT-2, vectors: CRASH: KeyError" in capsys.readouterr().out
