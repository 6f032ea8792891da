"""The measurements of bench/gpu_check.py, one per sub-command, each printing ``FIGURE name value unit``
lines that the check collects (and failing with a message where the device does not do what it should).

    python bench/gpu_figures.py matmul --device cuda
    python bench/gpu_figures.py word2vec --device cuda --corpus corpus.txt [--epochs 1]
    python bench/gpu_figures.py elmo --device cuda --corpus corpus.txt [--steps 300]
    python bench/gpu_figures.py minilm --device cuda --corpus corpus.txt [--word bank]
    python bench/gpu_figures.py queries --device cuda --corpus corpus.txt --run RUN [--run RUN...]
    python bench/gpu_figures.py profile --device cuda --corpus corpus.txt --family elmo [--steps 40]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


QUICK = bool(os.environ.get("WORD2BERT_QUICK_FIGURES"))  # the CPU dry run: the same code on less work


def figure(name: str, value: float, unit: str) -> None:
    print(f"FIGURE {name} {value:.6g} {unit}", flush=True)


def sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()
    elif device.type == "mps":
        torch.mps.synchronize()


def matmul(args) -> None:
    """The bf16 matrix product's measured rate: what the model FLOPs are a share of."""
    import torch

    from bench.speed.bert_vs_transformers import matmul_rate
    from engine.device import pick_device

    device = pick_device(args.device)
    if device.type != "cuda":
        print("matmul: measured on CUDA only")
        return
    figure("bf16_matmul", matmul_rate(device) / 1e12, "TFLOP/s")
    print(torch.cuda.get_device_name(device))


