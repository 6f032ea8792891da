"""The window's process has torch's OpenMP threads sleep between operations instead of spinning and NumPy's BLAS
run on one thread (spinning teams kept a laptop's cores busy while the GUI thread waited for one); a setting the
user made stands, and a training process started from the window gets the environment as it was."""

import os

from explorer.worker_threads import (
    BLAS_THREADS,
    MARK,
    POLICY,
    sleeping_worker_threads,
    training_environment,
)


def test_the_window_sets_its_own_settings_only_where_the_user_set_none(monkeypatch):
    for name in (POLICY, BLAS_THREADS, MARK):
        monkeypatch.delenv(name, raising=False)
    sleeping_worker_threads()
    assert os.environ[POLICY] == "PASSIVE" and os.environ[BLAS_THREADS] == "1"
    assert set(os.environ[MARK].split(",")) == {POLICY, BLAS_THREADS}
    sleeping_worker_threads()  # (a second call, as a restarted process makes: the same)
    assert set(os.environ[MARK].split(",")) == {POLICY, BLAS_THREADS}
    for name in (POLICY, MARK):
        monkeypatch.delenv(name)
    monkeypatch.setenv(POLICY, "ACTIVE")
    monkeypatch.setenv(BLAS_THREADS, "8")
    sleeping_worker_threads()
    assert os.environ[POLICY] == "ACTIVE" and os.environ[BLAS_THREADS] == "8"  # the user's choices stand
    assert MARK not in os.environ


def test_a_training_gets_the_environment_without_the_windows_own_settings():
    mine = {"PATH": "/bin", POLICY: "PASSIVE", BLAS_THREADS: "1", MARK: f"{POLICY},{BLAS_THREADS}"}
    assert training_environment(mine) == {"PATH": "/bin"}
    users = {"PATH": "/bin", POLICY: "PASSIVE", BLAS_THREADS: "4"}
    assert training_environment(users) == users  # set by the user: theirs for the training too
    half = {"PATH": "/bin", POLICY: "PASSIVE", BLAS_THREADS: "4", MARK: POLICY}  # the user set the BLAS threads only
    assert training_environment(half) == {"PATH": "/bin", BLAS_THREADS: "4"}
    older = {"PATH": "/bin", POLICY: "PASSIVE", BLAS_THREADS: "4", MARK: "1"}  # a window of before the BLAS setting
    assert training_environment(older) == {"PATH": "/bin", BLAS_THREADS: "4"}


def test_a_training_process_started_from_the_window_is_given_that_environment(qtbot, monkeypatch):
    from explorer.training_process import ProcessTrainJob

    monkeypatch.setenv(POLICY, "PASSIVE")
    monkeypatch.setenv(BLAS_THREADS, "1")
    monkeypatch.setenv(MARK, f"{POLICY},{BLAS_THREADS}")
    job = ProcessTrainJob(["--help"])
    environment = job.process.processEnvironment()
    assert environment.contains("PATH")
    assert not any(environment.contains(name) for name in (POLICY, BLAS_THREADS, MARK))
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
    monkeypatch.delenv(MARK)  # the user's own settings: the process inherits the window's environment whole
    job = ProcessTrainJob(["--help"])
    assert job.process.processEnvironment().isEmpty()
    qtbot.waitUntil(lambda: not job.running, timeout=60_000)
