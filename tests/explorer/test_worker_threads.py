"""The window's process has torch's OpenMP threads sleep between operations instead of spinning (they kept a
laptop's cores busy while the GUI thread waited for one); a policy the user set stands, and a training process
started from the window gets the environment as it was."""

from explorer.worker_threads import MARK, POLICY, sleeping_worker_threads, training_environment


def test_the_window_sets_a_sleeping_policy_only_where_the_user_set_none(monkeypatch):
    monkeypatch.delenv(POLICY, raising=False)
    monkeypatch.delenv(MARK, raising=False)
    import os

    sleeping_worker_threads()
    assert os.environ[POLICY] == "PASSIVE" and MARK in os.environ
    monkeypatch.setenv(POLICY, "ACTIVE")
    monkeypatch.delenv(MARK)
    sleeping_worker_threads()
    assert os.environ[POLICY] == "ACTIVE" and MARK not in os.environ  # the user's choice stands


def test_a_training_gets_the_environment_without_the_windows_own_policy():
    mine = {"PATH": "/bin", POLICY: "PASSIVE", MARK: "1"}
    assert training_environment(mine) == {"PATH": "/bin"}
    users = {"PATH": "/bin", POLICY: "PASSIVE"}
    assert training_environment(users) == users  # set by the user: theirs for the training too


def test_a_training_process_started_from_the_window_is_given_that_environment(qtbot, monkeypatch):
    from explorer.training_process import ProcessTrainJob

    monkeypatch.setenv(POLICY, "PASSIVE")
    monkeypatch.setenv(MARK, "1")
    job = ProcessTrainJob(["--help"])
    environment = job.process.processEnvironment()
    assert environment.contains("PATH") and not environment.contains(POLICY) and not environment.contains(MARK)
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    monkeypatch.delenv(MARK)  # the user's own policy: the process inherits the window's environment whole
    job = ProcessTrainJob(["--help"])
    assert job.process.processEnvironment().isEmpty()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
