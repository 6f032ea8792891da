"""The chaos bench's log says every 10 s what memory the window has and what work is under way, so that a rise of
the memory while the monkey acts can be tied to the jobs it set off (bench/robustness/chaos.py, ``work_line``)."""


def test_the_log_line_names_the_memory_and_the_long_jobs_running(qtbot):
    from bench.robustness.chaos import work_line
    from explorer.main_window import MainWindow
    from explorer.session import Session

    window = MainWindow(Session())
    qtbot.addWidget(window)
    line = work_line(23.5, window)
    assert line.startswith("==  23.50 min: RSS ") and "MB (anonymous " in line and "; queries " in line
    assert "indexing" not in line and "training" not in line  # nothing started

    class Running:
        running = True

    window.history.emerging.job = Running()  # as a "Senses emerging" scoring job under way
    assert work_line(24.0, window).endswith(", history scoring")
    window.history.emerging.job = None
    window.close()
