"""The monkey's log in one buffer reads back as the list it replaced: by index, slice and in order, any text."""

import threading

import pytest

from bench.robustness.line_log import LineLog

LINES = ["    1 click: bank", "", "!! stall 312 ms (tab Lens)", "    3 type: Zürich’s 🏦 \u2581the", "lone \udce9 surrogate"]


def test_lines_read_back_as_a_list_reads_them():
    log, plain = LineLog(), []
    for line in LINES:
        log.append(line)
        plain.append(line)
    assert len(log) == len(plain) and list(log) == plain
    assert [log[i] for i in range(-len(plain), len(plain))] == [plain[i] for i in range(-len(plain), len(plain))]
    for cut in (slice(None), slice(2, None), slice(-25, None), slice(1, 3), slice(None, None, 2), slice(4, 1, -1)):
        assert log[cut] == plain[cut], cut
    assert "\n".join(log) == "\n".join(plain)
    with pytest.raises(IndexError):
        log[len(plain)]


@pytest.mark.parametrize("threads", [2, 4, 8])
def test_lines_appended_from_several_threads_stay_whole(threads):
    log = LineLog()

    def write(k):
        for i in range(500):
            log.append(f"thread {k} line {i} " + "x" * (i % 37))

    workers = [threading.Thread(target=write, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(log) == threads * 500
    for k in range(threads):
        mine = [line for line in log if line.startswith(f"thread {k} ")]
        assert mine == [f"thread {k} line {i} " + "x" * (i % 37) for i in range(500)]
