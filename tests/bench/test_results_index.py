"""bench/RESULTS.md's index ("Where each result is") names every section of the benches' results files, by its
heading as written, and names no section that is not there: a reader who looks a result up finds it."""

import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
FILES = ("speed/RESULTS.md", "quality/RESULTS.md", "robustness/RESULTS.md", "studies/RESULTS.md")


def _index() -> set[tuple[str, str]]:
    text = (BENCH / "RESULTS.md").read_text(encoding="utf-8")
    table = text.split("## Where each result is", 1)[1].split("\n\n", 2)[1]
    return set(re.findall(r"^\| (.+?) \| \[[^]]+\]\(([^)]+)\)", table, re.M))


def _headings(name: str) -> set[str]:
    return {h.strip() for h in re.findall(r"^## (.+)$", (BENCH / name).read_text(encoding="utf-8"), re.M)}


def test_every_section_of_the_results_files_is_in_the_index_and_every_row_is_a_section():
    index = _index()
    assert len(index) > 40  # (the table was read)
    for name in FILES:
        headings = _headings(name)
        rows = {title for title, file in index if file == name}
        assert headings - rows == set(), f"{name}: sections missing from bench/RESULTS.md's index"
        assert rows - headings == set(), f"{name}: rows of bench/RESULTS.md's index that name no section"
    assert {file for _, file in index} <= set(FILES)
