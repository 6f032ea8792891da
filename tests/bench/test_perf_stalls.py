"""bench/robustness/perf_stalls.py reads perf's samples and keeps those inside the stalls."""

from __future__ import annotations

from bench.robustness.perf_stalls import made_of, neighbours, read_samples, read_windows, within

SCRIPT = """\
4242 100.010000:
\t    7f01 gc_collect_main (/usr/lib/libpython3.11.so.1.0)
\t    7f02 QTimer::timeout (/usr/lib/libQt6Core.so.6)
\t    7f03 main (/usr/bin/python3.11)

4242 100.200000:
\t    7f04 clear_page_erms ([kernel.kallsyms])
\t    7f05 asm_exc_page_fault ([kernel.kallsyms])
\t    7f06 QRasterPaintEngine::fillRect+0x1f (/usr/lib/libQt6Gui.so.6)
\t    7f07 QWidgetPrivate::drawWidget (/usr/lib/libQt6Widgets.so.6)
\t    7f08 [unknown] ([unknown])

4242 105.000000:
\t    7f09 QWidgetPrivate::drawWidget (/usr/lib/libQt6Widgets.so.6)
\t    7f0a main (/usr/bin/python3.11)
"""


def test_only_the_samples_inside_a_stall_are_counted_by_what_they_were(tmp_path):
    script, windows = tmp_path / "chaos.txt", tmp_path / "stalls.txt"
    script.write_text(SCRIPT)
    windows.write_text("100.0000 100.3000 talk\n")
    samples = read_samples(str(script))
    assert [(thread, when) for thread, when, _ in samples] == [(4242, 100.01), (4242, 100.2), (4242, 105.0)]
    assert samples[1][2][:3] == ["clear_page_erms", "asm_exc_page_fault", "QRasterPaintEngine::fillRect"]
    inside = within(samples, read_windows(str(windows)))
    assert len(inside) == 2  # the third came after the stall
    # a page fault while painting counts as the page fault (the first marker its frames hold)
    assert made_of(inside) == {"full or young garbage collection": 1, "page faults (memory touched first)": 1}
    found, callers = neighbours(inside, "asm_exc_page_fault", callees=False, depth=2)
    assert found == 1 and callers == {"QRasterPaintEngine::fillRect > QWidgetPrivate::drawWidget": 1}


def test_a_thread_id_perf_padded_with_spaces_still_starts_a_sample(tmp_path):
    """perf right-aligns a short thread id (``  6520 38824.923123:``): read as the samples' first lines, not frames."""
    script = tmp_path / "chaos.txt"
    script.write_text(SCRIPT.replace("4242 1", "  424 1"))
    samples = read_samples(str(script))
    assert [(thread, when) for thread, when, _ in samples] == [(424, 100.01), (424, 100.2), (424, 105.0)]
    assert samples[0][2] == ["gc_collect_main", "QTimer::timeout", "main"]
