#!/usr/bin/env bash
# "What N CPU minutes buy" (bench/RESULTS.md): one training lever or combination per run, each stopped by
# --max-minutes N, one after another on one thread, then scored side by side.
#     bench/levers_budget.sh [MINUTES] [RUNS_FOLDER]     (default: 15 minutes, runs/)
set -euo pipefail
N=${1:-15}
OUT=${2:-runs}
mkdir -p "$OUT"
export OMP_NUM_THREADS=1
T="--max-minutes $N --eval-every 100"
RECIPE="--seq-len 64 --lr 1e-3 --no-nsp --whole-word --dropout 0"
word2bert-train bert --preset tiny $T --out "$OUT/lever$N-baseline"
word2bert-train bert --preset tiny $T $RECIPE --out "$OUT/lever$N-recipe"
word2bert-train bert --preset tiny $T $RECIPE --init-embeddings glove-6b-50d --out "$OUT/lever$N-glove"
word2bert-train bert --preset tiny $T $RECIPE --init-embeddings glove-6b-50d --teacher all-minilm-l6-v2 --out "$OUT/lever$N-distil"
word2bert-train mlm-head $T --base all-minilm-l6-v2 --train-layers 2 --out "$OUT/lever$N-adapt"
python bench/levers.py "$OUT/lever$N-baseline" "$OUT/lever$N-recipe" "$OUT/lever$N-glove" "$OUT/lever$N-distil" \
    "$OUT/lever$N-adapt" --budget "$N" --wic
