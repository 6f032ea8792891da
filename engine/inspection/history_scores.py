"""Scores along a run's history: for every checkpoint it kept, sense separation on the bundled sense set
(best layer and last layer), cloze top-10 and held-out perplexity per word — the moment a model starts
to tell *bank* (river) from *bank* (money). Each checkpoint's row is cached in the cache folder, one file per
run (keyed by the checkpoint's save), so the curve is computed once — never in the run folder, which the user
gave to be read (a Hugging Face Trainer's output, a shipped checkpoint, a colleague's run). Rows that an earlier
version cached in the run (``checkpoint_scores.json``) are still read.

``quality`` is the one place a handle gets a bundled-set score (word2bert-eval uses it too)."""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine.errors import Unsupported, Word2BertError

# senses-dev: the development sense set, where the layer a view of senses opens at is chosen (clear_sense_layer)
QUALITY_TASKS = ("cloze", "senses", "senses-dev", "perplexity-per-word")
LAB_TASKS = ("lens",)  # how readable each layer is (engine.inspection.lab.lens_scores)
# what a run's history can be scored on, checkpoint by checkpoint
CHECKPOINT_TASKS = (*QUALITY_TASKS, "perplexity", *LAB_TASKS)
CACHE = "checkpoint_scores.json"
# a task whose measure changed since rows were cached: its version is in the cache key, so rows of the old
# measure are scored again, not served (senses 2, 2026-12-05: occurrences equally near share the choice)
MEASURES = {"senses": 2, "cloze": 2}  # (cloze 2, 2026-12-07: ELMo fills a blank, where its runs were skipped)
# held-out sentences scored per checkpoint: the first ones of the corpus's held-out part, the same for every
# checkpoint (the curve along training, not the final figure: word2bert-eval without --all-checkpoints)
PERPLEXITY_SENTENCES = 300


def quality(handle: Any, task: str, corpus: str | None = None, max_sentences: int | None = None) -> dict[str, Any]:
    """A bundled-set score (engine/inspection/quality.py), or why the model cannot take it."""
    from engine.inspection.quality import cloze_scores, perplexity_per_word, sense_separation

    try:
        if task == "cloze":
            return cloze_scores(handle)
        if task == "lens":
            from engine.data.corpora import get_corpus, trained_on
            from engine.inspection.lab import LENS_SENTENCES, lens_scores

            name = corpus or trained_on(handle.info)
            chosen = [s for s in get_corpus(name).sentences("heldout") if 4 <= len(s.split()) <= 40]
            return {**lens_scores(handle, chosen[: max_sentences or LENS_SENTENCES]), "corpus": name}
        if task in ("perplexity-per-word", "perplexity"):
            from engine.data.corpora import get_corpus, trained_on

            name = corpus or trained_on(handle.info)
            sentences = list(itertools.islice(get_corpus(name).sentences("heldout"), max_sentences))
            if task == "perplexity":
                return {"perplexity": handle.perplexity(sentences), "corpus": name, "sentences": len(sentences)}
            return {**perplexity_per_word(handle, sentences), "corpus": name}
        if task == "senses-dev":
            return _development_senses(handle)
        by_layer = sense_separation(handle)
    except Unsupported as e:
        return {"skipped": str(e)}
    best = int(by_layer.argmax())
    rounded = [round(float(x), 4) for x in by_layer]
    return {"by_layer": rounded, "best_layer": best, "best": rounded[best], "last": rounded[-1]}


def _development_senses(handle: Any) -> dict[str, Any]:
    """Sense separation per layer on the development sense set, and the layer the polysemy lens's rule would open
    the model at: its last, unless the best layer's lead has a 95% interval (bootstrap over words) above 0."""
    from engine.inspection.quality import sense_layer_lead

    found = sense_layer_lead(handle)
    rounded = [round(float(x), 4) for x in found.scores]
    return {"by_layer": rounded, "best_layer": found.best, "best": rounded[found.best], "last": rounded[-1],
            "lead_interval": [round(found.low, 4), round(found.high, 4)],
            "opens_at": found.opens_at}


def scores_file(run_dir: str | Path) -> Path:
    """Where a run's checkpoint scores are cached: the cache folder, by the run's resolved path."""
    import hashlib

    from engine.data.cache import cache_dir

    resolved = Path(run_dir).resolve()
    return cache_dir() / "checkpoint-scores" / f"{resolved.name}-{hashlib.sha1(str(resolved).encode()).hexdigest()[:12]}.json"


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _measured(task: str) -> str:
    """A task as the cache key names it: with its measure's version where it has changed."""
    return f"{task}@{MEASURES[task]}" if task in MEASURES else task


