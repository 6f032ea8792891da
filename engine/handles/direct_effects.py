"""Each attention head's direct effect on a prediction (direct logit attribution: Elhage et al. 2021, TransformerLens's
``decompose_resid`` and ``stack_head_results``). In a pre-LN network the last residual state at the position read is a
sum: the embeddings, every block's MLP output and every head's output (its slice of the attention's output projection's
input, projected alone), and the attention's biases. The final norm divides that sum by one scale, the text's, which
is held fixed: each part, centred (LayerNorm) and scaled, read through the linear head, gives that part's logits, and
the parts' logits add up to the model's own. Which network is pre-LN is declared by its wrapper
(engine.models.wrappers.readout); what its final norm computes is found by a probe that must give back the norm's own
output, and the parts must add up to the model's own logits, or the reading is refused rather than shown wrong."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from engine.errors import InputError, Unsupported


class DirectParts(NamedTuple):
    heads: np.ndarray  # (layers, heads)
    mlps: np.ndarray  # (layers,)
    embedding: float  # the token's own embedding (with its position's) at the position read
    biases: float  # the attention's output biases and the final norm's (and the head's) bias
    value: float  # the model's own
    target: int


ROWS = 64  # the heads' parts read through the head at a time (each a row of vocabulary logits)
FORMS = ("LayerNorm", "RMSNorm", "RMSNorm of 1 + weight")  # Gemma's RMSNorm scales by 1 + its weight


def frozen_norm(norm: Any, x: torch.Tensor, y: torch.Tensor) -> tuple[Callable[[torch.Tensor], torch.Tensor],
                                                                         torch.Tensor]:
    """The final norm with its scale held at ``x``'s (the stream it read at the position; ``y`` what it gave): a
    linear map of a part of the stream and the norm's offset (its bias), in float64 on the CPU (MPS has no float64).
    The norm's form is the first of
    ``FORMS`` that gives back ``y``; Unsupported where none does."""
    x, y = x.detach().cpu().double(), y.detach().cpu().double()
    weight, bias = getattr(norm, "weight", None), getattr(norm, "bias", None)
    gain = weight.detach().cpu().double() if isinstance(weight, torch.Tensor) else torch.ones_like(x)
    offset = bias.detach().cpu().double() if isinstance(bias, torch.Tensor) else torch.zeros_like(x)
    eps = next((float(v) for v in (getattr(norm, a, None) for a in ("eps", "variance_epsilon", "epsilon"))
                if isinstance(v, int | float) and not isinstance(v, bool)), 1e-5)
    tolerance = (1e-4 if weight is None or weight.dtype == torch.float32 else 2e-2) * max(1.0, float(y.abs().max()))
    for form in FORMS:
        centre = form == "LayerNorm"
        g = gain + 1.0 if form.endswith("1 + weight") else gain
        stream = x - x.mean() if centre else x
        scale = torch.sqrt(stream.pow(2).mean() + eps)
        if float((g * stream / scale + offset - y).abs().max()) <= tolerance:
            def linear(c: torch.Tensor, g: torch.Tensor = g, scale: torch.Tensor = scale,
                       centre: bool = centre) -> torch.Tensor:
                c = c.cpu().double()
                return g * (c - c.mean(-1, keepdim=True) if centre else c) / scale
            return linear, offset
    raise Unsupported(f"its final norm ({type(norm).__name__}) computes neither a LayerNorm nor an RMSNorm here, so "
                      "the parts of its stream cannot be read through it one by one")


def head_parts(projection: Any, x: torch.Tensor, heads: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(heads, d) each head's output at one position, projected alone — its slice of the projection's input ``x``
    (width,) through the projection, less the projection's bias — and (d,) that bias (the projection is affine: the
    parts and the bias add up to its output)."""
    size = x.shape[-1] // heads
    z = x.new_zeros(heads + 1, x.shape[-1])
    for h in range(heads):
        z[h, h * size:(h + 1) * size] = x[h * size:(h + 1) * size]
    out = projection(z).cpu().double()
    return out[:heads] - out[heads], out[heads]