def word2vec(args) -> None:
    """word2vec SG-NS on the device (the batched torch steps on a GPU, the fused kernel where Triton runs):
    words/s and WordSim-353 at the default batch and at each of ``--batch-pairs`` (a lever), and how fast the
    host alone makes the examples (numpy on the CPU: a GPU cannot go faster than that); then CBOW-NS, batched
    and through its fused kernel."""
    import numpy as np
    import torch

    from engine.config.settings import Word2VecConfig
    from engine.data.corpora import get_corpus
    from engine.data.evaluation import quick_word_similarity
    from engine.data.keyed_vectors import StaticVectors
    from engine.data.text import encode_sentences, tokenized_sentences
    from engine.data.vocab import Vocab
    from engine.device import pick_device
    from engine.models.word2vec.examples import make_examples_torch
    from engine.models.word2vec.model import Word2VecModel, train_steps
    from engine.models.word2vec.steps import chunk_bounds, make_examples

    device = pick_device(args.device)
    sentences = list(tokenized_sentences(get_corpus(args.corpus).sentences("train")))
    if args.max_words:
        sentences = sentences[: max(1, args.max_words // 20)]
    words = sum(len(s) for s in sentences) * args.epochs
    base = Word2VecConfig(sg=1, hs=0, epochs=args.epochs)
    vocab = Vocab.build(sentences, base.min_count)
    ids, starts = encode_sentences(sentences, vocab.index)
    # the host's share: making one epoch's examples, nothing trained
    keep = vocab.keep_probabilities(base.sample)
    t0 = time.perf_counter()
    for c, (s0, s1) in enumerate(chunk_bounds(starts)):
        lo, hi = int(starts[s0]), int(starts[s1])
        sent = np.repeat(np.arange(s0, s1, dtype=np.int32), np.diff(starts[s0 : s1 + 1]))
        make_examples(np.asarray(ids[lo:hi]), sent, keep, base, np.random.default_rng([0, 0, c]))
    figure("word2vec_sgns_examples_host", words / args.epochs / (time.perf_counter() - t0), "words/s")
    keep_t = torch.from_numpy(keep.astype(np.float32)).to(device)
    gen = torch.Generator(device=device).manual_seed(0)
    for _ in range(2):  # the first pass warms the kernels up, the second is timed
        sync(device)
        t0 = time.perf_counter()
        for (s0, s1) in chunk_bounds(starts):
            lo, hi = int(starts[s0]), int(starts[s1])
            sent = np.repeat(np.arange(s0, s1, dtype=np.int64), np.diff(starts[s0 : s1 + 1]))
            make_examples_torch(torch.from_numpy(np.asarray(ids[lo:hi], dtype=np.int64)).to(device),
                                torch.from_numpy(sent).to(device), keep_t, base, gen)
        sync(device)
    figure(f"word2vec_sgns_examples_{device.type}", words / args.epochs / (time.perf_counter() - t0), "words/s")
    from engine.models.word2vec import fused, graphed

    # the step eagerly and as a CUDA graph (the default on CUDA), then any other batch sizes asked (graphed).
    # (Replaying 4, 16 or 64 consecutive steps as one graph was measured and bought nothing: RESULTS, GPU.)
    from engine.models.word2vec import model as word2vec_model

    graphs = device.type == "cuda"  # captured where CUDA is, the step as it is elsewhere
    sampled = word2vec_model.loss_every
    defaults = graphed.ENABLED, fused.ENABLED, fused.PER_CHUNK, fused.PROGRAMS, fused.CBOW_ENABLED, \
        fused.CBOW_PROGRAMS  # put back after the variants
    # (sg, batch, graph, the loss on every step, fused): on CUDA the graphed step also with its loss on every step,
    # the declared comparison for the loss on one step in LOSS_EVERY (bench/RESULTS.md, GPU: "Since"); where
    # Triton runs, the fused kernel a launch a chunk with 528 and 1,056 programs in flight (the default, chosen
    # by the fifth run's declared rule), and a launch a step; then CBOW: its batched steps, and its fused kernel a
    # launch a chunk with 264, 528 and 1,056 programs (bench/RESULTS.md, GPU: "CBOW through a fused kernel", the
    # rule that picks among them declared before a GPU ran it)
    kernel = graphs and fused.available(device)
    variants = [(1, 0, False, False, None), *([(1, 0, True, False, None), (1, 0, True, True, None)] if graphs else []),
                *((1, int(b), graphs, False, None) for b in args.batch_pairs.split(",") if b),
                *([(1, 0, False, False, ("chunk", p)) for p in (528, 1056)] + [(1, 0, False, False, ("step", 528))]
                  if kernel else []),
                (0, 0, False, False, None),
                *([(0, 0, False, False, ("chunk", p)) for p in (264, 528, 1056)] if kernel else [])]
    for sg, batch, graph, every_loss, fuse in variants:
        graphed.ENABLED = graph
        fused.ENABLED = fuse is not None
        fused.CBOW_ENABLED = fuse is not None and not sg
        if fuse is not None:
            fused.PER_CHUNK = fuse[0] == "chunk"
            if sg:
                fused.PROGRAMS = fuse[1]
            else:
                fused.CBOW_PROGRAMS = fuse[1]
        word2vec_model.loss_every = (lambda _device: 1) if every_loss else sampled  # type: ignore[assignment]
        batching: dict[str, Any] = {"batch_pairs": batch} if batch else {}
        cfg = Word2VecConfig(sg=sg, hs=0, epochs=args.epochs, **batching)
        captures, launches = graphed.STATS["captured"], fused.STATS["launches"]
        try:
            model = Word2VecModel(vocab, cfg, device, seed=1)
            with torch.no_grad():  # warm-up: kernels, allocator
                for i, _ in enumerate(train_steps(model, ids[: starts[min(len(starts) - 1, 2000)]], starts[:2001],
                                                  seed=0)):
                    if i > 5:
                        break
                model = Word2VecModel(vocab, cfg, device, seed=1)
                sync(device)
                t0 = time.perf_counter()
                last = None
                for info in train_steps(model, ids, starts, seed=1):
                    last = info["step_loss"]
                if last is not None:
                    float(last)
                sync(device)
            elapsed = time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001 - a variant that fails says why; the others still run
            print(f"word2vec variant {sg, batch, graph, every_loss, fuse} failed: {type(e).__name__}: {e}",
                  flush=True)
            continue
        vectors = model.word_vectors()
        ws = quick_word_similarity(StaticVectors(vocab.words, vectors), "wordsim353")["spearman"] \
            if np.all(np.isfinite(vectors)) else float("nan")
        captured = graphed.STATS["captured"] > captures
        variant = "sgns" if sg else "cbowns"
        if fuse is not None:
            ran = fused.STATS["launches"] > launches
            name = f"word2vec_{variant}_{device.type}_fused_{fuse[0]}_p{fuse[1]}" + ("" if ran else "_not_run")
        else:
            name = f"word2vec_{variant}_{device.type}" + ("_graph" if captured else "_graph_failed" if graph else "_eager") + \
                (f"_batch{batch}" if batch else "") + ("_loss_every_step" if every_loss else "")
        print(f"word2vec {'SG-NS' if sg else 'CBOW-NS'} on {device}, {name}, batch {cfg.batch_pairs}: "
              f"{words:,} words ({args.epochs} epochs) in {elapsed:.2f} s, WordSim-353 {ws}", flush=True)
        figure(name, words / elapsed, "words/s")
        figure(f"{name}_ws353", ws if ws is not None else float("nan"), "spearman")
    word2vec_model.loss_every = sampled  # type: ignore[assignment]
    graphed.ENABLED, fused.ENABLED, fused.PER_CHUNK, fused.PROGRAMS, fused.CBOW_ENABLED, fused.CBOW_PROGRAMS = defaults


def elmo(args) -> None:
    """ELMo-tiny pretraining on the device: tokens/s as the training loop reports it (median of its events
    past the first fifth), at the preset's batch size and at each of ``--batch-sizes`` (a lever: a batch
    of 32 windows of 20 tokens keeps a GPU waiting on the host). ``--old-path``: each also as the step was
    before session 60 (the LSTMs under bf16 autocast, torch's adaptive softmax a call per direction), run
    first, from the same seed: the two side by side in one run."""
    from engine import api
    from engine.config.run_spec import RunSpec
    from engine.config.settings import model_config
    from engine.models import adaptive_softmax
    from engine.models import elmo as elmo_model

    sizes = [*([] if args.skip_preset else [0]), *(int(b) for b in args.batch_sizes.split(",") if b)]
    variants = [(c, o) for o in ((True, False) if args.old_path else (False,))
                for c in ((False, True) if args.compile else (False,))]
    for batch, (compiled, old) in ((b, v) for b in sizes for v in variants):
        tag = ("-compiled" if compiled else "") + ("-old-path" if old else "")
        out = Path(args.out or "/tmp/gpu-figures-elmo") / f"batch-{batch or 'preset'}{tag}"
        cfg = model_config("elmo") if not batch else model_config("elmo", batch_size=batch)
        spec = RunSpec("elmo", out=str(out), corpus=args.corpus, device=args.device, model=cfg,
                       max_steps=args.steps, log_every=max(1, args.steps // 10), max_words=args.max_words,
                       compile=compiled)
        elmo_model.LSTM_IN_FP32 = adaptive_softmax.ONE_SYNC = not old
        rates, unit, status, loss = [], "", "", float("nan")
        try:
            for event in api.train(spec):
                if isinstance(event, api.StepMetrics) and event.step > args.steps // 5:  # past the warm-up
                    rates.append(event.throughput)
                    unit, loss = event.unit, event.loss
                if isinstance(event, api.RunFinished):
                    status = f"{event.status} {event.message}"
        finally:
            elmo_model.LSTM_IN_FP32 = adaptive_softmax.ONE_SYNC = True
        said = "".join((", compiled" if compiled else "", ", the old path" if old else ""))
        print(f"elmo batch {cfg.batch_size}{said}: {status}; last loss {loss:.3f}", flush=True)
        if not rates:
            raise SystemExit(f"elmo: no speed reported ({status})")
        name = "elmo_tiny_train" if not batch else f"elmo_tiny_train_batch{batch}"
        figure(name + tag.replace("-", "_"), statistics.median(rates), f"{unit}/s")
        figure(name + tag.replace("-", "_") + "_loss", loss, "loss")


def elmo_batch(args) -> None:
    """Which batch ELMo-tiny should train with on this device: each ``--candidates`` batch:lr trains for
    ``--seconds`` of wall time (epochs without end: the time is the limit) from the same start, its
    learning rate decaying to 0 as the time runs out (``budget_schedule``), and is scored on the same
    held-out sentences (perplexity, both directions).
    The rule, stated before any result: the lowest held-out perplexity wins (bench/RESULTS.md, GPU)."""
    import math

    from engine import api
    from engine.config.run_spec import RunSpec
    from engine.config.settings import model_config
    from engine.data.corpora import get_corpus

    heldout = [s for _, s in zip(range(args.heldout), get_corpus(args.corpus).sentences("heldout"), strict=False)]
    for candidate in args.candidates.split(","):
        batch, lr = int(candidate.split(":")[0]), float(candidate.split(":")[1])
        out = Path(args.out or "/tmp/gpu-figures-elmo-batch") / f"batch-{batch}"
        spec = RunSpec("elmo", out=str(out), corpus=args.corpus, device=args.device,
                       model=model_config("elmo", batch_size=batch, lr=lr, eval_every=0, epochs=1000),
                       max_minutes=args.seconds / 60, budget_schedule=True, log_every=20, max_words=args.max_words)
        rates, steps, status = [], 0, ""
        for event in api.train(spec):
            if isinstance(event, api.StepMetrics):
                steps = event.step
                if event.step > 100:  # past the warm-up (and the first steps' kernels)
                    rates.append(event.throughput)
            if isinstance(event, api.RunFinished):
                status = event.status
        handle = api.load(str(out))
        ppl = handle.perplexity(heldout)
        rate = statistics.median(rates) if rates else float("nan")
        print(f"elmo batch {batch} lr {lr:g}: {status} at step {steps} in {args.seconds:g} s, {rate:,.0f} tokens/s, "
              f"held-out perplexity {ppl:.1f} ({len(heldout)} sentences)", flush=True)
        figure(f"elmo_tiny_{args.seconds:g}s_batch{batch}_perplexity", ppl if math.isfinite(ppl) else float("nan"), "perplexity")
        figure(f"elmo_tiny_{args.seconds:g}s_batch{batch}_rate", rate, "tokens/s")


def profile(args) -> None:
    """Where a training step's time goes on the device: ``--family``'s pretraining run (the loop, the model,
    the optimizer) for ``--steps`` steps under torch.profiler, the ops that take the most device time and
    the most host time, and the synchronisations (a host that waits for the device cannot queue ahead)."""
    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    from engine import api
    from engine.config.run_spec import RunSpec
    from engine.config.settings import model_config

    cfg = model_config(args.family, **({"batch_size": args.profile_batch} if args.profile_batch else {}))
    warm = RunSpec(args.family, out=str(Path(args.out or "/tmp/gpu-figures-profile") / "warm"), corpus=args.corpus,
                   device=args.device, model=dataclasses.replace(cfg), max_steps=5, log_every=5,  # (a run sets
                   max_words=args.max_words)                                                   # its vocab size)
    for _ in api.train(warm):  # the corpus read and cached, the kernels' first calls
        pass
    spec = RunSpec(args.family, out=str(Path(args.out or "/tmp/gpu-figures-profile") / "run"), corpus=args.corpus,
                   device=args.device, model=cfg, max_steps=args.steps,
                   log_every=max(1, args.steps // 4), max_words=args.max_words)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with torch_profile(activities=activities) as prof:
        for _ in api.train(spec):
            pass
    events = prof.key_averages()
    device_key = "self_device_time_total" if hasattr(events[0], "self_device_time_total") else "self_cuda_time_total"
    print(f"{args.family}: {args.steps} steps of {cfg.batch_size} (the corpus read included in the host time)")
    print(events.table(sort_by=device_key, row_limit=15, max_name_column_width=60))
    print(events.table(sort_by="self_cpu_time_total", row_limit=15, max_name_column_width=60))
    launches = sum(e.count for e in events if e.key in ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC"))
    syncs = sum(e.count for e in events if "Synchronize" in e.key)  # cudaStreamSynchronize & co (a .item() of the device's)
    figure(f"{args.family}_kernel_launches_per_step", launches / args.steps, "launches")
    figure(f"{args.family}_host_syncs_per_step", syncs / args.steps, "syncs")


def minilm(args) -> None:
    """A word's occurrences encoded by a MiniLM-shaped BERT (all-MiniLM-L6-v2's config, random weights: the
    speed is the same) as a Hugging Face folder: the lens's click, cold (no cache) and warm."""
    import tokenizers
    import torch
    import transformers

    from engine import api

    folder = Path(args.out or "/tmp/gpu-figures-minilm")
    folder.mkdir(parents=True, exist_ok=True)
    corpus = api.corpus_sample(args.corpus, n=200 if QUICK else 2000, part="train")
    tok = tokenizers.BertWordPieceTokenizer(lowercase=True)
    tok.train_from_iterator(corpus, vocab_size=30522)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok._tokenizer, unk_token="[UNK]", sep_token="[SEP]",
                                                pad_token="[PAD]", cls_token="[CLS]", mask_token="[MASK]")
    fast.save_pretrained(folder)
    cfg = transformers.BertConfig(vocab_size=len(fast), hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                                  intermediate_size=1536, max_position_embeddings=512)
    torch.manual_seed(0)
    transformers.BertForMaskedLM(cfg).save_pretrained(folder)
    handle = api.load(folder)
    print("loaded", handle.kind, handle.info.get("device", ""))
    words = args.words.split(",")
    api.word_occurrences(handle, words[0], args.corpus, limit=20, use_cache=False)  # warm-up: kernels, index
    times = []
    for word in words[:1] if QUICK else words:
        sync_t0 = time.perf_counter()
        occ = api.word_occurrences(handle, word, args.corpus, limit=20 if QUICK else 300, use_cache=False)
        times.append(time.perf_counter() - sync_t0)
        print(word, len(occ.sentences), "occurrences", f"{times[-1]:.3f}s")
    figure(f"minilm_{len(occ.sentences)}_occurrences", statistics.median(times), "s")


def queries(args) -> None:
    """The app's queries on each run, on the device: each answers, and its weights are on the device."""
    import numpy as np

    from engine import api
    from engine.results import Capability

    failures = []
    word = args.words.split(",")[0]
    for run in args.runs:
        handle = api.load(run)
        device = getattr(getattr(handle, "adapter", None), "device", None) or getattr(handle, "device", None)
        caps = handle.capabilities
        asked = []
        t0 = time.perf_counter()
        try:
            if Capability.FILL_BLANK in caps:  # (a masked LM's, or ELMo's two LMs together, and what its blank rests on)
                asked.append(f"fill_mask {handle.fill_mask('the man went to the [MASK] to buy milk .')[0].tokens[:3]}")
                if Capability.MASKED_LM not in caps:
                    blank = handle.token_attribution("the man went to the [MASK] to buy milk .")
                    traced = handle.causal_trace("the man went to the [MASK] to buy milk .", "man", 2)
                    asked.append(f"blank attribution {blank.target!r} gap {blank.gap:+.3f}, traced "
                                 f"{traced.p_clean:.2f}/{traced.p_corrupt:.2f}")
            lab_text = ("the man went to the [MASK] to buy milk ." if Capability.MASKED_LM in caps
                        else "the man went to the shop to buy")
            try:  # the lab's attribution: gradients on the device (ELMo's through its LSTMs without cuDNN)
                lab = handle.token_attribution(lab_text)
                asked.append(f"attribution {lab.target!r} gap {lab.gap:+.3f}")
            except api.Unsupported:
                pass
            try:  # the lens and causal tracing on the device (ELMo's: its LSTMs stepped word by word)
                grid = handle.lens_grid(lab_text, 3)
                trace = handle.causal_trace(lab_text, "man", 2)
                asked.append(f"lens {grid.layers} layers, trace {trace.target!r} {trace.p_clean:.2f}/{trace.p_corrupt:.2f}")
            except api.Unsupported:
                pass
            try:  # the heads knocked out on the device (a Transformer's)
                heads = handle.head_ablation(lab_text)
                layer, head, _ = heads.strongest(1)[0]
                where = handle.head_positions(lab_text, layer, head)
                asked.append(f"heads {heads.effect.shape}, strongest {heads.strongest(1)}, most at token "
                             f"{where.tokens[where.strongest]!r}")
                if heads.direct is not None:  # a pre-LN network's: the parts add up to its logits on the device too
                    asked.append(f"direct effects: heads {float(heads.direct.effect.sum()):+.3f} + rest "
                                 f"{heads.direct.rest:+.3f} = {heads.direct.value:+.3f}")
            except api.Unsupported:
                pass
            if Capability.ATTENTION in caps:  # what makes a neuron fire: the corpus read a batch a pass, hooked
                fires = handle.neuron_examples(0, 0, 2, args.corpus)
                asked.append(f"layer 1 neuron 0 highest {fires.highest:+.3f} at "
                             f"{fires.examples[0].tokens[fires.examples[0].peak]!r}")
            if Capability.NEXT_TOKEN in caps:
                asked.append(f"next_token {handle.next_token('she played the', k=3).tokens}")
                asked.append(f"generate {handle.generate('she played the', tokens=8, temperature=0.8, seed=1)!r}")
            if Capability.ATTENTION in caps:
                maps = handle.attention("the bank of the river was muddy .")
                asked.append(f"attention {np.asarray(maps.weights).shape}")
            if Capability.CONTEXTUAL in caps:
                occ = api.word_occurrences(handle, word, args.corpus, limit=20 if QUICK else 300, use_cache=False)
                asked.append(f"occurrences {len(occ.sentences)}")
            if Capability.STATIC in caps:
                try:
                    near = handle.static_neighbours(word, 3)
                except api.UnknownWord:  # a run on a few thousand words (the dry run's) may not have it
                    near = handle.static_neighbours("the", 3)
                asked.append(f"neighbours {[n.word for n in near]}")
            if Capability.SENTENCE_SCORE in caps:
                asked.append(f"perplexity {handle.score('the cat sat on the mat .').perplexity:.1f}")
        except Exception as e:  # noqa: BLE001 - reported, then the check fails
            failures.append(f"{run}: {type(e).__name__}: {e}")
        on_device = device if device is not None else "the CPU (a word-level model's handle: by design)"
        print(f"{Path(run).name} on {on_device}: {'; '.join(asked)} ({time.perf_counter() - t0:.2f}s)", flush=True)
        if args.device not in (None, "auto", "cpu") and device is not None and str(device).split(":")[0] != args.device:
            failures.append(f"{run}: its model is on {device}, not {args.device}")
    if failures:
        raise SystemExit("\n".join(failures))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["matmul", "word2vec", "elmo", "elmo-batch", "minilm", "queries", "profile"])
    p.add_argument("--family", default="elmo", help="profile: the family whose pretraining is profiled")
    p.add_argument("--profile-batch", type=int, default=0, help="profile: the batch size (0: the preset's)")
    p.add_argument("--run", dest="runs", action="append", default=[], help="a run folder (queries; repeatable)")
    p.add_argument("--device", default=None)
    p.add_argument("--corpus", default="default")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--max-words", type=int, default=None)
    p.add_argument("--out", default=None)
    p.add_argument("--batch-pairs", default="", help="word2vec: more batch sizes to measure (comma-separated)")
    p.add_argument("--candidates", default="32:5e-4,512:1e-3,2048:2e-3",
                   help="elmo-batch: batch:lr pairs, each trained --seconds and scored on held-out sentences")
    p.add_argument("--seconds", type=float, default=40.0, help="elmo-batch: wall time each candidate trains")
    p.add_argument("--heldout", type=int, default=400, help="elmo-batch: held-out sentences scored")
    p.add_argument("--batch-sizes", default="", help="elmo: more batch sizes to measure (comma-separated)")
    p.add_argument("--skip-preset", action="store_true", help="elmo: only the --batch-sizes, not the preset's")
    p.add_argument("--compile", action="store_true", help="elmo: each batch size also with torch.compile")
    p.add_argument("--old-path", action="store_true", help="elmo: each batch size also as the step was before "
                   "session 60 (LSTMs under autocast, torch's adaptive softmax), first")
    p.add_argument("--words", default="bank,play,match", help="the words whose occurrences are encoded")
    args = p.parse_args()
    {"matmul": matmul, "word2vec": word2vec, "elmo": elmo, "minilm": minilm, "queries": queries,
     "profile": profile, "elmo-batch": elmo_batch}[args.what](args)


if __name__ == "__main__":
    main()
