"""``word2bert-eval``: score a model (run folder, built-in name or vectors file) on the evaluation sets."""

from __future__ import annotations

import argparse
import json
import sys

from engine.errors import Word2BertError


def eval_main(argv: list[str] | None = None) -> int:
    from engine.data.evaluation import TASKS, evaluate_handle
    from engine.handles.load import load

    p = argparse.ArgumentParser(prog="word2bert-eval", description="Evaluate a model (run folder, glove-6b-50d, vectors file).")
    p.add_argument("model")
    p.add_argument("--tasks", default="analogy,wordsim,simlex", help=f"comma-separated: {','.join(TASKS)}")
    p.add_argument("--corpus", default=None, help="corpus whose held-out part perplexity uses (default: the model's)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    try:
        result = evaluate_handle(load(args.model), tasks, args.corpus)
    except (Word2BertError, ValueError) as e:
        print(f"word2bert-eval: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(eval_main())
