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
# each run's schedule (its learning rate decays to 0 at its end) sized to about the budget, from the steps per
# minute one core gave in the 15-minute runs: one epoch of the default corpus is 628 steps of 32 x 128 (BERT's
# recipe: ~33 a minute; adapting MiniLM: ~18) or 1,256 of 32 x 64 (the small-model recipe: ~75; distilled: ~38)
epochs() { python -c "import math; print(max(1, math.ceil($N * $1 / $2)))"; }
word2bert-train bert --preset tiny $T --epochs "$(epochs 33 628)" --out "$OUT/lever$N-baseline"
word2bert-train bert --preset tiny $T $RECIPE --epochs "$(epochs 75 1256)" --out "$OUT/lever$N-recipe"
word2bert-train bert --preset tiny $T $RECIPE --epochs "$(epochs 75 1256)" --init-embeddings glove-6b-50d \
    --out "$OUT/lever$N-glove"
word2bert-train bert --preset tiny $T $RECIPE --epochs "$(epochs 38 1256)" --init-embeddings glove-6b-50d \
    --teacher all-minilm-l6-v2 --out "$OUT/lever$N-distil"
word2bert-train mlm-head $T --epochs "$(epochs 18 628)" --base all-minilm-l6-v2 --train-layers 2 --out "$OUT/lever$N-adapt"
python bench/levers.py "$OUT/lever$N-baseline" "$OUT/lever$N-recipe" "$OUT/lever$N-glove" "$OUT/lever$N-distil" \
    "$OUT/lever$N-adapt" --budget "$N" --wic
