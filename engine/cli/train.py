"""``word2bert-train``: train a model of the lineage from the command line (the same events as the app).
Ctrl-C saves a resumable checkpoint (a second Ctrl-C aborts)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
from typing import Any

from engine.cli.runner import lower_priority, run_events
from engine.config.run_spec import RunSpec
from engine.config.settings import MODEL_CONFIGS, field_help, model_config
from engine.data import prefetch
from engine.errors import Word2BertError
from engine.families import device_settings, family
from engine.training.continued import kept_settings, said_settings


def _add_model_options(parser: argparse.ArgumentParser, kind: str) -> None:
    group = parser.add_argument_group(f"{kind} settings")
    said = field_help(kind)  # the comment beside each setting, as the Pretrain form's tooltips say it
    for f in dataclasses.fields(MODEL_CONFIGS[kind]):
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        text = (said.get(f.name, "") + f" (default {default!r})" if isinstance(default, str) else
                said.get(f.name, "") + f" (default {default})").strip().replace("%", "%%")
        if isinstance(default, bool):
            group.add_argument(flag, dest=f"m_{f.name}", action=argparse.BooleanOptionalAction, default=None,
                               help=text)
        else:
            typ = type(default) if default is not None else int
            group.add_argument(flag, dest=f"m_{f.name}", type=typ, default=None, help=text, metavar=f.name.upper())
    types = {f.name: type(f.default) if f.default is not None else int for f in dataclasses.fields(MODEL_CONFIGS[kind])}
    for alias, target in family(kind).aliases.items():  # the target's own type (--dim: an int, --model: a name)
        group.add_argument("--" + alias, dest=f"m_{target}", type=types.get(target, int), default=None,
                           help=f"same as --{target.replace('_', '-')}")
    for name, option in family(kind).options.items():  # the family's own names for its settings
        group.add_argument("--" + name, dest=f"o_{name}", choices=list(option.values), default=None, help=option.help)


def _train_parser(kind: str | None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="word2bert-train", description="Train a model of the NLP-pretraining lineage.")
    p.add_argument("kind", choices=sorted(MODEL_CONFIGS), nargs="?" if kind is None else None,
                   help="model family (optional with --resume)")
    p.add_argument("--corpus", default="default", help="default, wiki-vital, bbc-news, enwiki-sample, chitchat, or a file/folder")
    p.add_argument("--out", help="run folder to create")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a stopped run")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps (default: best available)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-words", type=int, default=None, help="read at most this many corpus words (quick runs)")
    p.add_argument("--max-steps", type=int, default=None,
                   help="bert/gpt/elmo/nnlm and the heads: the run's length in steps (instead of --epochs); word2vec, glove, ngram: "
                        "stop resumably after it (word2vec stops at the end of a chunk of ~200,000 words, and a step is "
                        "a chunk, or a batch of it where a GPU trains without the fused kernel)")
    p.add_argument("--max-minutes", type=float, default=None,
                   help="stop after this many minutes (of wall time, or CPU time with --budget-clock cpu), saved and "
                        "resumable as on Ctrl-C "
                        "(compare recipes on one time budget)")
    p.add_argument("--budget-clock", choices=("wall", "cpu"), default="wall",
                   help="what --max-minutes counts: wall time, or the CPU time this run itself uses "
                        "(fair when other jobs share the machine)")
    p.add_argument("--budget-schedule", action="store_true",
                   help="bert/gpt/elmo/nnlm and the heads: the learning rate decays to 0 when the --max-minutes budget is spent "
                        "(or at the last step, if that comes first), as Cramming does: the run uses its whole "
                        "budget without guessing its step count. A --resume keeps the schedule, its clock and "
                        "what was spent (a larger --max-minutes extends the budget)")
    p.add_argument("--compile", action="store_true",
                   help="bert/gpt/elmo/nnlm and the heads: torch.compile the model the steps run (on an H200: BERT-base "
                        "1.24-1.32x transformers' speed against 1.06x without; ELMo-tiny slower, 312k against 416k "
                        "tokens/s: bench/RESULTS.md; the first steps wait a minute for the compiler; on a CPU rarely "
                        "worth it)")
    p.add_argument("--checkpoint-every", type=int, default=0, help="steps between checkpoints (0: at evaluations/epochs)")
    p.add_argument("--log-every", type=int, default=50, help="steps between progress events")
    p.add_argument("--background", action="store_true",
                   help="run at a lower CPU priority (the app does: its window stays responsive on few cores)")
    p.add_argument("--json-events", action="store_true",
                   help="print every event as one JSON line on stdout (for the app, which runs the CLI as a process)")
    if kind:
        _add_model_options(p, kind)
    return p


def _model_config(kind: str, args: argparse.Namespace, device_type: str | None = None) -> Any:
    """The preset first, then what the family trains with on ``device_type`` (a GPU wants bigger steps),
    then the explicit settings, which override both."""
    settings = {f.name: getattr(args, f"m_{f.name}") for f in dataclasses.fields(MODEL_CONFIGS[kind])
                if f.name != "preset" and getattr(args, f"m_{f.name}", None) is not None}
    for name, option in family(kind).options.items():
        if getattr(args, f"o_{name}", None):
            settings.update(option.values[getattr(args, f"o_{name}")])
    chosen = {k: v for k, v in device_settings(kind, device_type).items() if k not in settings}
    if chosen:
        print(f"word2bert-train: {kind} on {device_type} trains with {said_settings(chosen)} (chosen for GPUs: "
              f"bench/RESULTS.md; give {_flags(chosen)} to choose yourself)", file=sys.stderr)
    kept: dict[str, Any] = {}
    if settings.get("init_from") and not args.resume:  # a continued run learns as the run it goes on from did
        kept = {k: v for k, v in kept_settings(kind, settings["init_from"]).items() if k not in settings}
        if kept:
            print(f"word2bert-train: goes on as {settings['init_from']} learned: {said_settings(kept)} (give "
                  f"{_flags(kept)} to choose yourself)", file=sys.stderr)
    return model_config(kind, getattr(args, "m_preset", None), **{**chosen, **kept, **settings})


def _flags(settings: dict[str, Any]) -> str:
    """The flags that set them otherwise (a switch that is on: its --no- flag)."""
    return " ".join(f"--{'no-' if v is True else ''}{k.replace('_', '-')}" for k, v in settings.items())


def _device_type(kind: str, args: argparse.Namespace) -> str | None:
    """The type of the device a fresh run of ``kind`` will train on, where its family trains differently on
    a GPU (asking imports torch: the other families' runs fork their corpus reader first); None otherwise
    or when the device asked for is not there (the run says so itself)."""
    if args.resume or not family(kind).on_gpu:
        return None
    from engine.device import pick_device

    try:
        return pick_device(args.device).type
    except (ValueError, RuntimeError):
        return None


def train_main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = argv[0] if argv and not argv[0].startswith("-") else None
    kind = first
    if kind in MODEL_CONFIGS:  # "word2bert-train KIND --help" lists the family's settings
        pre = _train_parser(kind).parse_known_args(argv)[0]
    else:
        pre = _train_parser(None).parse_known_args(argv)[0]
    try:
        if kind is None and pre.resume:
            from engine.checkpoints.reading import read_config

            kind = read_config(pre.resume)["kind"]
            argv = [kind, *argv]
    except Word2BertError as e:
        print(f"word2bert-train: {e}", file=sys.stderr)
        return 2
    if kind not in MODEL_CONFIGS:
        _train_parser(None).parse_args(argv)  # prints usage and exits
        return 2
    args = _train_parser(kind).parse_args(argv)
    out = args.resume or args.out
    if not out:
        print("word2bert-train: give --out RUN_DIR (or --resume RUN_DIR)", file=sys.stderr)
        return 2
    try:
        spec = RunSpec(kind=kind, out=out, corpus=args.corpus, device=args.device, seed=args.seed,
                       model=_model_config(kind, args, _device_type(kind, args)), log_every=args.log_every, max_steps=args.max_steps,
                       checkpoint_every=args.checkpoint_every,
                       max_words=args.max_words, max_minutes=args.max_minutes,
                       budget_clock=args.budget_clock,
                       budget_schedule=args.budget_schedule, resume=bool(args.resume), compile=args.compile)
    except ValueError as e:
        print(f"word2bert-train: {e}", file=sys.stderr)
        return 2
    if args.background:
        lower_priority()
    if getattr(spec.model, "reads_word_ids", False):  # word2vec, GloVe: the corpus is read on the other core while torch loads
        prefetch.start(spec.corpus, "train", spec.model.lowercase, spec.max_words)
    from engine.handles.load import load  # a tuned lens opens the model it reads
    from engine.training.loop import train  # torch, numba: after the fork

    stop = threading.Event()
    try:
        return run_events(lambda: train(spec, stop, load), stop, prog="word2bert-train", json_events=args.json_events,
                          aborted="the last saved checkpoint is kept", run_dir=spec.out)
    finally:  # a run stopped or failed before it read the corpus leaves no reading process behind
        prefetch.cancel_all()


def main() -> None:
    """The console script ``word2bert-train``: train_main, then a quick exit (runner.exit_now)."""
    from engine.cli.runner import catch_sigint_early, exit_now

    catch_sigint_early("--json-events" in sys.argv)
    exit_now(train_main())


if __name__ == "__main__":
    main()