def checkpoint_scores(run_dir: str | Path, tasks: tuple[str, ...] = QUALITY_TASKS, *,
                      stop: threading.Event | None = None,
                      progress: Callable[[float, str], None] | None = None,
                      load: Callable[[str], Any] | None = None,
                      cached_only: bool = False, corpus: str | None = None) -> Iterator[dict[str, Any]]:
    """One row per kept checkpoint, oldest first: ``step``, ``path``, ``tokens_seen`` (when the run says),
    and for each task its result (``senses``: by_layer/best/last; ``cloze``: top1/top10;
    ``perplexity-per-word``), or ``error``. Rows come from the cache when the checkpoint's save is the
    one scored; the others are computed (the cache is rewritten after each; a checkpoint that fails is
    tried again next time). ``stop`` ends early; ``cached_only`` yields the cached rows alone."""
    from engine.checkpoints.files import atomic_write_bytes
    from engine.checkpoints.reading import save_id
    from engine.handles.history import run_history

    if load is None:
        from engine.handles.load import load as load_model

        load = load_model
    history = run_history(run_dir)
    cache_path = scores_file(run_dir)
    cache = {**_read_cache(Path(run_dir) / CACHE), **_read_cache(cache_path)}  # an earlier version's, then ours
    for i, kept in enumerate(history):
        if stop is not None and stop.is_set():
            return
        # (where a continued run began lies outside it: named by its whole path)
        rel = (f"began:{Path(kept.path).resolve()}" if kept.began_from else
               str(Path(kept.path).resolve().relative_to(Path(run_dir).resolve())) or ".")
        key = (f"{rel}|{save_id(kept.path)}|{','.join(_measured(task) for task in tasks)}"
               + (f"|{corpus}" if corpus else ""))
        row = cache.get(key)
        if not isinstance(row, dict) and cached_only:
            continue
        if progress is not None:
            doing = "scored before (cache)" if isinstance(row, dict) else "scoring"
            progress(i / len(history), f"step {kept.step:,}: {doing} ({i + 1} of {len(history)})")
        if not isinstance(row, dict):
            row = {"step": kept.step, "path": kept.path}
            tokens = kept.tokens()
            if tokens is not None:
                row["tokens_seen"] = tokens
            try:
                handle = load(kept.path)
                for task in tasks:
                    row[task] = quality(handle, task, corpus, max_sentences=PERPLEXITY_SENTENCES)
            except (Word2BertError, ValueError) as e:
                row["error"] = str(e)
            else:
                cache[key] = row
                with contextlib.suppress(OSError):  # a cache folder that cannot be written: scored again next time
                    cache_path.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write_bytes(cache_path, json.dumps(cache, indent=1).encode())
        yield {**row, "step": kept.step, "path": kept.path}
    if progress is not None:
        progress(1.0, f"scored {len(history)} checkpoints")


SETTLING_SENTENCES = 100  # held-out sentences each checkpoint's layers are compared on (the same for every one)


def checkpoint_settling(run_dir: str | Path, *, against: str | Path | None = None, sentences: int = SETTLING_SENTENCES,
                        corpus: str | None = None, debiased: bool = False, stop: threading.Event | None = None,
                        progress: Callable[[float, str], None] | None = None,
                        load: Callable[[str], Any] | None = None) -> Iterator[dict[str, Any]]:
    """Each kept checkpoint's layers against ``against``'s (default: the run's last checkpoint) depth by depth,
    linear CKA over the words of ``sentences`` held-out sentences of the run's corpus: ``settled`` (input layer
    first), ``against_step``. Which layers reach their final arrangement of the words first (Raghu et al. 2017
    found networks settle from the bottom up). Rows are cached beside the other checkpoint scores, keyed by both
    saves, so a run that went on is compared with its new last checkpoint."""
    from engine.checkpoints.files import atomic_write_bytes
    from engine.checkpoints.reading import save_id
    from engine.data.corpora import spread_sample, trained_on
    from engine.handles.history import run_history
    from engine.handles.load import model_folder
    from engine.inspection.layer_similarity import layer_similarity

    if load is None:
        from engine.handles.load import load as load_model

        load = load_model
    history = run_history(run_dir)
    target = str(against) if against is not None else history[-1].path
    folder = model_folder(target)  # (a shipped name: its folder, whose save names the weights it holds today)
    reference, sample = None, None  # loaded when a checkpoint is not in the cache
    cache_path = scores_file(run_dir)
    cache = _read_cache(cache_path)
    for i, kept in enumerate(history):
        if stop is not None and stop.is_set():
            return
        rel = (f"began:{Path(kept.path).resolve()}" if kept.began_from else
               str(Path(kept.path).resolve().relative_to(Path(run_dir).resolve())) or ".")
        key = (f"{rel}|{save_id(kept.path)}|settled|{folder.resolve()}|{save_id(folder)}|{sentences}"
               + (f"|{corpus}" if corpus else "") + ("|debiased" if debiased else ""))
        row = cache.get(key)
        if progress is not None:
            progress(i / len(history), f"layers at step {kept.step:,} against the last: "
                     + ("scored before (cache)" if isinstance(row, dict) else "comparing")
                     + f" ({i + 1} of {len(history)})")
        if not isinstance(row, dict):
            row = {"step": kept.step, "path": kept.path}
            try:
                if reference is None:
                    reference = load(target)
                    sample = spread_sample(corpus or trained_on(reference.info), sentences, "heldout")
                result = layer_similarity(load(kept.path), reference, sample or [], debiased=debiased)
                depth = min(result.cka.shape)
                row["settled"] = [round(float(result.cka[d, d]), 4) for d in range(depth)]
                row["words"] = result.words
            except (Word2BertError, ValueError) as e:
                row["error"] = str(e)
            else:
                cache[key] = row
                with contextlib.suppress(OSError):
                    cache_path.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write_bytes(cache_path, json.dumps(cache, indent=1).encode())
        yield {**row, "step": kept.step, "path": kept.path, "against": target}
    if progress is not None:
        progress(1.0, f"compared {len(history)} checkpoints' layers")
