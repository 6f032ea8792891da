"""The occurrence map's PCA (engine.inspection.projection.pca_2d): the axes scikit-learn's exact PCA finds, with
its signs, whichever of the two Gram matrices is the smaller; computed with the GIL let go, so the window's
thread runs while a worker draws a map."""

import sys
import threading
import time

import numpy as np
import pytest


@pytest.mark.parametrize("shape", [(291, 384), (40, 16), (600, 128), (5, 3), (50, 50)])
def test_pca_2d_gives_scikit_learns_exact_pca_points(shape):
    from sklearn.decomposition import PCA

    from engine.inspection.projection import pca_2d

    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * np.linspace(4, 1, shape[1])).astype(np.float32)  # distinct axes
    ours = pca_2d(x)
    theirs = PCA(2, svd_solver="full").fit_transform(x.astype(np.float64))
    assert ours.shape == (shape[0], 2)
    assert np.allclose(ours, theirs, rtol=0, atol=1e-6 * np.abs(theirs).max())


def test_pca_2d_of_degenerate_occurrences_is_flat_not_an_error():
    from engine.inspection.projection import pca_2d

    same = np.ones((6, 8), np.float32)
    assert np.array_equal(pca_2d(same), np.zeros((6, 2)))
    one_dimension = np.arange(5, dtype=np.float32)[:, None]
    points = pca_2d(one_dimension)
    assert points.shape == (5, 2) and np.allclose(points[:, 1], 0) and np.allclose(np.abs(points[:, 0]), [2, 1, 0, 1, 2])


def test_the_window_thread_runs_while_a_worker_projects():
    """Another thread wakes every 0.5 ms through a projection of 600 × 768 (tens of ms of LAPACK): never kept
    waiting for most of it, as it was with SciPy's LAPACK, which holds the GIL throughout."""
    from engine.inspection.projection import pca_2d

    before = sys.getswitchinterval()
    sys.setswitchinterval(0.0001)
    try:
        x = np.random.default_rng(0).standard_normal((600, 768)).astype(np.float32)
        pca_2d(x)
        done, took = threading.Event(), []

        def work() -> None:
            began = time.perf_counter()
            for _ in range(3):
                pca_2d(x)
            took.append(time.perf_counter() - began)
            done.set()

        worker = threading.Thread(target=work)
        worst, last = 0.0, time.perf_counter()
        worker.start()
        while not done.is_set():
            time.sleep(0.0005)
            now = time.perf_counter()
            worst, last = max(worst, now - last), now
        worker.join()
    finally:
        sys.setswitchinterval(before)
    assert worst < 0.5 * took[0] / 3, (worst, took)  # (SciPy's LAPACK: the whole projection, every time)


def test_a_t_sne_map_keeps_two_planted_senses_apart():
    """t-SNE starts from the same PCA (scaled as scikit-learn's init="pca" scales it): two senses, two islands."""
    from engine.inspection.projection import occurrence_map

    rng = np.random.default_rng(3)
    a, b = rng.normal(size=64), rng.normal(size=64)
    corpus = np.concatenate([a + 0.2 * rng.normal(size=(30, 64)), b + 0.2 * rng.normal(size=(30, 64))])
    m = occurrence_map(corpus, [f"s{i}" for i in range(60)], np.stack([a, b]), ["river", "money"], "tsne")
    first, second = m.points[:30], m.points[30:60]
    gap = np.linalg.norm(first.mean(0) - second.mean(0))
    assert gap > 3 * max(first.std(0).max(), second.std(0).max())
    assert np.linalg.norm(m.points[60] - first.mean(0)) < np.linalg.norm(m.points[60] - second.mean(0))
