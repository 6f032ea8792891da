"""Linear layers that answer queries through oneDNN with their weights packed once, on the CPU.

A query's matrices are short (a sentence is 10-30 rows), and for those the default path (MKL's sgemm)
leaves most of the CPU unused: a BERT-base layer's 768 -> 3072 product on 36 rows took 1.25 ms that way
and 0.78 ms from weights pre-packed for oneDNN, 4x less on 2 rows (the one position of a next-token
query); a BERT-base keystroke's pass went from 67 to 40 ms (bench/speed/attention_predictions_speed.py).

``pack_linears(model)`` re-classes a loaded model's ``nn.Linear`` modules as ``PackedLinear`` (same
parameters, same state dict); products written out in a model (BERT's fused Q/K/V, the tied decoder)
call ``linear`` with the module that holds the packed copy. It only changes how a product is computed
without gradients, on the CPU, in float32: training, autograd and other devices take ``F.linear`` as
before. The packed copy is kept until the weight changes (a new step's weights loaded in place) and costs
the linear weights' size once more in memory: so the copies of all models together are held to
``PACKED_BUDGET_BYTES``, the least recently used let go first (a model used again packs its weights anew:
about 50 ms for a MiniLM); copies used in the last ``PACKED_IN_USE_S`` are kept over the budget, so a model
whose linears alone exceed it (a BERT-large) is not packed afresh, layer by layer, at every pass, and
``trim_packed`` lets them go once unused. Seventeen models loaded in the window held 1,020 MB of packed copies
beside their 1,116 MB of weights (bench/robustness/chaos.py's census). Where the op is missing or disagrees with
``F.linear`` (checked once per process), every product takes ``F.linear``.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

_USABLE: list[bool] = []  # decided once per process
PACKED_FLAG = "_packed_inference"  # set on every module of a model by pack_linears
# above this many rows a product takes F.linear: MKL is as fast there (15.0 vs 13.9 ms at 600 rows), and
# padding thousands of rows (a sentence score's 64 copies of 128 tokens) cost a tenth of the pass
PACKED_MAX_ROWS = 512


PACKED_BUDGET_BYTES = 512 * 2**20  # all packed copies together: a BERT-base's linears (340 MB), or several MiniLMs
PACKED_IN_USE_S = 2.0  # a copy used this recently belongs to a pass (or job) under way: never let go
# (holder id, slot) -> [a weak reference to the holder, the copy's bytes, when it was last used], least recent first
_PACKED: OrderedDict[tuple[int, str], list[Any]] = OrderedDict()
_PACKED_BYTES = [0]
_PACKED_LOCK = threading.RLock()  # queries and background jobs run models on several threads


def packed_bytes() -> int:
    """The bytes of the packed copies held now, all models together."""
    return _PACKED_BYTES[0]


def _used(holder: nn.Module, slot: str) -> None:
    with _PACKED_LOCK:
        entry = _PACKED.get((id(holder), slot))
        if entry is not None:
            entry[2] = time.monotonic()
            _PACKED.move_to_end((id(holder), slot))


def _kept(holder: nn.Module, slot: str, size: int) -> None:
    """Count a new packed copy of ``holder``'s, then let the least recently used go while over the budget."""
    key = (id(holder), slot)
    with _PACKED_LOCK:
        old = _PACKED.pop(key, None)
        if old is not None:
            _PACKED_BYTES[0] -= old[1]
        now = time.monotonic()
        _PACKED[key] = [weakref.ref(holder, lambda ref: _gone(key, ref)), size, now]
        _PACKED_BYTES[0] += size
        _within_budget(now)


def _within_budget(now: float) -> None:
    """Let the least recently used copies go while over the budget, those in use excepted."""
    with _PACKED_LOCK:
        while _PACKED_BYTES[0] > PACKED_BUDGET_BYTES and now - next(iter(_PACKED.values()))[2] >= PACKED_IN_USE_S:
            (_, oldest_slot), (ref, oldest_size, _) = _PACKED.popitem(last=False)
            _PACKED_BYTES[0] -= oldest_size
            oldest = ref()
            if oldest is not None:
                oldest.__dict__.pop(oldest_slot, None)  # a query using it holds its own reference meanwhile
            del oldest


def trim_packed() -> None:
    """Back within the budget now, those in use excepted: copies kept over it while passes used them (several
    models' at once) go once unused for ``PACKED_IN_USE_S``. ``engine.device.release_memory`` calls it, which the
    window calls after its queries; before, they stayed until the next copy was made — at a quiet moment of the
    chaos bench, 904 MB against the 512 MB budget. Not on a timer: a model bigger than the budget, asked every few
    seconds, would then pack the layers let go while it idled anew at each query; its copies are used by every
    query, so a trim after one keeps them."""
    _within_budget(time.monotonic())


def _gone(key: tuple[int, str], ref: weakref.ref[Any]) -> None:
    """A holder was freed (its model unloaded): its copy no longer counts."""
    with _PACKED_LOCK:
        entry = _PACKED.get(key)
        if entry is not None and entry[0] is ref:
            del _PACKED[key]
            _PACKED_BYTES[0] -= entry[1]


