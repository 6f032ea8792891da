#!/usr/bin/env bash
# "What N CPU minutes buy" (bench/RESULTS.md): one training lever or combination per run, each given N minutes
# of its own CPU time (--budget-clock cpu, one thread), two runs side by side on two cores, then scored together.
#     bench/studies/levers_budget.sh [MINUTES] [RUNS_FOLDER] [LEVERS]
# (default: 15 minutes, runs/, all levers: "baseline recipe glove distil adapt")
set -euo pipefail
N=${1:-15}
OUT=${2:-runs}
LEVERS=${3:-baseline recipe glove distil adapt}
mkdir -p "$OUT"
export OMP_NUM_THREADS=1
T="--max-minutes $N --budget-clock cpu --budget-schedule --eval-every 100"
RECIPE="--seq-len 64 --lr 1e-3 --no-nsp --whole-word --dropout 0"
# each run's learning rate decays to 0 when its budget is spent (--budget-schedule); --max-steps only caps it,
# at about 1.5x the steps one core gives per budget minute: BERT's recipe (32 x 128, NSP) ~39, the small-model
# recipe (32 x 64) ~94, distilled ~43, adapting MiniLM ~21
steps() { python -c "print(max(100, int($N * $1)))"; }
lever() {
    case $1 in
    baseline) word2bert-train bert --preset tiny $T --max-steps "$(steps 60)" --out "$OUT/lever$N-baseline" ;;
    recipe) word2bert-train bert --preset tiny $T $RECIPE --max-steps "$(steps 140)" --out "$OUT/lever$N-recipe" ;;
    glove) word2bert-train bert --preset tiny $T $RECIPE --max-steps "$(steps 140)" --init-embeddings glove-6b-50d \
        --out "$OUT/lever$N-glove" ;;
    distil) word2bert-train bert --preset tiny $T $RECIPE --max-steps "$(steps 65)" --init-embeddings glove-6b-50d \
        --teacher all-minilm-l6-v2 --out "$OUT/lever$N-distil" ;;
    adapt) word2bert-train mlm-head $T --max-steps "$(steps 32)" --base all-minilm-l6-v2 --train-layers 2 \
        --out "$OUT/lever$N-adapt" ;;
    esac > "$OUT/lever$N-$1.log" 2>&1
}
# two queues, one per core: the levers alternate between them
read -ra ALL <<< "$LEVERS"
queue() { for ((i = $1; i < ${#ALL[@]}; i += 2)); do lever "${ALL[$i]}"; done; }
queue 0 & A=$!
queue 1 & B=$!
wait $A $B
RUNS=()
for l in "${ALL[@]}"; do RUNS+=("$OUT/lever$N-$l"); done
python bench/studies/levers.py "${RUNS[@]}" --budget "$N" --wic
