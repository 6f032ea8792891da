"""Hugging Face weights read into the process's own memory, never left mapped onto the checkpoint's file.

transformers 5 loads a safetensors checkpoint by mapping the file and handing the model tensors that are views
of that mapping. A folder whose ``model.safetensors`` is then written again in place — ``save_pretrained`` or a
Trainer saving into the folder the app has loaded, a ``cp`` over it — is truncated first, and the next query
that touches a weight reads past the file's new end: the kernel kills the whole app with SIGBUS (exit 135),
every open panel and unsaved result with it. Read into memory, a loaded model keeps answering from the
weights it read, whatever happens to the file afterwards. (The word2bert run folders are written atomically,
a new file renamed over the old, so a mapping of theirs stays valid; a foreign folder's writer may not be.)"""

from __future__ import annotations

import inspect
from functools import cache
from typing import Any


@cache
def in_memory() -> dict[str, Any]:
    """Keyword arguments for ``from_pretrained`` that read the weights into memory: transformers' own
    ``disable_mmap`` where it has it; older versions copy the file's weights into the model's own tensors."""
    from transformers import PreTrainedModel

    return {"disable_mmap": True} if "disable_mmap" in inspect.signature(PreTrainedModel.from_pretrained).parameters else {}
