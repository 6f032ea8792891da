"""The window's process has torch's OpenMP threads sleep between operations instead of spinning, NumPy's BLAS run
on one thread (spinning teams kept a laptop's cores busy while the GUI thread waited for one) and oneDNN's compiled
kernels kept to a number; a setting the user made stands, and a training process started from the window gets the
environment as it was."""

import os
import sys

import pytest

from explorer.worker_threads import (
    BLAS_THREADS,
    KERNEL_CACHES,
    MARK,
    POLICY,
    sleeping_worker_threads,
    training_environment,
)


def test_the_window_sets_its_own_settings_only_where_the_user_set_none(monkeypatch):
    for name in (POLICY, BLAS_THREADS, MARK, *KERNEL_CACHES):
        monkeypatch.delenv(name, raising=False)
    sleeping_worker_threads()
    assert os.environ[POLICY] == "PASSIVE" and os.environ[BLAS_THREADS] == "1"
    assert all(os.environ[name] == "64" for name in KERNEL_CACHES)
    assert set(os.environ[MARK].split(",")) == {POLICY, BLAS_THREADS, *KERNEL_CACHES}
    sleeping_worker_threads()  # (a second call, as a restarted process makes: the same)
    assert set(os.environ[MARK].split(",")) == {POLICY, BLAS_THREADS, *KERNEL_CACHES}
    for name in (POLICY, MARK):
        monkeypatch.delenv(name)
    monkeypatch.setenv(POLICY, "ACTIVE")
    monkeypatch.setenv(BLAS_THREADS, "8")
    for name in KERNEL_CACHES:
        monkeypatch.setenv(name, "1024")
    sleeping_worker_threads()
    assert os.environ[POLICY] == "ACTIVE" and os.environ[BLAS_THREADS] == "8"  # the user's choices stand
    assert all(os.environ[name] == "1024" for name in KERNEL_CACHES)
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and glibc")
def test_with_the_windows_settings_the_compiled_kernels_kept_stop_growing():
    """Every new shape of a packed linear layer makes a kernel that oneDNN's and ideep's caches keep (~560 kB on an
    AVX-512 machine, 1,024 in each cache by default): under the window's settings, once the caches are full, new
    shapes take the place of old ones. In a process of its own (the caches' sizes are read when torch first runs a
    kernel)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = f"import runpy; runpy.run_path({str(Path(__file__).resolve())!r})['_kernels_kept_mb']()"
    env = {k: v for k, v in os.environ.items() if k not in (POLICY, BLAS_THREADS, MARK, *KERNEL_CACHES)}
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    line = done.stdout.strip().splitlines()[-1]
    if line == "no oneDNN":
        pytest.skip("torch has no oneDNN here")
    first, second = (float(x) for x in line.split())
    assert second < 8, (first, second)  # 112 new shapes after the first 112 (without the caps: +62 MB here)


def _kernels_kept_mb() -> None:
    from explorer.worker_threads import sleeping_worker_threads

    sleeping_worker_threads()
    import ctypes

    import torch

    if not torch.backends.mkldnn.is_available() or not hasattr(torch.ops.mkldnn, "_linear_pointwise"):
        print("no oneDNN")
        return
    torch.set_num_threads(1)
    libc = ctypes.CDLL("libc.so.6")

    def anon_mb() -> float:
        libc.malloc_trim(0)
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("RssAnon")) / 1024

    layers = []
    for k, n in [(256, 256), (256, 1024), (1024, 256), (384, 384), (384, 1536), (1536, 384), (128, 128), (128, 512)]:
        layers.append((k, torch.ops.mkldnn._reorder_linear_weight(torch.randn(n, k)), torch.randn(n)))

    def shapes(rows: range) -> None:
        for r in rows:
            for k, packed, bias in layers:
                torch.ops.mkldnn._linear_pointwise(torch.randn(r, k), packed, bias, "none", [], "")

    start = anon_mb()
    shapes(range(1, 15))
    middle = anon_mb()
    shapes(range(15, 29))
    print(f"{middle - start:.1f} {anon_mb() - middle:.1f}")
