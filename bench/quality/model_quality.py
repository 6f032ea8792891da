"""What the shipped and built-in models know, on the bundled public sets (engine/data/sets/): sense
separation per layer (leave-one-out nearest occurrence, 11 words × 2 senses × 8 sentences) with the GloVe
bag-of-context baseline beside it, WiC dev (cosine threshold chosen on WiC train, per layer; --wic), and
cloze top-1 / top-10 for masked LMs (102 everyday, news and general-knowledge sentences; 72 before 2026-11-27).

    python bench/quality/model_quality.py [--models NAME,PATH,...] [--extra runs/x,...] [--wic] [--kn3] [--keep-rows]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from bench._report import (  # noqa: E402
    loaded_models,
    machine,
    results_file,
    rows_replaced,
    section,
    write_section,
)
from engine import api  # noqa: E402
from engine.data.sense_pairs import BUNDLED  # noqa: E402
from engine.data.vocab import Vocab  # noqa: E402
from engine.inspection.quality import (  # noqa: E402
    Spelling,
    cloze_items,
    cloze_scores,
    glove_context_baseline,
    masked_word_scores,
    perplexity_per_word,
    sense_separation,
)

MASKED_SENTENCES = 1000  # held-out sentences with one word masked each (masked_word_scores)


def default_models() -> list[str]:
    return ["all-minilm-l6-v2", *api.default_checkpoints()]


def wic_by_layer(handle: object, train_pairs: int) -> tuple[list[float], int]:
    """WiC dev accuracy per layer (threshold chosen on train) and the layer that does best on train."""
    from bench.quality.wic_sense_separation import dev_accuracy_by_layer, read_split

    dev, train, _ = dev_accuracy_by_layer(handle, read_split("train", train_pairs), read_split("dev"))
    return dev, int(np.argmax(train))


def written_with() -> str:
    """The command line the model-quality section says it was written with ("" where there is none)."""
    results = results_file(__file__)
    body = section(results.read_text(encoding="utf-8"), "model-quality") if results.exists() else None
    command = "`python bench/quality/model_quality.py"
    if not body or command not in body:
        return ""
    start = body.index(command)
    return body[start:body.index("`", start + 1)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=",".join(default_models()))
    p.add_argument("--extra", default="", help="more models (e.g. runs being trained)")
    p.add_argument("--wic", action="store_true", help="also WiC dev per layer (slow: every pair through the model)")
    p.add_argument("--train-pairs", type=int, default=1500)
    p.add_argument("--kn3", action="store_true",
                   help="train a Kneser-Ney 3-gram on the default corpus's train part and list it (the LM baseline)")
    p.add_argument("--keep-rows", action="store_true",
                   help="re-run only --models (a default checkpoint replaced, say): their rows are replaced in the "
                        "section written before, every other row and its text kept")
    args = p.parse_args()
    for flag, given in (("--kn3", args.kn3), ("--wic", args.wic)):
        if args.keep_rows and not given and flag in written_with():
            p.error(f"the section was written with {flag}: re-run its rows with {flag} too (else the rows re-run "
                    f"lose what {flag} adds, and the table mixes rows with it and without)")
    names = [n for n in (args.models + "," + args.extra).split(",") if n]
    tmp = None
    if args.kn3:
        import tempfile

        tmp = tempfile.TemporaryDirectory()
        out = str(Path(tmp.name) / "kn3-default")
        spec = api.RunSpec("ngram", out=out, corpus="default", model=api.model_config("ngram", order=3,
                                                                                       smoothing="kneser-ney"))
        for _ in api.train(spec):
            pass
        names.append(out)
    heldout = list(api.corpus_sample("default", n=100_000, part="heldout"))
    # the fair per-word comparison with the n-gram: only sentences whose every word is in its vocabulary,
    # so no model is scored on "<unk>" (a closed-vocabulary model's <unk> stands for every rare word at
    # once, at one cheap probability; GPT must spell each rare word out, piece by piece)
    known = set(Vocab.load(Path(out) / "vocab.txt").words) if args.kn3 else None
    in_vocab = [s for s in heldout if known is not None and all(w in known for w in api.word_tokenize(s))]
    # open vocabulary: a word-level model pays for each word it does not know the cost of spelling it out
    # (a character bigram model of the word types of the corpus's train part), as GPT spells its pieces
    spelling = Spelling({w for s in api.corpus_sample("default", n=10**9, part="train") for w in api.word_tokenize(s)})
    baseline = glove_context_baseline(api.load("glove-6b-50d"))
    rows: list[str] = []
    keys: dict[str, str] = {}  # a row's model, as its first cell starts, -> the row
    for _name, handle in loaded_models(names):
        caps = handle.capabilities
        senses = wic = cloze = ppl = "—"
        if api.Capability.SENTENCE_SCORE in caps and api.Capability.MASKED_LM not in caps:
            both = perplexity_per_word(handle, heldout, spelling)  # (its own vocabulary's and the open one, at once)
            ppl = f"{both['closed_perplexity_per_word']:.1f}"
            if both["unknown_words"]:
                ppl += f" ({both['perplexity_per_word']:.1f} spelled)"
            if in_vocab:
                ppl += f" / {perplexity_per_word(handle, in_vocab)['perplexity_per_word']:.1f}"
        if api.Capability.CONTEXTUAL in caps:
            by_layer = sense_separation(handle)
            best = int(np.argmax(by_layer))
            mark = " **beats**" if by_layer[best] > baseline else ""
            senses = f"{', '.join(f'{x:.3f}' for x in by_layer)} (best {by_layer[best]:.3f} at {best}{mark})"
            if args.wic:
                accs, w = wic_by_layer(handle, args.train_pairs)
                wic = f"{', '.join(f'{x:.3f}' for x in accs)} ({accs[w]:.3f} at {w}, the layer chosen on train)"
        if api.Capability.FILL_BLANK in caps:  # (a masked LM, or ELMo's two LMs together)
            scores = cloze_scores(handle)
            masked = masked_word_scores(handle, heldout[:MASKED_SENTENCES])
            cloze = (f"{scores['cloze_top1']:.3f} / {scores['cloze_top10']:.3f} "
                     f"(held-out {masked['masked_top1']:.3f} / {masked['masked_top10']:.3f})")
        pairs = handle.info.get("sense_pairs")
        label = f"{handle.name} ({handle.kind})" + ("" if not pairs else " †" if pairs in BUNDLED else " ‡")
        rows.append(f"| {label} | {senses} | {wic} | {cloze} | {ppl} |")
        keys[f"{handle.name} ({handle.kind})"] = rows[-1]
        print(rows[-1], flush=True)
    body = "\n".join([
        "## Model quality on the bundled sets", "", f"Machine: {machine()}", "",
        "`python bench/quality/model_quality.py" + (" --kn3" if args.kn3 else "") + (" --wic" if args.wic else "") + (f" --extra {args.extra}" if args.extra else "")
        + "`. Sense separation: each occurrence of a polysemous word gets the sense of its nearest other occurrence "
        "(cosine, leave-one-out; several equally near share the choice: the share of them with its sense; 176 "
        "sentences, chance ≈ 0.47), by layer (0 = the input layer: a static one scores chance). "
        f"**GloVe bag-of-context baseline** (mean GloVe 6B-50d vector of the words within 10 of the target, no "
        f"training): **{baseline:.3f}**. Cloze: accepted answer first / in the top 10 ({len(cloze_items())} sentences); in brackets the same for one random word "
        f"(letters only) masked in each of the first {MASKED_SENTENCES:,} held-out sentences of four words or more, a larger "
        "set nobody picked. WiC dev: cosine "
        "threshold per layer and the layer chosen on WiC train (shown with --wic). Perplexity per word on the default corpus's "
        f"held-out sentences ({sum(len(api.word_tokenize(s)) for s in heldout):,} words; every model scores the same words, "
        "sub-word pieces summed, no end-of-sentence event); for word-level models (n-gram, ELMo), which score every word they do "
        "not know as one <unk> class, in brackets the same with each such word's spelling paid for as well (a character "
        "bigram model fitted on the word types of the corpus's train part: log p(<unk> | history) + log p(spelling)), "
        "so that every model predicts the same text (open vocabulary)"
        + (f"; after the slash, on the {len(in_vocab):,} held-out sentences ({sum(len(api.word_tokenize(x)) for x in in_vocab):,} "
           "words) whose every word is in the Kneser-Ney model's vocabulary, so that no model is scored on <unk> "
           "(the n-gram's <unk> stands for every rare word at one cheap probability, while GPT must spell each "
           "rare word out piece by piece)" if in_vocab else "") + ". †: its word vectors also learned senses from "
        "word2bert's own word-in-context sentences (`mlm-head --sense-pairs sense-train`: 34 words, none of the sense "
        "set's); WiC and the sense set were never trained on. ‡: from another pairs file (WiC train, say): its WiC dev "
        "figure is then not zero-shot.", "",
        "| model | sense separation by layer | WiC dev by layer | cloze top-1 / top-10 | perplexity per word |",
        "|---|---|---|---:|---:|", *rows])
    if args.keep_rows:
        import datetime

        before = section(results_file(__file__).read_text(encoding="utf-8"), "model-quality") or ""
        note = (f"Rows re-run alone on {datetime.date.today()} (`--models {args.models} --keep-rows"
                + (" --kn3" if args.kn3 else "") + (" --wic" if args.wic else "") + f"`, {machine()}): "
                + f"{', '.join(keys)}.")
        shipped = set(default_models())  # a checkpoint shipped since the section was written gets its row
        body = rows_replaced(before, keys, note, new=tuple(k for k in keys if k.rsplit(" (", 1)[0] in shipped))
    print(body)
    write_section("model-quality", body)


if __name__ == "__main__":
    main()
