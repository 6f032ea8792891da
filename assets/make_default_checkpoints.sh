#!/usr/bin/env bash
# Train the default checkpoints the app opens with, with the engine's own CLI, then write slim fp16 copies into
# assets/checkpoints/. Those trained before 2026-11-27 read the default corpus of then, now named wiki-news;
# ngram-kn3, nnlm-tiny, word2vec-sgns, gpt-tiny, bert-tiny, elmo-tiny and minilm-mlm's and minilm-gpt's last stages read today's default (wiki +
# news + conversation). Usage: bash assets/make_default_checkpoints.sh [WORK_DIR]
# The exact commands, machine, time and final metrics of the shipped ones are in assets/checkpoints/README.md.
set -euo pipefail
work=${1:-/tmp/word2bert-defaults}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
# BERT with the small-model recipe (lr 1e-3, 64-token windows, whole-word masking, no dropout), its WordPiece
# vocabulary learned from the default corpus with conversation and its embeddings started from GloVe 6B-50d,
# MLM + NSP: 80 minutes of its own CPU time with the learning rate decaying to 0 as they are spent, then resumed
# with the budget extended to 150 (the shipped one: one thread, OMP_NUM_THREADS=1)
word2bert-train bert --corpus default --preset tiny --seq-len 64 --lr 1e-3 --whole-word --dropout 0 --init-embeddings glove-6b-50d --nsp --max-minutes 80 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/bert-tiny"
word2bert-train --resume "$work/bert-tiny" --max-minutes 150
# ... then continued pretraining from it (a fresh schedule: warmup to 5e-4, decay to 0 over 90 CPU minutes; another
# draw of windows and masks), shipped as bert-tiny from 2026-12-04
word2bert-train bert --init-from "$work/bert-tiny" --corpus default --seq-len 64 --lr 5e-4 --warmup 100 --whole-word --dropout 0 --nsp --seed 1 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/bert-tiny-on1"
# and 80 more from that, a lower peak, seed 2 (2026-12-05, the sixty-eighth session)
word2bert-train bert --init-from "$work/bert-tiny-on1" --corpus default --seq-len 64 --lr 3e-4 --warmup 100 --whole-word --dropout 0 --nsp --seed 2 --max-minutes 80 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/bert-tiny-on2"
# and 80 more from that, seed 3 (2026-12-06: not shipped by itself, its senses fell), then 75 from that with word
# senses taught beside the masked LM (the seventy-seventh session), then 75 more the same way, seed 5 (the
# seventy-eighth session): shipped
word2bert-train bert --init-from "$work/bert-tiny-on2" --corpus default --seq-len 64 --lr 3e-4 --warmup 100 --whole-word --dropout 0 --nsp --seed 3 --max-minutes 80 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/bert-tiny-on3"
word2bert-train bert --init-from "$work/bert-tiny-on3" --corpus default --seq-len 64 --lr 1e-4 --warmup 100 --whole-word --dropout 0 --nsp --sense-pairs sense-train --sense-batch 32 --sense-weight 3 --seed 4 --max-minutes 75 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/bert-tiny-on4"
word2bert-train bert --init-from "$work/bert-tiny-on4" --corpus default --seq-len 64 --lr 1e-4 --warmup 100 --whole-word --dropout 0 --nsp --sense-pairs sense-train --sense-batch 32 --sense-weight 3 --seed 5 --max-minutes 75 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/bert-tiny-on"
# GPT with the small-model recipe (lr 1e-3, 64-token windows, no dropout) on the default corpus with conversation,
# 55 minutes of its own CPU time with the learning rate decaying to 0 as they are spent (the shipped one: one thread;
# started with a 90-minute budget, cut to 55 with --resume after 17), then resumed with the budget extended to 100,
# then to 160
word2bert-train gpt --corpus default --preset tiny --seq-len 64 --lr 1e-3 --dropout 0 --max-minutes 55 --budget-clock cpu --budget-schedule --max-steps 30000 --eval-every 500 --keep-every 1000 --out "$work/gpt-tiny"
word2bert-train --resume "$work/gpt-tiny" --max-minutes 100  # the budget extended (the shipped one: one thread)
word2bert-train --resume "$work/gpt-tiny" --max-minutes 160  # and again, as bert-tiny's and elmo-tiny's were
# then 90 CPU minutes more of continued pretraining from it, a fresh schedule at half the peak rate
word2bert-train gpt --init-from "$work/gpt-tiny" --corpus default --seq-len 64 --lr 5e-4 --warmup 100 --dropout 0 --seed 1 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 30000 --eval-every 500 --keep-every 1000 --out "$work/gpt-tiny-on1"
word2bert-train --resume "$work/gpt-tiny-on1" --max-minutes 165  # its budget extended (2026-12-05)
# then 90 more on the text with its spaces (a GPT run reads a document's sentences as written since 2026-12-06), seed 2
word2bert-train gpt --init-from "$work/gpt-tiny-on1" --corpus default --seq-len 64 --lr 5e-4 --warmup 100 --dropout 0 --seed 2 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 30000 --eval-every 500 --keep-every 1000 --out "$work/gpt-tiny-on"
# ELMo on the default corpus with conversation: 80 minutes of its own CPU time, dropout 0, the learning rate decaying
# to 0 as they are spent, then resumed with the budget extended to 160 (the shipped one: one thread)
word2bert-train elmo --corpus default --preset tiny --batch-size 64 --lr 2e-3 --dropout 0 --max-minutes 80 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny"
word2bert-train --resume "$work/elmo-tiny" --max-minutes 160
# then 75 CPU minutes more of continued pretraining from it, a fresh schedule at half the peak rate (2026-12-05)
word2bert-train elmo --init-from "$work/elmo-tiny" --corpus default --batch-size 64 --lr 1e-3 --warmup 100 --dropout 0 --seed 1 --max-minutes 75 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny-on1"
# and 90 more from that, seed 2 (2026-12-05, the sixty-seventh session)
word2bert-train elmo --init-from "$work/elmo-tiny-on1" --corpus default --batch-size 64 --lr 1e-3 --warmup 100 --dropout 0 --seed 2 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny-on2"
# and 90 more from that, seed 3 (2026-12-05, the sixty-ninth session)
word2bert-train elmo --init-from "$work/elmo-tiny-on2" --corpus default --batch-size 64 --lr 1e-3 --warmup 100 --dropout 0 --seed 3 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny-on3"
# and 90 more from that, seed 4 (2026-12-06, the seventy-first session), and 90 more, seed 5 (the seventy-second)
word2bert-train elmo --init-from "$work/elmo-tiny-on3" --corpus default --batch-size 64 --lr 1e-3 --warmup 100 --dropout 0 --seed 4 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny-on4"
word2bert-train elmo --init-from "$work/elmo-tiny-on4" --corpus default --batch-size 64 --lr 1e-3 --warmup 100 --dropout 0 --seed 5 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny-on5"
word2bert-train --resume "$work/elmo-tiny-on5" --max-minutes 165  # its budget extended (2026-12-06, the seventy-third)
# and 90 more from that, seed 6 (2026-12-06, the seventy-sixth session)
word2bert-train elmo --init-from "$work/elmo-tiny-on5" --corpus default --batch-size 64 --lr 1e-3 --warmup 100 --dropout 0 --seed 6 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny-on6"
# and 90 more from that, seed 7 (2026-12-07, the seventy-ninth session)
word2bert-train elmo --init-from "$work/elmo-tiny-on6" --corpus default --batch-size 64 --lr 1e-3 --warmup 100 --dropout 0 --seed 7 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny-on7"
# and 90 more from that, seed 8 (2026-12-07, the eightieth session)
word2bert-train elmo --init-from "$work/elmo-tiny-on7" --corpus default --batch-size 64 --lr 1e-3 --warmup 100 --dropout 0 --seed 8 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny-on8"
# and 90 more from that, seed 9 (2026-12-07, the eighty-first session)
word2bert-train elmo --init-from "$work/elmo-tiny-on8" --corpus default --batch-size 64 --lr 1e-3 --warmup 100 --dropout 0 --seed 9 --max-minutes 90 --budget-clock cpu --budget-schedule --max-steps 20000 --eval-every 500 --keep-every 1000 --out "$work/elmo-tiny-on"
# skip-gram, 30 passes (5, then 15, left a word seen a few hundred times noisy: assets/checkpoints/README.md)
word2bert-train word2vec --corpus default --arch skipgram --loss ns --dim 100 --epochs 30 --workers 1 --out "$work/word2vec-sgns"
# all-MiniLM-L6-v2 given a masked-LM head (the rest loads from its pip package): first the head and its top 2
# layers, then, starting from that, the head and its top 4 layers
word2bert-train mlm-head --base all-minilm-l6-v2 --train-layers 2 --corpus wiki-news --batch-size 32 --max-steps 4000 --eval-every 250 --keep-every 500 --out "$work/minilm-mlm-head"
word2bert-train mlm-head --base all-minilm-l6-v2 --init-from "$work/minilm-mlm-head" --train-layers 4 --lr 1e-4 --warmup 100 --corpus wiki-news --batch-size 32 --max-steps 3000 --eval-every 250 --keep-every 500 --out "$work/minilm-mlm-4"
# then all 6 layers on 64-token windows for a 100-minute CPU budget, twice: lr 1e-4, then 5e-5 (the shipped
# ones: one thread each, OMP_NUM_THREADS=1)
word2bert-train mlm-head --base all-minilm-l6-v2 --init-from "$work/minilm-mlm-4" --train-layers 6 --seq-len 64 --lr 1e-4 --warmup 100 --corpus wiki-news --max-minutes 100 --budget-clock cpu --budget-schedule --max-steps 8000 --eval-every 500 --keep-every 1000 --out "$work/minilm-mlm-6"
word2bert-train mlm-head --base all-minilm-l6-v2 --init-from "$work/minilm-mlm-6" --train-layers 6 --seq-len 64 --lr 5e-5 --warmup 100 --corpus wiki-news --max-minutes 100 --budget-clock cpu --budget-schedule --max-steps 8000 --eval-every 500 --keep-every 1000 --out "$work/minilm-mlm-7"
# then word senses taught directly beside the masked LM: the bundled word-in-context sentences (sense-train: 34
# words in two senses, none a word of the scored sense set), on windows of whole sentences, for a 45-minute CPU budget
word2bert-train mlm-head --base all-minilm-l6-v2 --init-from "$work/minilm-mlm-7" --train-layers 6 --seq-len 64 --windows sentences --lr 3e-5 --warmup 20 --corpus wiki-news --batch-size 32 --sense-pairs sense-train --sense-batch 32 --sense-weight 3 --max-minutes 45 --budget-clock cpu --budget-schedule --max-steps 8000 --eval-every 100 --keep-every 100 --out "$work/minilm-mlm"
# and a short run from there with 30% of the words masked (the shipped one was stopped with Ctrl-C at step 458,
# about 30 of its 60 CPU minutes)
word2bert-train mlm-head --base all-minilm-l6-v2 --init-from "$work/minilm-mlm" --train-layers 6 --seq-len 64 --windows sentences --mask-prob 0.3 --lr 3e-5 --warmup 20 --corpus wiki-news --batch-size 32 --sense-pairs sense-train --sense-batch 32 --sense-weight 3 --max-minutes 60 --budget-clock cpu --budget-schedule --max-steps 458 --eval-every 100 --keep-every 100 --out "$work/minilm-mask30"
# all-MiniLM-L6-v2 made a GPT (causal attention, next-token head), all 6 layers trained here
word2bert-train clm-head --base all-minilm-l6-v2 --train-layers 6 --seq-len 64 --batch-size 32 --lr 3e-4 --warmup 100 --corpus wiki-news --max-steps 2400 --eval-every 200 --keep-every 400 --out "$work/minilm-gpt-wiki"
# ... then 75 CPU minutes on the default corpus with conversation (2026-11-27), 75 more at half the rate (2026-11-30),
# and 80 more at that rate four times, seeds 3, 4, 5 and 6 (2026-12-05 and 2026-12-06, the seventieth to seventy-fourth sessions)
word2bert-train clm-head --base all-minilm-l6-v2 --init-from "$work/minilm-gpt-wiki" --train-layers 6 --seq-len 64 --batch-size 32 --lr 1e-4 --warmup 50 --corpus default --max-steps 4000 --eval-every 200 --keep-every 200 --max-minutes 75 --budget-clock cpu --budget-schedule --out "$work/minilm-gpt-chat"
word2bert-train clm-head --base all-minilm-l6-v2 --init-from "$work/minilm-gpt-chat" --train-layers 6 --seq-len 64 --batch-size 32 --lr 5e-5 --warmup 50 --corpus default --max-steps 4000 --eval-every 200 --keep-every 200 --max-minutes 75 --budget-clock cpu --budget-schedule --out "$work/minilm-gpt-chat2"
word2bert-train clm-head --base all-minilm-l6-v2 --init-from "$work/minilm-gpt-chat2" --train-layers 6 --seq-len 64 --batch-size 32 --lr 5e-5 --warmup 50 --corpus default --max-steps 4000 --eval-every 200 --keep-every 200 --seed 3 --max-minutes 80 --budget-clock cpu --budget-schedule --out "$work/minilm-gpt-chat3"
word2bert-train clm-head --base all-minilm-l6-v2 --init-from "$work/minilm-gpt-chat3" --train-layers 6 --seq-len 64 --batch-size 32 --lr 5e-5 --warmup 50 --corpus default --max-steps 4000 --eval-every 200 --keep-every 200 --seed 4 --max-minutes 80 --budget-clock cpu --budget-schedule --out "$work/minilm-gpt-chat4"
word2bert-train clm-head --base all-minilm-l6-v2 --init-from "$work/minilm-gpt-chat4" --train-layers 6 --seq-len 64 --batch-size 32 --lr 5e-5 --warmup 50 --corpus default --max-steps 4000 --eval-every 200 --keep-every 200 --seed 5 --max-minutes 80 --budget-clock cpu --budget-schedule --out "$work/minilm-gpt-chat5"
word2bert-train clm-head --base all-minilm-l6-v2 --init-from "$work/minilm-gpt-chat5" --train-layers 6 --seq-len 64 --batch-size 32 --lr 5e-5 --warmup 50 --corpus default --max-steps 4000 --eval-every 200 --keep-every 200 --seed 6 --max-minutes 80 --budget-clock cpu --budget-schedule --out "$work/minilm-gpt-chat6"
word2bert-train clm-head --base all-minilm-l6-v2 --init-from "$work/minilm-gpt-chat6" --train-layers 6 --seq-len 64 --batch-size 32 --lr 5e-5 --warmup 50 --corpus default --max-steps 4000 --eval-every 200 --keep-every 200 --seed 7 --max-minutes 80 --budget-clock cpu --budget-schedule --out "$work/minilm-gpt"
# minilm-mlm's stage 6: the mean of three saves' weights (a uniform soup: stages 4 and 5 and the 30%-masking run;
# chosen on held-out masked words by bench/studies/averaging.py) ...
word2bert-export "$work/minilm-mlm" --to slim "$work/minilm-mlm-soup" --average-with "$work/minilm-mlm-7" "$work/minilm-mask30"
# ... stage 7: 80 CPU minutes more on the default corpus with conversation, the same recipe as stage 5 ...
word2bert-train mlm-head --base all-minilm-l6-v2 --init-from "$work/minilm-mlm-soup" --train-layers 6 --seq-len 64 --windows sentences --lr 3e-5 --warmup 20 --corpus default --batch-size 32 --sense-pairs sense-train --sense-batch 32 --sense-weight 3 --max-minutes 80 --budget-clock cpu --budget-schedule --max-steps 8000 --eval-every 100 --keep-every 100 --out "$work/minilm-chat"
for run in bert-tiny-on gpt-tiny-on elmo-tiny-on word2vec-sgns minilm-chat minilm-gpt; do
  name=${run/minilm-chat/minilm-mlm}
  name=${name/bert-tiny-on/bert-tiny}
  name=${name/gpt-tiny-on/gpt-tiny}
  name=${name/elmo-tiny-on/elmo-tiny}
  rm -rf "$here/checkpoints/$name"
  # ... and minilm-mlm ships the mean of stage 7's last save and stage 6 (chosen on held-out masked words of the
  # new default among the candidates that keep sense separation and WiC: bench/studies/RESULTS.md)
  average=()
  [ "$run" = minilm-chat ] && average=(--average-with "$work/minilm-mlm-soup")
  word2bert-export "$work/$run" --to slim "$here/checkpoints/$name" "${average[@]}"
