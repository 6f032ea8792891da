"""``word2bert-eval``: score a model (run folder, built-in name or vectors file) on the evaluation sets:
analogy, word similarity, held-out perplexity, and the bundled cloze and sense sets."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engine.errors import Word2BertError
from engine.inspection import history_scores
from engine.inspection.history_scores import (
    CHECKPOINT_TASKS,
    LAB_TASKS,
    QUALITY_TASKS,
    checkpoint_scores,
    quality,
)


def eval_main(argv: list[str] | None = None) -> int:
    from engine.data.evaluation import TASKS, evaluate_handle
    from engine.handles.load import load

    known = (*TASKS, *QUALITY_TASKS, *LAB_TASKS)
    p = argparse.ArgumentParser(prog="word2bert-eval", description="Evaluate a model (run folder, glove-6b-50d, vectors file).")
    p.add_argument("model")
    p.add_argument("--tasks", default=None, help=f"comma-separated: {','.join(known)} (default: what the model can "
                   "take — word vectors: analogy,wordsim,simlex; a masked LM: cloze,senses; another contextual "
                   "model: senses; a model that scores text: perplexity on its corpus's held-out part; senses-dev: "
                   "the development sense set, and the layer the polysemy lens would open the model at)")
    p.add_argument("--corpus", default=None, help="corpus whose held-out part perplexity uses (default: the model's)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--all-checkpoints", action="store_true",
                   help="score every checkpoint the run kept (step-N or checkpoint-N folders): one line each")
    p.add_argument("--against", default=None, metavar="B",
                   help="another model (a run folder, a shipped or Hugging Face model; or the run itself): every "
                   "layer of MODEL against every layer of B, linear CKA over the words of --sentences held-out "
                   "sentences; with --all-checkpoints, each checkpoint against B layer by layer")
    p.add_argument("--sentences", type=int, default=200, help="with --against: how many held-out sentences")
    p.add_argument("--debiased", action="store_true", help="with --against: the debiased CKA estimate")
    args = p.parse_args(argv)
    if args.against:
        from engine.cli.eval_layers import against_main

        return against_main(args.model, args.against, args.sentences, args.corpus, args.debiased,
                            args.all_checkpoints, args.json)
    tasks = [t.strip() for t in (args.tasks or "").split(",") if t.strip()]
    unknown = [t for t in tasks if t not in known]
    if unknown:
        print(f"word2bert-eval: unknown task {unknown[0]!r} (choose from {', '.join(known)})", file=sys.stderr)
        return 2
    if args.all_checkpoints:
        return _every_checkpoint(args.model, tasks, args.corpus, args.json)
    try:
        handle = load(args.model)
        if not tasks:
            tasks = default_tasks(handle)
            print(f"word2bert-eval: {', '.join(tasks)} (what {handle.name} can take; choose with --tasks)",
                  file=sys.stderr, flush=True)
        result: dict[str, Any] = {"model": handle.name, "kind": handle.kind}
        if not args.json:
            print(f"model: {handle.name}\nkind: {handle.kind}", flush=True)
        for task in tasks:  # each said as it is done (the held-out perplexity of a corpus takes a minute)
            if task in TASKS:
                result[task] = evaluate_handle(handle, [task], args.corpus)[task]
            elif task in QUALITY_TASKS + LAB_TASKS:
                result[task] = quality(handle, task, args.corpus)
            else:
                continue
            if not args.json:
                print(f"{task}: {plain(result[task])}", flush=True)
    except (Word2BertError, ValueError) as e:
        print(f"word2bert-eval: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    return 0


def default_tasks(handle: Any) -> list[str]:
    """The scores a model can take, when none are asked for: static vectors' word tests, a masked LM's cloze and
    sense sets, another contextual model's senses, and a model that scores sentences its held-out perplexity."""
    from engine.results import Capability

    caps = handle.capabilities
    tasks = ["analogy", "wordsim", "simlex"] if caps & Capability.STATIC else []
    if caps & Capability.FILL_BLANK:  # (a masked LM, or ELMo's two LMs together)
        tasks.append("cloze")
    if caps & Capability.CONTEXTUAL:
        tasks.append("senses")
    if caps & Capability.SENTENCE_SCORE and not caps & Capability.MASKED_LM:  # (a masked LM's: one pass per token)
        tasks.append("perplexity")
    return tasks or ["analogy", "wordsim", "simlex"]  # (each then says why the model cannot take it)


def plain(value: Any) -> str:
    """A result for people: numbers to four significant digits, a task's several scores as "name value"
    pairs (JSON keeps every digit: --json)."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {plain(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(plain(v) for v in value)
    return str(value)


def _every_checkpoint(run: str, tasks: list[str], corpus: str | None, as_json: bool) -> int:
    """One line per kept checkpoint, oldest first: its step, the tokens it had seen, the scores."""
    from engine.data.evaluation import TASKS, evaluate_handle
    from engine.handles.history import run_history
    from engine.handles.load import load

    try:
        history = run_history(run)
        if not tasks:  # what the run's last checkpoint can take (every checkpoint of a run is the same model)
            tasks = default_tasks(load(history[-1].path))
            print(f"word2bert-eval: {', '.join(tasks)} (choose with --tasks)", file=sys.stderr, flush=True)
    except Word2BertError as e:
        print(f"word2bert-eval: {e}", file=sys.stderr)
        return 2
    scored = tuple(t for t in tasks if t in CHECKPOINT_TASKS)  # cached per checkpoint, perplexity on a sample
    static = [t for t in tasks if t in TASKS and t not in scored]  # vectors' tasks: quick, not cached
    print(f"word2bert-eval: {len(history)} checkpoints of {run}; "
          + (f"perplexity on the first {history_scores.PERPLEXITY_SENTENCES} held-out sentences (the same for every checkpoint); "
             if {"perplexity", "perplexity-per-word"} & set(scored) else "")
          + "scores already computed for a checkpoint are read from the cache folder", file=sys.stderr, flush=True)

    def said(fraction: float, message: str) -> None:
        print(f"word2bert-eval: {message}", file=sys.stderr, flush=True)

    rows = checkpoint_scores(run, scored, progress=said, corpus=corpus) if scored else (
        {"step": k.step, "path": k.path} for k in history)
    for kept, row in zip(history, rows, strict=True):
        row = dict(row)
        tokens = kept.tokens()
        if tokens is not None:
            row.setdefault("tokens_seen", tokens)
        if static and "error" not in row:
            try:
                row.update({k: v for k, v in evaluate_handle(load(kept.path), static, corpus).items()
                            if k not in ("model", "kind")})
            except (Word2BertError, ValueError) as e:
                row["error"] = str(e)
        print(json.dumps(row) if as_json else "; ".join(f"{k}: {plain(v)}" for k, v in row.items()), flush=True)
    return 0


def main() -> None:
    """The console script ``word2bert-eval``: eval_main, then a quick exit (runner.exit_now)."""
    from engine.cli.runner import exit_now

    exit_now(eval_main())


if __name__ == "__main__":
    main()
