"""2-D maps of a word's occurrences: PCA, t-SNE or UMAP (if installed), automatic sense clusters
(k-means with k chosen by silhouette), and Procrustes alignment to the previous map so that points
move rather than jump when the layer changes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import InputError

METHODS = ("pca", "tsne", "umap")


@dataclass(frozen=True)
class OccurrenceMap:
    points: np.ndarray  # (n, 2) float32: the corpus occurrences first, then the typed ones
    clusters: np.ndarray  # (n,) int: automatic sense clusters
    sentences: tuple[str, ...]
    typed: np.ndarray  # (n,) bool: True for the occurrences the user typed
    k: int  # number of clusters chosen
    silhouette: float
    method: str


def pca_2d(x: np.ndarray) -> np.ndarray:
    """``x`` (n, dim) on its first two principal axes, as scikit-learn's exact PCA (``svd_solver="full"``) gives
    them (the same signs: each axis's largest loading positive), from the eigenvectors of the smaller of ``x``'s two
    Gram matrices, in float64. scikit-learn's PCA runs SciPy's LAPACK, which holds Python's GIL all along (5-14 ms
    for the lens's 291 occurrences of "bank", 60 ms for 600 × 768) and kept the window's thread waiting that long for
    every map drawn; NumPy's ``eigh`` lets the GIL go (bench/robustness/RESULTS.md, "The window's numerical work and
    the GIL"). For larger inputs scikit-learn's default switches to a randomized solver, whose axes are approximate."""
    centred = np.asarray(x, np.float64)
    centred = centred - centred.mean(0)
    n, dim = centred.shape
    if n <= dim:  # the occurrences' Gram matrix: its eigenvectors are the scores' directions
        values, vectors = np.linalg.eigh(centred @ centred.T)
        top = np.argsort(values)[::-1][:2]
        scale = np.sqrt(np.clip(values[top], 0.0, None))
        scores = vectors[:, top] * scale
        axes = (centred.T @ vectors[:, top]) / np.where(scale > 0, scale, 1.0)  # (dim, 2): the loadings
    else:  # the dimensions' scatter matrix: its eigenvectors are the axes
        values, vectors = np.linalg.eigh(centred.T @ centred)
        top = np.argsort(values)[::-1][:2]
        axes = vectors[:, top]
        scores = centred @ axes
    signs = np.sign(axes[np.abs(axes).argmax(0), np.arange(axes.shape[1])])
    signs[signs == 0] = 1.0
    points = scores * signs
    if points.shape[1] < 2:  # one occurrence's dimension: a flat second axis
        points = np.pad(points, ((0, 0), (0, 2 - points.shape[1])))
    return points


def _project(x: np.ndarray, method: str, seed: int) -> np.ndarray:
    if method == "pca":
        return pca_2d(x)
    if method == "tsne":
        from sklearn.manifold import TSNE

        perplexity = float(min(30, max(2, (len(x) - 1) // 3)))
        start = pca_2d(x)  # scikit-learn's own init="pca", less its PCA's hold on the GIL: scaled as it scales it
        spread = float(np.std(start[:, 0]))
        start = (start / (spread if spread > 0 else 1.0) * 1e-4).astype(np.float32)
        return TSNE(n_components=2, perplexity=perplexity, init=start, random_state=seed).fit_transform(x)
    if method == "umap":
        try:
            import umap  # type: ignore[import-not-found]
        except ImportError:
            raise InputError("UMAP is not installed (pip install umap-learn); choose PCA or t-SNE") from None
        return umap.UMAP(n_components=2, random_state=seed).fit_transform(x)
    raise InputError(f"unknown projection '{method}' (choose from {', '.join(METHODS)})")


def sense_clusters(x: np.ndarray, max_k: int = 6, seed: int = 0) -> tuple[np.ndarray, int, float]:
    """k-means on unit vectors with k in 2..max_k chosen by the silhouette score (1 cluster if none helps)."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    unit = x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-9)
    best = (np.zeros(len(x), int), 1, 0.0)
    for k in range(2, min(max_k, len(x) - 1) + 1):
        labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(unit)
        if len(set(labels)) < 2:
            continue
        score = float(silhouette_score(unit, labels, metric="cosine"))
        if score > best[2]:
            best = (labels, k, score)
    return best


def procrustes_align(points: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Rotate/reflect and scale ``points`` (n, 2) onto ``previous`` (n, 2) (orthogonal Procrustes)."""
    a = points - points.mean(0)
    b = previous - previous.mean(0)
    u, s, vt = np.linalg.svd(a.T @ b)
    rotation = u @ vt
    scale = s.sum() / max(float((a**2).sum()), 1e-12)
    return a @ rotation * scale + previous.mean(0)


def occurrence_map(corpus_vectors: np.ndarray, corpus_sentences: list[str], typed_vectors: np.ndarray,
                   typed_sentences: list[str], method: str = "pca", previous: np.ndarray | None = None,
                   seed: int = 0) -> OccurrenceMap:
    """Project corpus occurrences (m, dim) and typed ones (q, dim) together and cluster them."""
    x = np.concatenate([np.asarray(corpus_vectors, np.float32), np.atleast_2d(np.asarray(typed_vectors, np.float32))])
    if len(x) < 3:
        raise InputError("too few occurrences to draw a map (at least 3)")
    points = _project(x, method, seed).astype(np.float32)
    if previous is not None and previous.shape == points.shape:
        points = procrustes_align(points, previous).astype(np.float32)
    clusters, k, score = sense_clusters(x, seed=seed)
    typed = np.zeros(len(x), bool)
    typed[len(corpus_vectors):] = True
    return OccurrenceMap(points, clusters, (*corpus_sentences, *typed_sentences), typed, k, score, method)