def usable() -> bool:
    """oneDNN's packed linear exists here and gives F.linear's result."""
    if not _USABLE:
        try:
            with torch.inference_mode():
                generator = torch.Generator().manual_seed(0)
                w, b = torch.randn(48, 32, generator=generator), torch.randn(48, generator=generator)
                x = torch.randn(2, 5, 32, generator=generator)
                packed = torch.ops.mkldnn._reorder_linear_weight(w)
                got = torch.ops.mkldnn._linear_pointwise(x, packed, b, "none", [], "")
                ok = bool(torch.allclose(got, F.linear(x, w, b), atol=1e-4, rtol=1e-4))
        except (RuntimeError, AttributeError, NotImplementedError):
            ok = False
        _USABLE.append(ok and torch.backends.mkldnn.is_available())
    return _USABLE[0]


def linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, holder: nn.Module, slot: str) -> torch.Tensor:
    """``F.linear(x, w, b)``; through a packed copy of ``w`` (kept in ``holder`` under ``slot`` until ``w``
    changes) when ``holder`` was packed by ``pack_linears`` and the product is a float32 one on the CPU
    without gradients."""
    rows = x.numel() // max(1, x.shape[-1])
    if (rows > PACKED_MAX_ROWS or not holder.__dict__.get(PACKED_FLAG) or torch.is_grad_enabled()
            or x.device.type != "cpu" or w.device.type != "cpu" or x.dtype != torch.float32
            or w.dtype != torch.float32 or not usable()):
        return F.linear(x, w, b)
    key = (w.data_ptr(), -1 if w.is_inference() else w._version)  # inference tensors never change in place here
    cached = holder.__dict__.get(slot)
    if cached is None or cached[0] != key:
        cached = (key, torch.ops.mkldnn._reorder_linear_weight(w.detach()))
        holder.__dict__[slot] = cached  # not a buffer: never saved, never moved
        _kept(holder, slot, w.numel() * w.element_size())
    else:
        _used(holder, slot)
    width = x.shape[-1]
    flat = x.reshape(rows, width)
    padded = row_bucket(rows)
    if padded != rows:  # a few shapes only: oneDNN keeps a prepared kernel (and its memory) per shape
        flat = torch.cat([flat, flat.new_zeros(padded - rows, width)])
    out = torch.ops.mkldnn._linear_pointwise(flat, cached[1], b, "none", [], "")
    return out[:rows].reshape(*x.shape[:-1], out.shape[-1])


def row_bucket(rows: int) -> int:
    """The number of rows a product is computed for: ``rows`` rounded up to 1, 2, 3, 4, 6, 8, 12, 16, 24, ...
    (powers of two and their halfway steps; at most a third more work). oneDNN prepares and keeps a kernel
    for every input shape it sees: 200 sentence lengths grew bert-tiny's process by 370 MB; rounded, the
    shapes (and that memory) stay few."""
    if rows <= 4:
        return max(rows, 1)
    power = 1 << (rows - 1).bit_length()  # the next power of two
    return power * 3 // 4 if rows <= power * 3 // 4 else power


class PackedLinear(nn.Linear):
    """An ``nn.Linear`` whose products without gradients on the CPU use a packed copy of its weight."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias, self, "_packed")


def pack_linears(model: nn.Module) -> int:
    """Let ``model``'s products use packed weights (its plain ``nn.Linear`` modules become ``PackedLinear``,
    in place, same parameters and state dict), and its exact GELUs take ``gelu`` (``nn.GELU`` modules and
    transformers' ``GELUActivation``); how many linear layers there were."""
    count = 0
    for module in model.modules():
        module.__dict__[PACKED_FLAG] = True
        if type(module) is nn.Linear:
            module.__class__ = PackedLinear
            count += 1
        elif type(module) is nn.GELU and module.approximate == "none":
            module.__class__ = PlainGELU
        elif type(module).__name__ == "GELUActivation" and module.__dict__.get("act") is F.gelu:
            module.__dict__["act"] = gelu  # (transformers' BERT, MiniLM, …: an attribute, not in the state dict)
    return count


def gelu(x: torch.Tensor) -> torch.Tensor:
    """``F.gelu(x)`` (the exact, erf form); without gradients on the CPU, computed by ATen's own kernel rather
    than oneDNN's. For a contiguous float32 tensor ``F.gelu`` runs oneDNN's eltwise primitive, which oneDNN builds
    (a JIT kernel, and a tree of its constants) and caches for every input shape: every sentence length a query
    met added one, up to the cache's 1,024, their small blocks scattered through the heap. In the chaos bench's
    run Z43 those trees' 64-byte nodes kept 8.5 MB of mostly free pages, the first holder of its lone pages
    (bench/robustness/RESULTS.md). ATen takes the tensor when it is not contiguous, so the GELU is computed on
    the transposed view and transposed back (the result is laid out as ``x``); a tensor that stays contiguous so
    (one row) still goes to oneDNN, one primitive per width. Speed: bench/speed/gelu_paths.py."""
    if torch.is_grad_enabled() or x.device.type != "cpu" or x.dim() < 2:
        return F.gelu(x)
    return F.gelu(x.mT).mT


class PlainGELU(nn.GELU):
    """An exact ``nn.GELU`` whose products without gradients on the CPU take ``gelu`` (see there)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return gelu(x)
