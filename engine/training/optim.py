"""What the pre-training and fine-tuning loops share: AdamW without decay on biases and norms, linear
warmup then linear decay, and one optimiser step (mixed-precision scaling, gradient clipping)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn


def adamw(model: nn.Module, lr: float, weight_decay: float, **kwargs: Any) -> torch.optim.AdamW:
    """AdamW over the parameters that learn; matrices decay, biases and norm gains do not."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, **kwargs)


def warmup_then_linear(warmup: int, total: int) -> Callable[[int], float]:
    """The learning-rate factor at a step: rising over ``warmup`` steps, then falling to 0 at ``total``."""
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def optimizer_step(loss: torch.Tensor, opt: torch.optim.Optimizer, lr: float, params: Iterable[torch.Tensor],
                   clip: float, scaler: torch.amp.GradScaler | None) -> None:
    """Backward, clip and step at learning rate ``lr`` (fp16 losses scaled; nothing read from the device)."""
    for group in opt.param_groups:
        group["lr"] = lr
    opt.zero_grad(set_to_none=True)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
    else:
        loss.backward()
    torch.nn.utils.clip_grad_norm_(params, clip)
    if scaler is not None:
        scaler.step(opt)
        scaler.update()
    else:
        opt.step()
