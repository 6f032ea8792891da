"""Counting, on a CPU, the ops that make a GPU's host wait for its device (the same ops run there)."""

import collections

import torch
from torch.utils._python_dispatch import TorchDispatchMode

WAITS = {"aten._local_scalar_dense", "aten.nonzero", "aten.masked_select"}


class CountWaits(TorchDispatchMode):
    """Counts the ops whose result's size or value the host must read from the device before going on (and the
    reads of a tensor's values as a list, which on a CPU tensor pass by the dispatcher)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: collections.Counter[str] = collections.Counter()
        self._tolist = torch.Tensor.tolist

    def __enter__(self):  # type: ignore[no-untyped-def]
        def tolist(tensor: torch.Tensor):  # type: ignore[no-untyped-def]
            self.waits["tolist"] += 1
            return self._tolist(tensor)

        torch.Tensor.tolist = tolist  # type: ignore[method-assign]
        return super().__enter__()

    def __exit__(self, *exc):  # type: ignore[no-untyped-def]
        torch.Tensor.tolist = self._tolist  # type: ignore[method-assign]
        return super().__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        name = str(func.overloadpacket)
        boolean_index = name == "aten.index" and any(
            isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in args[1] if i is not None)
        if name in WAITS or boolean_index:
            self.waits[name] += 1
        return func(*args, **(kwargs or {}))
