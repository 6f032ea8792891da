"""`word2bert --screenshot`: the window is saved once nothing newer can come, even when no further answer
comes to say so (a scene's last model to load was one its view does not use, and the app waited forever)."""


def test_a_screenshot_asked_while_a_model_loads_is_taken_once_it_has_loaded(qtbot, contextual_runs, tmp_path):
    from explorer.main_window import MainWindow
    from explorer.screenshot import WindowShot
    from explorer.session import Session

    session = Session()
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.show()
    path = tmp_path / "shot.png"
    shot = WindowShot(window, session, str(path))
    session.load(str(contextual_runs["gpt"][0]))
    assert session.loading
    shot.take_when_ready()  # the view answered, but a model is still on its way: not yet
    assert not shot.taken and not path.exists()
    with qtbot.waitSignal(shot.saved, timeout=60_000):
        pass  # no other call: it looks again by itself
    assert not session.loading and "gpt" in session.models
    assert path.stat().st_size > 0
    shot.take_when_ready()  # a late answer does not take a second picture
    assert shot.taken

    from explorer.tasks import wait_for_workers

    assert wait_for_workers(20_000)
