"""word2vec on the CPU: the original tool's sequential SGD, compiled with numba and run Hogwild.

The batched torch steps of ``engine.models.word2vec.model`` suit a GPU; on a CPU they spend their time
gathering and scattering (pairs x depth x dim) rows through memory. This kernel does what word2vec.c and
gensim's Cython do instead: for every position of the (subsampled) text, draw the reduced window,
then update the input and output vectors one (input, output) pair at a time, each word's update seen
at once by the next pair. Threads take contiguous blocks of positions and write the shared matrices
without locks (Hogwild, as the original tool's threads and gensim's workers do).

Per pair, with l1 the input vector (skip-gram: the context word; CBOW: the mean of the context) and
alpha the current learning rate:
    negative sampling:  for t in {w_out (label 1)} + k draws from unigram^0.75 (label 0):
        g = (label - sigma(l1 . u_t)) * alpha;   e += g u_t;   u_t += g l1
    hierarchical softmax: for each inner node n_j of w_out's Huffman path with bit c_j:
        g = (1 - c_j - sigma(l1 . u_{n_j})) * alpha;   e += g u_{n_j};   u_{n_j} += g l1
then every input row behind l1 gets e (CBOW with a sum instead of a mean: e / count).
With sub-words, a word's input vector is the mean of its word row and its n-gram rows, and each of
those rows gets e (as fastText does). Reduced windows and negatives come from a splitmix64 generator
seeded per block, so a run is reproducible up to the races of Hogwild.
With hierarchical softmax, the top of the Huffman tree (the root and the nodes below it, on every pair's
path) is shared by every thread, as in word2vec.c and gensim. A block can instead keep its own copy of
the top HOT_NODES inner nodes (it was the default, 64, while sharing them made two threads slower than
one): every copy starts from the same values and the call ends by adding the *mean* of the blocks'
changes (their sum moved the root 16 times as far as any one path with 16 threads: the loss went to
1e12). The mean made a copied node learn as from one block's pairs: with 16 blocks the loss per pair
ended 0.05 (skip-gram) and 0.19 (CBOW) above sequential SGD's, against 0.005 and 0.002 shared, and
sharing no longer costs speed on 2 cores (bench/speed/RESULTS.md, "the top nodes each thread copies"),
so none is copied. Copies are taken before any block starts and merged after every block ends, so a
call's result does not depend on how threads were scheduled, and a test drives 16 blocks on a 2-core
machine exactly as 16 cores would run them.
Threads take blocks of at least MIN_BLOCK_WORDS positions, as gensim's workers take jobs of 10,000
words: on a small corpus with a small vocabulary, 16 threads writing the same few rows at once act as
one step 16 times too large (the negative-sampling runs of the tests diverged at 16 threads).
Negatives are drawn with Walker's alias method (two V-long arrays that stay in cache), not from
word2vec.c's 10^8-entry table, whose random reads miss the cache at every draw.
"""

from __future__ import annotations

import os

import numpy as np

try:  # numba is a dependency, but a platform without a wheel still trains, on the torch path
    import numba
    from numba import njit, prange
except ImportError:  # pragma: no cover - exercised only where numba is missing
    numba = None  # type: ignore[assignment]

MASK64 = (1 << 64) - 1
# sigma and log sigma tabulated over [-MAX_EXP, MAX_EXP), as word2vec.c and gensim do (no exp or log per pair)
MAX_EXP = 6.0
TABLE_SIZE = 1000
_grid = (np.arange(TABLE_SIZE, dtype=np.float64) + 0.5) / TABLE_SIZE * 2 * MAX_EXP - MAX_EXP
SIGMOID = (1.0 / (1.0 + np.exp(-_grid))).astype(np.float32)
LOG_SIGMOID = np.log(SIGMOID).astype(np.float32)
# reassociation lets the dot products vectorise; NaN and infinity keep their meaning, so a diverged run shows
FASTMATH = {"reassoc", "contract", "nsz", "arcp", "afn"}
# hierarchical softmax: the top inner nodes a thread works on its own copy of, adding the mean of the copies'
# changes back once per call; 0: shared, as word2vec.c and gensim share them (the module's note)
HOT_NODES = 0
# hierarchical softmax with every core asked for (workers 0): at most this many threads (0: no cap). Threads that
# share the top of the tree all write its rows; on 16 cores, 16 of them trained skip-gram at 0.53M words/s where 2
# cores alone train 0.89M. Kept at 0 until a 16-core machine measures fewer threads (bench/RESULTS.md, the rule
# declared in session 60); an explicit --workers is always obeyed.
HS_THREADS = 0
# positions per block and call: gensim's job size (a few ms of work: progress events and Stop stay prompt)
MIN_BLOCK_WORDS = 10_000