def _final_pass(handle: Any, readout: Any, ids: list[int], segments: list[int], position: int,
                pre_hooks: list[tuple[Any, Callable[[Any], None]]]) -> tuple[Any, torch.Tensor, Any, torch.Tensor]:
    """One pass of the text, each (module, catch) of ``pre_hooks`` given that module's input, and the final norm
    caught at ``position`` (only this thread's pass: the model is shared): (the output, the stream the final norm read
    there, the norm as a linear map with the text's scale, its offset)."""
    normed: list[tuple[torch.Tensor, torch.Tensor]] = []  # the final norm's (input, output) at the position
    owner = threading.get_ident()

    def pre(catch: Callable[[Any], None]) -> Any:
        def hook(module: Any, inputs: Any) -> None:
            if threading.get_ident() == owner:
                catch(inputs[0])
        return hook

    def norm_hook(module: Any, inputs: Any, output: Any) -> None:
        if threading.get_ident() == owner and inputs and isinstance(output, torch.Tensor) and output.dim() == 3:
            normed.append((inputs[0][0, position].detach(), output[0, position].detach()))

    hooks = [module.register_forward_pre_hook(pre(catch)) for module, catch in pre_hooks]
    if readout.norm is not None:
        hooks.append(readout.norm.register_forward_hook(norm_hook))
    try:
        with torch.inference_mode():
            out = handle._forward(ids, segments, logits=True, positions=[position])
    finally:
        for hook in hooks:
            hook.remove()
    if readout.norm is None:
        stream = out.hidden[-1][0, position].detach()
        return out, stream, (lambda c: c.cpu().double()), torch.zeros(stream.shape[-1], dtype=torch.float64)
    if not normed:
        raise Unsupported(f"{handle.name}: its final norm was not run on its last states")
    stream, y = normed[-1]
    linear, offset = frozen_norm(readout.norm, stream, y)
    return out, stream, linear, offset


def _measure(z: torch.Tensor, top: int, foil: int | None) -> torch.Tensor:
    """logit(top) − logit(foil), or logit(top) less the mean logit, of (…, V) logits (float32 on their device)."""
    z = z.float()
    return z[..., top] - (z[..., foil] if foil is not None else z.mean(-1))


def read_direct(handle: Any, projections: list[Any], heads: int, ids: list[int], segments: list[int], position: int,
                target: int | None, foil: int | None) -> DirectParts:
    """Every part's direct effect at ``position`` on logit(target) − logit(foil), or on logit(target) less the mean
    logit (target None: the model's top token); Unsupported for a post-LN network, a norm of unknown form, or parts
    that do not add up to the model's own logits."""
    readout = handle.adapter.direct_readout(handle.name)
    caught: dict[int, torch.Tensor] = {}

    def catch(index: int) -> Callable[[Any], None]:
        return lambda x: caught.__setitem__(index, x[0, position].detach())

    out, stream, linear, offset = _final_pass(handle, readout, ids, segments, position,
                                              [(p, catch(i)) for i, p in enumerate(projections)])
    if len(caught) != len(projections) or len(out.hidden) != len(projections) + 1:
        raise Unsupported(f"{handle.name}: its attention's output projection was not run once a layer")
    dtype = stream.dtype
    logits = out.logits[0, 0].float()
    top = int(logits.argmax()) if target is None else target

    def head(rows: torch.Tensor) -> torch.Tensor:  # CPU float64 rows of the normed stream -> measured
        return _measure(readout.head(rows.to(device=stream.device, dtype=dtype)), top, foil).cpu().double()

    with torch.inference_mode():
        # the stream before each block and after the last; a block adds its heads, its attention's bias and its
        # MLP's output (whatever else it adds: the MLP's share)
        states = [h[0, position].cpu().double() for h in out.hidden[:-1]] + [stream.cpu().double()]
        layers = [head_parts(projections[i], caught[i], heads) for i in range(len(projections))]
        parts = torch.cat([p for p, _ in layers])
        mlps = torch.stack([states[i + 1] - states[i] - p.sum(0) - bias for i, (p, bias) in enumerate(layers)])
        biases = torch.stack([bias for _, bias in layers]).sum(0)
        zero = head(torch.zeros(1, stream.shape[-1], dtype=torch.float64))

        def read(rows: torch.Tensor) -> torch.Tensor:  # parts of the stream -> their direct effects
            return torch.cat([head(linear(rows[a:a + ROWS])) - zero for a in range(0, len(rows), ROWS)])

        effect, mlp = read(parts), read(mlps)
        embedding = float(read(states[0][None])[0])
        fixed = float(head((linear(biases) + offset)[None])[0])
    value = float(_measure(logits, top, foil))
    total = float(effect.sum()) + float(mlp.sum()) + embedding + fixed
    size = float(effect.abs().sum() + mlp.abs().sum()) + abs(embedding) + abs(fixed)  # (parts that cancel: rounding)
    if abs(total - value) > (1e-3 if dtype == torch.float32 else 5e-2) * max(1.0, abs(value), 0.1 * size):
        raise Unsupported(f"{handle.name}: its heads' direct effects and the rest add up to {total:.3f}, its own "
                          f"logits to {value:.3f}, so they are not shown rather than shown wrong")
    return DirectParts(effect.reshape(len(projections), heads).cpu().numpy(), mlp.cpu().numpy(), embedding, fixed,
                       value, top)


