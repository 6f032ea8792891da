"""Writing a bench's section of a RESULTS.md (bench/_report.py): the section replaced and nothing else; a file whose
markers would make the replacement delete other text is refused with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

import bench._report as report
from bench._report import MARKER, replaced, write_section

FILE = """# Results

<!-- begin speed -->
old speed
<!-- end speed -->

kept between

<!-- begin memory -->
old memory
<!-- end memory -->
"""


def test_a_section_is_replaced_and_the_rest_kept() -> None:
    text = replaced(FILE, "speed", "new speed\n")
    assert "new speed" in text and "old speed" not in text
    assert "kept between" in text and "old memory" in text
    assert replaced(text, "speed", "old speed") == FILE


def test_a_new_section_goes_at_the_end() -> None:
    text = replaced(FILE, "faults", "faults body")
    assert text.startswith(FILE.rstrip()) and text.endswith("<!-- begin faults -->\nfaults body\n<!-- end faults -->\n")


@pytest.mark.parametrize("broken", [
    FILE.replace("kept between", "kept between\n<!-- begin speed -->"),  # a stray begin: two of them
    FILE.replace("kept between", "<!-- end speed -->"),  # two ends
    FILE.replace("<!-- end speed -->", "").replace("old memory", "old memory\n<!-- end speed -->"),  # another inside
    "<!-- end speed -->\nbody\n<!-- begin speed -->\n",  # the end before the begin
])
def test_markers_that_would_delete_other_text_are_refused(broken: str) -> None:
    with pytest.raises(ValueError, match="speed"):
        replaced(broken, "speed", "new")


def test_a_refused_file_is_left_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report, "BENCH", tmp_path)  # a bench group's folder under a stand-in bench/
    (tmp_path / "group").mkdir()
    results = tmp_path / "group" / "RESULTS.md"
    broken = FILE.replace("kept between", "kept between\n<!-- begin speed -->")
    results.write_text(broken)
    with pytest.raises(ValueError):
        write_section("speed", "new", script=tmp_path / "group" / "some_bench.py")
    assert results.read_text() == broken
    write_section("memory", "new memory", script=tmp_path / "group" / "some_bench.py")
    assert "new memory" not in broken and "new memory" in results.read_text()
    assert "old memory" not in results.read_text() and not list((tmp_path / "group").glob(".*tmp*"))  # no temporary left


def test_every_section_of_the_repositorys_results_can_be_rewritten_alone() -> None:
    """Each bench's next run replaces its own section and nothing else, in every RESULTS.md of bench/."""
    files = sorted(report.BENCH.glob("**/RESULTS.md"))
    assert len(files) >= 5
    for results in files:
        text = results.read_text()
        names = {m.group(2) for m in MARKER.finditer(text)}
        assert names, results
        for name in names:
            rewritten = replaced(text, name, "x")
            assert rewritten.count("<!-- begin ") == text.count("<!-- begin "), (results, name)
            assert len(rewritten) > len(text) // 3, (results, name)  # nothing else of size went with it


def test_rows_re_run_alone_replace_theirs_and_keep_the_rest() -> None:
    from bench._report import rows_replaced, section

    text = replaced(FILE, "quality", "Prose.\n\n| model | score |\n|---|---:|\n| a (bert) | 1 |\n| b (gpt) | 2 |\n")
    body = section(text, "quality")
    assert body is not None and body.startswith("Prose.")
    again = rows_replaced(body, {"b (gpt)": "| b (gpt) | 3 |"}, "Rows re-run alone: b (gpt).")
    assert "| a (bert) | 1 |" in again and "| b (gpt) | 3 |" in again and "| b (gpt) | 2 |" not in again
    assert again.startswith("Prose.") and again.endswith("Rows re-run alone: b (gpt).")
    with pytest.raises(ValueError, match="no row of c"):
        rows_replaced(body, {"c (elmo)": "| c (elmo) | 4 |"}, "")
    grown = rows_replaced(body, {"c (elmo)": "| c (elmo) | 4 |"}, "Rows re-run alone: c (elmo).", new=("c (elmo)",))
    assert grown.index("| b (gpt) | 2 |") < grown.index("| c (elmo) | 4 |") < grown.index("Rows re-run alone")
    # a new row goes where its name sorts: "ab" between a and b, not after the last row
    sorted_in = rows_replaced(body, {"ab (nnlm)": "| ab (nnlm) | 8 |"}, "Rows re-run alone: ab (nnlm).",
                              new=("ab (nnlm)",))
    assert sorted_in.index("| a (bert) | 1 |") < sorted_in.index("| ab (nnlm) | 8 |") < sorted_in.index("| b (gpt) |")
    # each row keeps the note of its last re-run; a note whose every row was re-run since goes
    twice = rows_replaced(again, {"a (bert)": "| a (bert) | 5 |"}, "Rows re-run alone (day 2): a (bert).")
    assert "Rows re-run alone: b (gpt)." in twice and twice.endswith("Rows re-run alone (day 2): a (bert).")
    both = rows_replaced(twice, {"a (bert)": "| a (bert) | 6 |", "b (gpt)": "| b (gpt) | 7 |"},
                         "Rows re-run alone (day 3): a (bert), b (gpt).")
    assert both.count("Rows re-run alone") == 1 and both.startswith("Prose.") and "| b (gpt) | 7 |" in both
    assert section(FILE, "quality") is None


def test_rows_re_run_alone_must_be_measured_as_the_section_was(tmp_path, monkeypatch, capsys) -> None:
    """A section written with --kn3 (its perplexity after the slash) and --wic: a row re-run without them would
    lose those columns, so --keep-rows refuses before measuring anything."""
    import sys

    import bench.quality.model_quality as model_quality

    results = tmp_path / "RESULTS.md"
    results.write_text(replaced("# Results\n", "model-quality",
                                "`python bench/quality/model_quality.py --kn3 --wic`. Prose.\n\n| model |\n|---|\n"))
    monkeypatch.setattr(model_quality, "results_file", lambda _script: results)
    assert model_quality.written_with() == "`python bench/quality/model_quality.py --kn3 --wic"
    for argv in (["--keep-rows", "--wic"], ["--keep-rows", "--kn3"]):
        monkeypatch.setattr(sys, "argv", ["model_quality.py", "--models", "gpt-tiny", *argv])
        with pytest.raises(SystemExit):
            model_quality.main()
        assert "the section was written with" in capsys.readouterr().err