def available() -> bool:
    return numba is not None


def threads() -> int:
    return int(numba.get_num_threads()) if numba is not None else 1


def set_threads(workers: int, hs: bool = False) -> None:
    """Threads of the kernel for calls from this thread: ``workers``, or for 0 every core but
    ``$WORD2BERT_SPARE_CORES`` (a run in the background, beside the app, leaves it one: a call waits for
    its slowest thread, and a thread that shares its core with the window makes every call wait), and with
    hierarchical softmax (``hs``) at most ``HS_THREADS`` of them where that is set."""
    if numba is not None:
        cores = int(getattr(numba.config, "NUMBA_NUM_THREADS", 1))
        try:
            spare = max(0, int(os.environ.get("WORD2BERT_SPARE_CORES", "0")))
        except ValueError:
            spare = 0
        every = cores - spare
        if hs and HS_THREADS > 0:
            every = min(every, HS_THREADS)
        numba.set_num_threads(max(1, min(workers, cores) if workers > 0 else every))


def step_words() -> int:
    """Positions handed to one kernel call: a block for each thread."""
    return MIN_BLOCK_WORDS * threads()


def blocks_for(span: int) -> int:
    """Blocks of a call over ``span`` positions: one per thread, each at least MIN_BLOCK_WORDS long."""
    return max(1, min(threads(), span // MIN_BLOCK_WORDS))


def _compile(fn):
    """njit with an on-disk cache where the package folder (or numba's user cache) is writable; a
    frozen app without source files compiles once per start instead."""
    try:
        return njit(parallel=True, fastmath=FASTMATH, nogil=True, cache=True)(fn)
    except Exception:  # pragma: no cover - caching refused (no locator for a frozen module)
        return njit(parallel=True, fastmath=FASTMATH, nogil=True)(fn)


def _sgd_block(ids, sent, start, stop, syn0, syn1, sub_rows, sub_count, sg, hs, negative, window, cbow_mean,
               accept, alias, codes, points, lengths, alpha0, alpha1, seeds, buffers, hot_rows, loss_out, pairs_out):
    n = ids.shape[0]
    span = stop - start
    d = syn0.shape[1]
    nblocks = seeds.shape[0]
    use_sub = sub_rows.shape[0] > 0
    hot = hot_rows.shape[1]
    base = syn1.shape[0] - hot
    # every block's copy of the hot output rows (the last inner nodes: the top of the Huffman tree, on
    # every path) taken before any block starts, whatever the threads' schedule
    for blk in prange(nblocks):
        for h in range(hot):
            for c in range(d):
                hot_rows[blk, h, c] = syn1[base + h, c]
    for blk in prange(nblocks):
        lo = start + blk * span // nblocks
        hi = start + (blk + 1) * span // nblocks
        rnd = np.uint64(seeds[blk])
        # each thread its own buffers (numba would hoist an np.empty here out of the loop: shared, racing)
        l1 = buffers[blk, 0]  # rows longer than d (padded): only the first d are used
        work = buffers[blk, 1]
        local = hot_rows[blk]
        loss = 0.0
        pairs = 0
        for i in range(lo, hi):
            alpha = np.float32(alpha0 + (alpha1 - alpha0) * ((i - start) / span))
            rnd, z = _mix(rnd)
            win = window - np.int64((z >> np.uint64(33)) % np.uint64(window))  # reduced window in [1, window]
            j0 = max(i - win, 0)
            j1 = min(i + win + 1, n)
            word = ids[i]
            s = sent[i]
            if sg:
                for j in range(j0, j1):
                    if j == i or sent[j] != s:
                        continue
                    ctx = ids[j]
                    for c in range(d):
                        work[c] = 0.0
                    if use_sub:  # the context word's input vector: the mean of its rows
                        for c in range(d):
                            l1[c] = 0.0
                        _add_input(l1, syn0, sub_rows, sub_count, ctx)
                        loss_pair, rnd = _train_output(l1, work, syn1, word, alpha, hs, negative, accept, alias, local, base,
                                                       codes, points, lengths, rnd)
                    else:  # its row, read in place
                        loss_pair, rnd = _train_output(syn0[ctx], work, syn1, word, alpha, hs, negative, accept, alias, local, base,
                                                       codes, points, lengths, rnd)
                    loss += loss_pair
                    pairs += 1
                    _add_gradient(work, syn0, sub_rows, sub_count, use_sub, ctx)
            else:
                for c in range(d):
                    l1[c] = 0.0
                count = 0
                for j in range(j0, j1):
                    if j == i or sent[j] != s:
                        continue
                    ctx = ids[j]
                    count += 1
                    if use_sub:
                        _add_input(l1, syn0, sub_rows, sub_count, ctx)
                    else:
                        for c in range(d):
                            l1[c] += syn0[ctx, c]
                if count == 0:
                    continue
                if cbow_mean:
                    inv = np.float32(1.0 / count)
                    for c in range(d):
                        l1[c] *= inv
                for c in range(d):
                    work[c] = 0.0
                loss_pair, rnd = _train_output(l1, work, syn1, word, alpha, hs, negative, accept, alias, local, base,
                                               codes, points, lengths, rnd)
                loss += loss_pair
                pairs += 1
                if not cbow_mean:
                    inv = np.float32(1.0 / count)
                    for c in range(d):
                        work[c] *= inv
                for j in range(j0, j1):
                    if j != i and sent[j] == s:
                        _add_gradient(work, syn0, sub_rows, sub_count, use_sub, ids[j])
        loss_out[blk] = loss
        pairs_out[blk] = pairs
    # the hot rows move by the mean of the blocks' changes (the sum overshoots: see the module's note)
    if hot > 0:
        inv = np.float32(1.0 / nblocks)
        for h in prange(hot):
            for c in range(d):
                change = np.float32(0.0)
                for blk in range(nblocks):
                    change += hot_rows[blk, h, c] - syn1[base + h, c]
                syn1[base + h, c] += change * inv


def _add_input(out, syn0, sub_rows, sub_count, word):
    """out += the input vector of a word with sub-words: the mean of its word and n-gram rows."""
    d = syn0.shape[1]  # ``out`` may be longer (a padded buffer)
    m = np.int64(sub_count[word])
    inv = np.float32(1.0 / m)
    for r in range(m):
        row = sub_rows[word, r]
        for c in range(d):
            out[c] += syn0[row, c] * inv


def _add_gradient(work, syn0, sub_rows, sub_count, use_sub, word):
    """The input side of an update: every row behind a word's input vector gets ``work``."""
    d = syn0.shape[1]
    if use_sub:
        for r in range(np.int64(sub_count[word])):
            row = sub_rows[word, r]
            for c in range(d):
                syn0[row, c] += work[c]
    else:
        for c in range(d):
            syn0[word, c] += work[c]


def _mix(state):
    """splitmix64: advance the state, return (state, 64 well-mixed bits)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return state, z ^ (z >> np.uint64(31))


def _train_output(l1, work, syn1, word, alpha, hs, negative, accept, alias, local, base, codes, points, lengths, rnd):
    """One pair's output side: updates ``syn1`` and accumulates the input gradient in ``work``.
    Returns (-log-likelihood of the pair, the advanced random state). A score beyond +-MAX_EXP is
    saturated: no update when it is on the right side; a full one (sigma taken as 0 or 1) when it is on
    the wrong side, where word2vec.c and gensim skip it, so that a too-large learning rate ends in a
    non-finite loss (reported as diverged) instead of silently frozen vectors. The loss of a
    saturated score s is max(0, -s) (softplus to 0.3%)."""
    d = syn1.shape[1]
    loss = 0.0
    scale = TABLE_SIZE / (2.0 * MAX_EXP)
    if hs:
        for k in range(lengths[word]):
            node = points[word, k]
            row = local[node - base] if node >= base else syn1[node]  # a hot node: the thread's copy
            f = np.float32(0.0)
            for c in range(d):
                f += l1[c] * row[c]
            bit = codes[word, k]
            s = -f if bit else f  # the log-likelihood is log sigma(s)
            if -MAX_EXP < f < MAX_EXP:
                sig = SIGMOID[int((f + MAX_EXP) * scale)]
                loss -= LOG_SIGMOID[int((s + MAX_EXP) * scale)]
            elif s >= 0.0:  # saturated and right: nothing to learn
                continue
            else:  # saturated and wrong (or not finite: the loss then shows it)
                sig = 1.0 if f >= MAX_EXP else 0.0
                loss -= float(s)
            g = np.float32((1.0 - bit - sig) * alpha)
            for c in range(d):
                work[c] += g * row[c]
                row[c] += g * l1[c]
        return loss, rnd
    n_words = np.uint64(accept.shape[0])
    for k in range(negative + 1):
        if k == 0:
            target = word
            label = 1.0
        else:
            rnd, z = _mix(rnd)  # 40 high bits pick a column, 24 low bits accept it or take its alias
            target = np.int64((z >> np.uint64(24)) % n_words)
            if np.float32(z & np.uint64(0xFFFFFF)) * np.float32(1.0 / 16777216) >= accept[target]:
                target = alias[target]
            if target == word:
                continue
            label = 0.0
        f = np.float32(0.0)
        for c in range(d):
            f += l1[c] * syn1[target, c]
        s = f if k == 0 else -f
        if -MAX_EXP < f < MAX_EXP:
            sig = SIGMOID[int((f + MAX_EXP) * scale)]
            loss -= LOG_SIGMOID[int((s + MAX_EXP) * scale)]
        elif s >= 0.0:
            continue
        else:
            sig = 1.0 if f >= MAX_EXP else 0.0
            loss -= float(s)
        g = np.float32((label - sig) * alpha)
        for c in range(d):
            work[c] += g * syn1[target, c]
            syn1[target, c] += g * l1[c]
    return loss, rnd


if numba is not None:
    _mix = njit(nogil=True, inline="always")(_mix)
    _add_input = njit(fastmath=FASTMATH, nogil=True, inline="always")(_add_input)
    _add_gradient = njit(fastmath=FASTMATH, nogil=True, inline="always")(_add_gradient)
    _train_output = njit(fastmath=FASTMATH, nogil=True, inline="always")(_train_output)
    _sgd_block = _compile(_sgd_block)


def compile_now() -> None:
    """Compile the kernel (or load it from numba's cache) with the argument types of a real call, so
    that the wait (about 15 s the first time) comes before training starts, not inside its first step."""
    ids = np.zeros(128, dtype=np.int32)
    syn = np.zeros((2, 4), dtype=np.float32)
    sgd(ids, ids.copy(), 0, len(ids), syn, syn.copy(), None, None, sg=True, hs=False, negative=1, window=2,
        cbow_mean=True, accept=np.ones(2, np.float32), alias=np.zeros(2, np.int32), codes=np.zeros((1, 1), np.int8),
        points=np.zeros((1, 1), np.int32), lengths=np.zeros(1, np.int32), alpha0=0.0, alpha1=0.0, seed=0)


def alias_table(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias method (Vose's construction) for drawing i with probability p[i] in O(1): draw a
    column i uniformly, keep it with probability accept[i], else take alias[i]."""
    n = len(p)
    scaled = np.asarray(p, dtype=np.float64) * n / max(float(np.sum(p)), 1e-300)
    accept = np.ones(n, dtype=np.float64)
    alias = np.arange(n, dtype=np.int32)
    small = [i for i in range(n) if scaled[i] < 1.0]
    large = [i for i in range(n) if scaled[i] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        accept[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        (small if scaled[g] < 1.0 else large).append(g)
    return accept.astype(np.float32), alias  # what remains (rounding) keeps itself: accept 1


def sgd(ids: np.ndarray, sent: np.ndarray, start: int, stop: int, syn0: np.ndarray, syn1: np.ndarray, sub_rows: np.ndarray | None,
        sub_count: np.ndarray | None, *, sg: bool, hs: bool, negative: int, window: int, cbow_mean: bool,
        accept: np.ndarray, alias: np.ndarray, codes: np.ndarray, points: np.ndarray, lengths: np.ndarray,
        alpha0: float, alpha1: float, seed: int) -> tuple[float, int]:
    """Train the vectors in place on positions ``start:stop`` of ``ids`` (subsampled word ids, ``sent``
    their sentence numbers; windows read the ids around, within a sentence); the learning rate goes
    linearly from alpha0 to alpha1 over the positions, cut into ``blocks_for`` parts run in parallel.
    Returns (summed loss, pairs)."""
    nblocks = max(1, min(blocks_for(stop - start), stop - start))
    seeds = np.array([(seed * 1_000_003 + b * 7919 + 1) & MASK64 for b in range(nblocks)], dtype=np.uint64)
    padded = (syn0.shape[1] + 31) // 16 * 16  # a cache line or more between two threads' buffers
    buffers = np.empty((nblocks, 2, padded), dtype=np.float32)
    hot = min(HOT_NODES, syn1.shape[0] // 8) if hs and nblocks > 1 else 0  # the top of the tree only
    hot_rows = np.empty((nblocks, hot, syn0.shape[1]), dtype=np.float32)
    loss = np.zeros(nblocks, dtype=np.float64)
    pairs = np.zeros(nblocks, dtype=np.int64)
    if sub_rows is None or sub_count is None:
        sub_rows = np.zeros((0, 1), dtype=np.int64)
        sub_count = np.zeros(0, dtype=np.float32)
    _sgd_block(ids, sent, int(start), int(stop), syn0, syn1, sub_rows, sub_count, bool(sg), bool(hs), int(negative), int(window),
               bool(cbow_mean), accept, alias, codes, points, lengths, float(alpha0), float(alpha1), seeds, buffers, hot_rows, loss, pairs)
    return float(loss.sum()), int(pairs.sum())