# where a block keeps its MLP's output projection (its input: one activation a neuron): ours, GPT-2 and GPT-Neo,
# Llama-likes (Mistral, Qwen, Gemma, Phi-3, Cohere), GPT-NeoX, BLOOM and Falcon, Phi-2, OPT, GPT-J
MLP_OUTS = ("ffn_out", "mlp.c_proj", "mlp.down_proj", "mlp.dense_4h_to_h", "mlp.fc2", "fc2", "mlp.fc_out",
            "output.dense", "ffn.lin2", "ffn_output", "mlp.Wo")  # (post-LN: BERT's kin, DistilBERT, ALBERT, ModernBERT)


def block_parts(handle: Any, names: tuple[str, ...], part: str, use: str) -> list[Any]:
    """Each block's module of the first of ``names`` it has (a projection found by its architecture's name);
    Unsupported, saying the ``part`` is not found and what ``use`` it has, where a block has none."""
    found = []
    for block in handle.adapter.layer_modules()[1]:
        modules = dict(block.named_modules())
        module = next((modules[name] for name in names if name in modules), None)
        if module is None:
            raise Unsupported(f"{handle.name}: its {part} is not where word2bert looks for it "
                              f"({type(block).__name__}), so {use}")
        found.append(module)
    return found


def mlp_outputs(handle: Any) -> list[Any]:
    """Each block's MLP output projection, whose input is one activation a neuron."""
    return block_parts(handle, MLP_OUTS, "MLP's output projection", "its neurons cannot be read one by one")


def mlp_output(handle: Any, layer: object) -> Any:
    """Layer ``layer``'s (from 0) MLP output projection; InputError where the model has no such layer."""
    projections = mlp_outputs(handle)
    if isinstance(layer, bool) or not isinstance(layer, int | np.integer) or not 0 <= layer < len(projections):
        raise InputError(f"{handle.name} has no layer {layer!r}: {len(projections)} layers (0-{len(projections) - 1})")
    return projections[int(layer)]


def token_rows(x: torch.Tensor) -> torch.Tensor:
    """(tokens, neurons) of one text's MLP activations as its output projection reads them: (1, T, neurons), or
    (T, neurons) where the MLP reads its tokens flattened (OPT)."""
    return x[0] if x.dim() == 3 else x.reshape(-1, x.shape[-1])


def read_neurons(handle: Any, projection: Any, ids: list[int], segments: list[int], position: int,
                 target: int | None, foil: int | None) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Each neuron's direct effect through one MLP's output projection at ``position`` (its activation times its
    column, read through the final norm with the text's scale and the head, as the heads' are): (effects,
    activations, the projection's bias's effect, the target). The stream's direction that the measure reads is
    found once by a gradient (the reading is linear), then each neuron is a dot product."""
    readout = handle.adapter.direct_readout(handle.name)
    caught: list[torch.Tensor] = []

    def catch(x: torch.Tensor) -> None:
        caught.append(token_rows(x)[position].detach())

    out, stream, linear, _ = _final_pass(handle, readout, ids, segments, position, [(projection, catch)])
    if len(caught) != 1:
        raise Unsupported(f"{handle.name}: its MLP's output projection was not run once")
    top = int(out.logits[0, 0].float().argmax()) if target is None else target
    dtype, device = stream.dtype, stream.device
    part = torch.zeros(stream.shape[-1], dtype=torch.float64, requires_grad=True)
    with torch.enable_grad():  # the direction in the stream the measure reads (the gradient of a linear map)
        measured = _measure(readout.head(linear(part)[None].to(device=device, dtype=dtype))[0], top, foil)
        (direction,) = torch.autograd.grad(measured, part)
    activation = caught[0]
    width = activation.shape[-1]
    with torch.inference_mode():
        zero = projection(activation.new_zeros(1, width)).cpu().double()[0]  # the bias
        effects = []
        for a in range(0, width, 1024):
            n = min(width, a + 1024) - a
            rows = activation.new_zeros(n, width)
            rows[torch.arange(n), torch.arange(a, a + n)] = activation[a:a + n]
            effects.append((projection(rows).cpu().double() - zero) @ direction)
    return (torch.cat(effects).numpy(), activation.float().cpu().numpy(), float(zero @ direction), top)
