"""Multi-process training through ``torchrun --nproc-per-node N word2bert-train ...`` (DDP).

torchrun sets RANK / WORLD_SIZE / LOCAL_RANK; each process takes its own slice of every global batch,
gradients are averaged by DDP, and only rank 0 writes files. NCCL on CUDA, gloo on the CPU.
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


def is_main() -> bool:
    return rank() == 0


def setup(device: torch.device) -> torch.device:
    """Join the process group when launched by torchrun; returns this process's device."""
    if world_size() <= 1:
        return device
    if device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return device


def barrier() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def cleanup() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
