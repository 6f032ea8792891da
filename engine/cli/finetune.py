"""``word2bert-finetune``: fine-tune a pre-trained model on a task, headless, with the GUI's events.

    word2bert-finetune --model bert-tiny --task bbc-topics --strategy full --out runs/bbc-full
    word2bert-finetune --model RUN_OR_HF_DIR --task my.csv --strategy top-2 --out RUN_DIR
    word2bert-finetune --resume RUN_DIR
"""

from __future__ import annotations

import argparse
import sys
import threading

from engine.cli.runner import lower_priority, run_events
from engine.finetune.spec import FinetuneSpec


def _parser() -> argparse.ArgumentParser:
    from engine.data.tasks import builtin_tasks

    p = argparse.ArgumentParser(prog="word2bert-finetune", description="Fine-tune ELMo, GPT, BERT or a Hugging Face "
                                "checkpoint on a classification, tagging or span task.")
    p.add_argument("--model", help="run folder, Hugging Face folder, or a shipped default (bert-tiny, gpt-tiny, elmo-tiny)")
    p.add_argument("--task", help=f"{' | '.join(builtin_tasks())} | a CSV/TSV (text[,text_b],label), CoNLL or "
                   "SQuAD-style JSON file")
    p.add_argument("--validation", default=None, help="a validation file (default: a fixed split of the task)")
    p.add_argument("--strategy", default="full",
                   help="full | frozen (feature-based) | top-N (the top N layers learn) | scratch (no pre-training)")
    p.add_argument("--out", help="the run folder to create")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a stopped fine-tuning run")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=None, help="default 1e-3 for frozen, 2e-4 otherwise")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-len", type=int, default=128, help="tokens per example (longer ones are truncated)")
    p.add_argument("--lm-weight", type=float, default=0.0, help="GPT's auxiliary LM loss weight (GPT used 0.5)")
    p.add_argument("--eval-every", type=int, default=0, help="steps between validations (0: about 8 per run)")
    p.add_argument("--log-every", type=int, default=5)
    p.add_argument("--probe", action="append", default=[], help="a sentence to predict during training (repeatable)")
    p.add_argument("--probe-every", type=int, default=0, help="steps between probe predictions (0: at each validation)")
    p.add_argument("--max-train", type=int, default=None, help="use only the first N training examples")
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1, mps (default: the best available)")
    p.add_argument("--background", action="store_true", help="run at a lower priority (the app's runs)")
    p.add_argument("--json-events", action="store_true", help="print every event as a JSON line on stdout")
    return p


def finetune_main(argv: list[str] | None = None) -> int:
    from engine.finetune.recipe import finetune
    from engine.handles.load import load

    args = _parser().parse_args(argv)
    if args.resume:
        spec = FinetuneSpec(model="", task="", out=args.resume, resume=True, probes=args.probe)
    else:
        missing = [f"--{name}" for name in ("model", "task", "out") if not getattr(args, name)]
        if missing:
            print(f"word2bert-finetune: give {', '.join(missing)} (or --resume RUN_DIR)", file=sys.stderr)
            return 2
        spec = FinetuneSpec(model=args.model, task=args.task, out=args.out, strategy=args.strategy,
                            validation=args.validation, epochs=args.epochs, lr=args.lr, batch_size=args.batch_size,
                            max_len=args.max_len, lm_weight=args.lm_weight, eval_every=args.eval_every,
                            log_every=args.log_every, probes=args.probe, probe_every=args.probe_every, max_train=args.max_train,
                            max_steps=args.max_steps, seed=args.seed, device=args.device)
        problems = spec.problems()
        if problems:
            print("word2bert-finetune: " + "; ".join(problems), file=sys.stderr)
            return 2
    if args.background:
        lower_priority()
    stop = threading.Event()
    return run_events(lambda: finetune(spec, stop, load=load), stop, prog="word2bert-finetune", json_events=args.json_events,
                      aborted="the best checkpoint so far is kept", failed_event_for=spec.out)


def main() -> None:
    """The console script ``word2bert-finetune``: finetune_main, then a quick exit (runner.exit_now)."""
    from engine.cli.runner import catch_sigint_early, exit_now

    catch_sigint_early("--json-events" in sys.argv)
    exit_now(finetune_main())


if __name__ == "__main__":
    main()
