"""Static vectors against people: the figure the app shows beside each static model's nearest words (WordSim-353's
Spearman ρ, `handle.word_similarity`), with SimLex-999 (similarity, not relatedness) and gensim's analogy questions
beside it, for the shipped static models and the NNLM whose word features are static vectors too.

No choice rests on these figures (nothing is picked here): they record what the app's column reads and how the
three measures agree. The analogy questions are answered among each model's 30,000 most frequent words (the
``restrict_vocab`` of word2vec's own compute-accuracy), so a 400,000-word GloVe and a 28,000-word word2vec answer
from lists of one size.

    python bench/quality/static_vectors.py [--models glove-6b-50d,word2vec-sgns,nnlm-tiny]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench._report import loaded_models, machine, write_section  # noqa: E402

MODELS = ("glove-6b-50d", "word2vec-sgns", "nnlm-tiny")
ANALOGY_VOCABULARY = 30_000


def main() -> None:
    from engine.data.evaluation import analogy, quick_word_similarity

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    args = p.parse_args()
    rows = []
    t0 = time.perf_counter()
    for name, handle in loaded_models(args.models.split(",")):
        vectors = handle.static_vectors()
        shown = handle.word_similarity()  # (what the app's column reads)
        simlex = quick_word_similarity(vectors, "simlex999")
        answered = analogy(vectors, restrict_vocab=ANALOGY_VOCABULARY)
        bank = ", ".join(n.word for n in handle.static_neighbours("bank", 6, min_count=20))
        rows.append(f"| {name} | {len(vectors.words):,} | {shown['spearman']:.3f} ({shown['coverage']:.0%}) | "
                    f"{simlex['spearman']:.3f} ({simlex['coverage']:.0%}) | {answered['accuracy']:.3f} "
                    f"({answered['coverage']:.0%}) | {bank} |")
        print(rows[-1], flush=True)
    body = "\n".join([
        "## Static vectors against people: the ρ beside the app's nearest words", "", f"Machine: {machine()}", "",
        f"`python bench/quality/static_vectors.py --models {args.models}` ({time.perf_counter() - t0:.0f} s). "
        "WordSim-353: the Spearman ρ of each model's cosines with people's ratings of word pairs (relatedness as "
        "well as similarity), the number the Polysemy lens's static table and the Neighbours tab show; SimLex-999: "
        "similarity alone; analogies: gensim's questions-words, 3CosAdd among the model's "
        f"{ANALOGY_VOCABULARY:,} most frequent words. In brackets: the share of pairs or questions whose words the "
        "model knows. Last column: the nearest words to “bank” among those seen at least 20 times (the app's "
        "default; GloVe 6B keeps no counts).", "",
        "| model | words | WordSim-353 ρ | SimLex-999 ρ | analogies | nearest to “bank” |",
        "|---|---:|---:|---:|---:|---|", *rows])
    print(body)
    write_section("static-vectors", body, __file__)


if __name__ == "__main__":
    main()
