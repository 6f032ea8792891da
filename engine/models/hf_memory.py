"""Hugging Face weights read into the process's own memory, never left mapped onto the checkpoint's file, and
read without holding Python's GIL for long.

transformers 5 loads a safetensors checkpoint by mapping the file and handing the model tensors that are views
of that mapping. A folder whose ``model.safetensors`` is then written again in place — ``save_pretrained`` or a
Trainer saving into the folder the app has loaded, a ``cp`` over it — is truncated first, and the next query
that touches a weight reads past the file's new end: the kernel kills the whole app with SIGBUS (exit 135),
every open panel and unsaved result with it. Read into memory, a loaded model keeps answering from the
weights it read, whatever happens to the file afterwards. (The word2bert run folders are written atomically,
a new file renamed over the old, so a mapping of theirs stays valid; a foreign folder's writer may not be.)

transformers' own way to read into memory (``disable_mmap``) hands the whole file to safetensors in one call
that holds the GIL while it copies every tensor: a MiniLM load held it for 34-36 ms at once in the median, up to
62 ms, on a quiet machine, and in the app's worker threads, at a lower priority than the window's, several times
that beside other work — the window's thread waits for the GIL all along (the Run history reads a checkpoint at
each step its slider rests on). ``read_weights`` reads the file with the GIL let go and copies one tensor at a
time, each copy a torch call that lets it go too: 9-12 ms in the median (bench/robustness/gil_holds.py; the
chaos bench's stalls per action fell by 38%: bench/robustness/RESULTS.md, "Chaos in the window")."""

from __future__ import annotations

import inspect
import sys
from functools import cache
from pathlib import Path
from typing import Any

WEIGHTS = "model.safetensors"


@cache
def in_memory() -> dict[str, Any]:
    """Keyword arguments for ``from_pretrained`` that read the weights into memory: transformers' own
    ``disable_mmap`` where it has it; older versions copy the file's weights into the model's own tensors."""
    from transformers import PreTrainedModel

    return {"disable_mmap": True} if "disable_mmap" in inspect.signature(PreTrainedModel.from_pretrained).parameters else {}


def read_weights(path: str | Path) -> dict[str, Any]:
    """Every tensor of a safetensors file, each in memory of its own (``engine.data.safetensors_torch``)."""
    from engine.data.safetensors_torch import read_safetensors

    return read_safetensors(path)[0]


def from_pretrained_in_memory(auto: Any, folder: str | Path, **kwargs: Any) -> Any:
    """``auto.from_pretrained(folder, **kwargs)`` (an Auto class, or a model class) with the weights read by
    ``read_weights`` (one ``model.safetensors``, on a little-endian machine); transformers' own reading into
    memory otherwise."""
    folder = Path(folder)
    weights = folder / WEIGHTS
    if kwargs.get("config") is None:
        from transformers import AutoConfig

        kwargs["config"] = AutoConfig.from_pretrained(folder, local_files_only=True)
    model_class = _model_class(auto, kwargs["config"])
    if model_class is None or not weights.is_file() or sys.byteorder != "little":
        return auto.from_pretrained(folder, **kwargs, **in_memory())
    kwargs.pop("use_safetensors", None)  # (no file to choose: the weights are given)
    return model_class.from_pretrained(None, state_dict=read_weights(weights), **kwargs)


def _model_class(auto: Any, config: Any) -> Any:
    """The model class an Auto class picks for ``config`` (given weights need it: the Auto classes want a
    folder); None where this transformers does not say."""
    mapping = getattr(auto, "_model_mapping", None)
    if mapping is None:
        return auto  # a model class itself
    try:
        from transformers.models.auto.auto_factory import _get_model_class

        return _get_model_class(config, mapping)
    except (ImportError, KeyError, ValueError, AttributeError):
        return None
