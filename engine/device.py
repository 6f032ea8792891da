"""The one place that decides the device and the precision policy.

CUDA first, then Apple MPS, then CPU; ``--device`` (or ``RunSpec.device``) overrides.
On a GPU, matrix work runs under autocast (bf16 where supported, else fp16 with a grad scaler).
torch is imported where a function needs it: ``accelerator_possible`` and ``CPU`` let a word2vec run on a
CPU-only machine decide without it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

# where an accelerator's driver shows itself without torch: NVIDIA (Linux), WSL's GPU, AMD ROCm
_ACCELERATOR_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version", "/dev/dxg", "/dev/kfd")


def accelerator_possible() -> bool:
    """Whether torch might find a GPU here, asked without importing torch (a second of start-up): an
    NVIDIA, WSL or ROCm device node, an ``nvidia-smi``, or Apple silicon (MPS). False means CPU for sure;
    True means ask torch (``pick_device``)."""
    import platform
    import shutil

    if sys.platform == "darwin":
        return platform.machine() == "arm64"
    return any(os.path.exists(p) for p in _ACCELERATOR_NODES) or shutil.which("nvidia-smi") is not None


@dataclass(frozen=True)
class CpuDevice:
    """The CPU, for a run that needs no torch (word2vec's compiled kernel): ``.type`` as a torch.device."""

    type: str = "cpu"

    def __str__(self) -> str:
        return "cpu"


CPU = CpuDevice()


DEVICE_ENV = "WORD2BERT_DEVICE"  # pins the device of everything not told otherwise: the app's models too


def pick_device(requested: str | None = None) -> torch.device:
    """Return the device to use: ``requested`` if given ("cpu", "cuda", "cuda:1", "mps"), else
    ``$WORD2BERT_DEVICE`` if set, else the best."""
    import torch

    if not requested or requested == "auto":
        requested = os.environ.get(DEVICE_ENV, "").strip() or None
    if requested and requested != "auto":
        dev = torch.device(requested)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device '{requested}' asked for, but CUDA is not available here")
        if dev.type == "mps" and not torch.backends.mps.is_available():
            raise ValueError(f"device '{requested}' asked for, but MPS is not available here")
        return dev
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def device_name(device: torch.device | CpuDevice) -> str:
    """A human name: 'CPU (2 threads)', 'NVIDIA H100 80GB HBM3', 'Apple MPS'."""
    if isinstance(device, CpuDevice):  # a run without torch: the compiled kernel's threads
        numba = sys.modules.get("numba")
        return _cpu_name(numba.get_num_threads() if numba is not None else os.cpu_count() or 1)
    import torch

    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    if device.type == "mps":
        return "Apple MPS"
    return _cpu_name(torch.get_num_threads())


def _cpu_name(threads: int) -> str:
    return f"CPU ({threads} thread{'' if threads == 1 else 's'})"


@dataclass(frozen=True)
class Precision:
    """Autocast policy for a device: dtype used for matmuls, and whether a grad scaler is needed."""

    device_type: str
    dtype: torch.dtype | None  # None: full fp32

    @property
    def needs_scaler(self) -> bool:
        if self.dtype is None:
            return False
        import torch

        return self.dtype == torch.float16

    def autocast(self) -> contextlib.AbstractContextManager:
        if self.dtype is None:
            return contextlib.nullcontext()
        import torch

        return torch.autocast(device_type=self.device_type, dtype=self.dtype)


def precision_for(device: torch.device | CpuDevice, mixed: bool = True) -> Precision:
    """bf16 autocast where the device does it (no grad scaler needed), else fp16 with a grad scaler, else
    fp32. CUDA answers from its capability; any other accelerator (Apple MPS: bf16 from macOS 14, fp16
    autocast and its grad scaler only in recent torch) is asked by trying, once per device type."""
    if not mixed or device.type == "cpu":
        return Precision(device.type, None)
    import torch

    if device.type == "cuda":
        bf16 = torch.cuda.is_bf16_supported()
        return Precision("cuda", torch.bfloat16 if bf16 else torch.float16)
    if device.type not in _TRIED:
        _TRIED[device.type] = None
        for dtype in (torch.bfloat16, torch.float16):
            if autocast_works(torch.device(device.type), dtype) and (dtype == torch.bfloat16 or scaler_works(device.type)):
                _TRIED[device.type] = dtype
                break
    return Precision(device.type, _TRIED[device.type])


_TRIED: dict[str, Any] = {}  # device type -> the autocast dtype that worked there (None: fp32)


def autocast_works(device: torch.device, dtype: torch.dtype) -> bool:
    """Whether a matrix product and its gradient run under autocast to ``dtype`` on ``device``."""
    import torch

    try:
        a = torch.ones(4, 4, device=device, requires_grad=True)
        with torch.autocast(device_type=device.type, dtype=dtype):
            out = a @ a
        out.float().sum().backward()
        return out.dtype == dtype and a.grad is not None and bool(torch.isfinite(a.grad).all())
    except (RuntimeError, ValueError, TypeError, AssertionError):
        return False


def scaler_works(device_type: str) -> bool:
    """Whether torch has a grad scaler for this device type (fp16 training needs one)."""
    import torch

    try:
        torch.amp.GradScaler(device_type)
        return True
    except (RuntimeError, ValueError, TypeError, AttributeError):
        return False


def release_memory() -> bool:
    """Give the allocator's freed memory back to the system (glibc's ``malloc_trim``): queries on texts of
    varied length leave freed blocks of many sizes that glibc keeps, so the process grows with use
    although nothing leaks (bench/robustness/memory.py). Packed weight copies held over their budget are let go
    first (engine/models/packed_linear.py). True where it could (Linux with glibc); a no-op elsewhere."""
    global _TRIM
    packed = sys.modules.get("engine.models.packed_linear")  # (not imported: no model packed, nothing to let go)
    # (being imported by another thread this moment: in sys.modules without its functions yet, and nothing packed;
    # a talk's export once raised "partially initialized module … has no attribute 'trim_packed'" here)
    trim = getattr(packed, "trim_packed", None)
    if trim is not None:
        trim()  # packed weight copies kept over their budget while in use, no longer in use
    if _TRIM is None:
        import ctypes
        import ctypes.util

        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _TRIM = libc.malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if not _TRIM:
        return False
    _TRIM(0)
    return True


_TRIM: Any = None


PARALLEL_WORK = 1e9  # parameters × tokens of a forward pass above which a query uses every core
_CORES: list[int] = []


def cores() -> int:
    """The threads torch would use by default (OMP_NUM_THREADS when set, else the cores it sees)."""
    if not _CORES:
        import torch

        env = os.environ.get("OMP_NUM_THREADS", "")
        _CORES.append(int(env) if env.isdigit() and int(env) > 0 else max(1, torch.get_num_threads(),
                                                                            len(os.sched_getaffinity(0))
                                                                            if hasattr(os, "sched_getaffinity")
                                                                            else os.cpu_count() or 1))
    return _CORES[0]


@contextlib.contextmanager
def threads_for(work: float) -> Iterator[None]:
    """Queries run on one thread (small forward passes are fastest so); a pass worth more than
    PARALLEL_WORK (a BERT-base at 20 tokens: 2e9) runs on every core for its duration: fill-mask and
    attention of one keystroke took 121 ms on one thread, 90 ms on two (bench/speed/attention_predictions_speed.py)."""
    import torch

    current = torch.get_num_threads()
    target = cores()
    if work < PARALLEL_WORK or current >= target:
        yield
        return
    torch.set_num_threads(target)
    try:
        yield
    finally:
        torch.set_num_threads(current)