done
# a Kneser-Ney trigram model, the n-grams above the unigrams seen once pruned (2026-12-06, the seventy-fourth session)
word2bert-train ngram --corpus default --order 3 --prune 2 --out "$work/ngram-kn3"
rm -rf "$here/checkpoints/ngram-kn3"
word2bert-export "$work/ngram-kn3" --to slim "$here/checkpoints/ngram-kn3"
# a neural language model (Bengio et al. 2003) knowing the trigram model's words: 80 minutes of its own CPU time,
# then its budget extended to 140 (2026-12-06, the seventy-sixth and seventy-seventh sessions)
word2bert-train nnlm --corpus default --context 4 --dim 60 --hidden 128 --no-direct --min-count 2 --max-vocab 60000 --epochs 3 --max-minutes 80 --budget-clock cpu --budget-schedule --out "$work/nnlm-tiny"
word2bert-train --resume "$work/nnlm-tiny" --max-minutes 140
rm -rf "$here/checkpoints/nnlm-tiny"
word2bert-export "$work/nnlm-tiny" --to slim "$here/checkpoints/nnlm-tiny"
# a tuned lens for the minilm-mlm now in place (its translators only; minilm-mlm frozen)
word2bert-train tuned-lens --model minilm-mlm --corpus default --max-steps 300 --eval-every 100 --out "$work/tuned-lens-minilm-mlm"
rm -rf "$here/checkpoints/tuned-lens-minilm-mlm"
word2bert-export "$work/tuned-lens-minilm-mlm" --to slim "$here/checkpoints/tuned-lens-minilm-mlm"
