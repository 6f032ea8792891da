"""The lab's queries of a Transformer language model (ours or a Hugging Face folder), through its one
wrapper (engine/models/wrappers):

* ``lens_grid``: every layer's state at every position read through the model's own output head (the
  logit lens, nostalgebraist 2020), or first through that layer's trained translator (the tuned lens,
  Belrose et al. 2023): the top predictions, their entropy, their distance from the final layer and the
  rank of the actual token, layers × tokens.
* ``causal_trace``: where a prediction comes from (Meng et al. 2022, "Locating and Editing Factual
  Associations in GPT"): the subject's token embeddings are noised, then one (layer, position) state at a
  time is put back from the clean run, and the prediction's probability measured again. With a ``contrast``
  sentence of as many tokens instead of noise, it is activation patching (the "denoising" direction of
  TransformerLens's ``patching``): the contrast sentence is run, one state of the text's run put in its place.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from engine.cancel import check_cancelled
from engine.data.text import word_spans
from engine.errors import InputError, Unsupported
from engine.handles.base import check_k, check_samples, check_text
from engine.lab_results import CausalTrace, LensGrid
from engine.models.wrappers.hf_lens import encoder_decoder_refusal

MASK_TEXT = "[MASK]"
MAX_GRID_TOKENS = 64  # a sentence; the grid's logits are (layers + 1) x tokens x vocabulary
POSITION_CHUNK = 16  # positions read through the head at once (a GPT-2's 13 x 16 x 50k floats: 42 MB)
TRACE_ROWS = 256  # corrupted copies run in one batch
MAX_TRACE_TOKENS = 48  # a sentence: tracing runs (layers + 1) x tokens x samples copies of it
NOISE_TIMES_STD = 3.0  # Meng et al.: 3 x the standard deviation of the token embeddings


def no_mask(text: str) -> InputError:
    """The refusal of a text with no [MASK] to fill, saying so where one was typed in other letters ("[mask]": a
    word to the model)."""
    typed = re.search(r"\[mask\]", text, re.IGNORECASE)
    also = f" (“{typed.group(0)}” is read as a word: [MASK] is typed in capitals)" if typed else ""
    return InputError(f"the text has no [MASK]{also}: type [MASK] where a word should be predicted")


def _model_text(handle: Any, text: str) -> str:
    adapter = handle.adapter
    if adapter.objective not in ("masked", "causal"):
        raise Unsupported(adapter.missing_head_reason or f"{handle.name} has no output head to read layers with")
    if getattr(adapter, "encoder_decoder", False):
        raise Unsupported(encoder_decoder_refusal(handle.name))
    text = check_text(text)
    if adapter.objective == "masked" and MASK_TEXT in text:
        text = text.replace(MASK_TEXT, adapter.tokenizer.id_to_token(adapter.mask_id))
    return text


def _inputs(handle: Any, text: str, most: int) -> tuple[list[int], list[int], list[bool], str]:
    ids, segments, _, special, notice = handle._encode(_model_text(handle, text))
    if len(ids) > most:
        ids, segments, special = ids[:most], segments[:most], special[:most]
        notice = f"the text is longer than {most} tokens; the first {most} are shown"
    return ids, segments, [bool(s) for s in special], notice


def prediction_position(handle: Any, ids: list[int], no_mask: str) -> int:
    """Where the explained prediction is read: a masked LM's first [MASK] (refused with ``no_mask`` where the
    tokens have none), a left-to-right LM's last token."""
    adapter = handle.adapter
    if adapter.objective != "masked":
        return len(ids) - 1
    if adapter.mask_id not in ids:
        raise InputError(no_mask)
    return ids.index(adapter.mask_id)


def lens_grid(handle: Any, text: str, k: int = 5, translators: Any = None) -> LensGrid:
    """``handle``'s lens over ``text`` (masked LMs: [MASK] where a word is hidden), the first
    ``MAX_GRID_TOKENS`` tokens; ``translators``: a tuned lens (``engine.models.tuned_lens``) or None."""
    k = check_k(k, 20)
    adapter = handle.adapter
    ids, segments, special, notice = _inputs(handle, text, MAX_GRID_TOKENS)
    masked = adapter.objective == "masked"
    n = len(ids)
    if masked:  # the token at each position, unknown where it is hidden
        target_ids = [-1 if special[t] or ids[t] == adapter.mask_id else ids[t] for t in range(n)]
    else:  # the token after each position
        target_ids = [ids[t + 1] if t + 1 < n and not special[t + 1] else -1 for t in range(n)]
    out = handle._forward(ids, segments)
    hidden = [h[0] for h in out.hidden]  # (layers + 1) x (T, d)
    with torch.inference_mode():
        if translators is not None:
            hidden = translators.translate(hidden)
        stats = read_layers(hidden, target_ids, k, lambda chunk: adapter.read_layers(chunk).float())
    return grid_of(handle._token_text, text, "tuned" if translators is not None else "logit", adapter.objective,
                   [handle._token_text(i) for i in ids], special, target_ids, stats, notice)


LayerStats = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # top p, top ids, entropy, kl, rank


def read_layers(hidden: list[torch.Tensor], target_ids: list[int], k: int,
                head: Callable[[list[torch.Tensor]], torch.Tensor]) -> LayerStats:
    """Every layer's (T, d) states read through ``head`` (a list of (c, d) chunks, one a layer -> (layers, c, V)
    logits), ``POSITION_CHUNK`` positions at a time: the top ``k`` probabilities and ids, the entropy, the KL from
    the last layer and the rank of each position's target (-1: none, nan rank), as arrays (layers, T, …)."""
    layers, n = len(hidden), int(hidden[0].shape[0])
    top_p = np.zeros((layers, n, k), np.float32)
    top_i = np.zeros((layers, n, k), np.int64)
    entropy, kl = np.zeros((layers, n), np.float32), np.zeros((layers, n), np.float32)
    rank = np.full((layers, n), np.nan, np.float32)
    for a in range(0, n, POSITION_CHUNK):
        z = min(n, a + POSITION_CHUNK)
        logp = head([h[a:z] for h in hidden]).log_softmax(-1)  # (layers, c, V)
        p = logp.exp()
        entropy[:, a:z] = (-(p * logp).sum(-1)).cpu().numpy()
        kl[:, a:z] = (p[-1] * (logp[-1] - logp)).sum(-1).clamp_min(0).cpu().numpy()
        top = p.topk(min(k, p.shape[-1]), dim=-1)
        top_p[:, a:z, : top.values.shape[-1]] = top.values.cpu().numpy()
        top_i[:, a:z, : top.indices.shape[-1]] = top.indices.cpu().numpy()
        targets = torch.tensor(target_ids[a:z], device=logp.device)  # -1: no target there
        own = logp.gather(-1, targets.clamp_min(0)[None, :, None].expand(logp.shape[0], -1, 1))  # (layers, c, 1)
        ranks = ((logp > own).sum(-1) + 1).float().cpu().numpy()  # one copy a chunk, not one a position
        rank[:, a:z] = np.where((targets >= 0).cpu().numpy()[None], ranks, np.nan)
    return top_p, top_i, entropy, kl, rank


def grid_of(name_of: Callable[[int], str], text: str, lens: str, objective: str, tokens: list[str],
            special: list[bool], target_ids: list[int], stats: LayerStats, notice: str) -> LensGrid:
    """The LensGrid of ``read_layers``' arrays over ``tokens``, the ids it predicts named by ``name_of``."""
    top_p, top_i, entropy, kl, rank = stats
    layers, n = entropy.shape
    names: dict[int, str] = {}

    def name(i: int) -> str:
        if i not in names:
            names[i] = name_of(i)
        return names[i]

    tops = tuple(tuple(tuple(name(int(i)) for i in top_i[layer, t]) for t in range(n)) for layer in range(layers))
    return LensGrid(text, lens, objective, tuple(tokens), tuple(special),
                    tuple(name(i) if i >= 0 else None for i in target_ids), tops, top_p, entropy, kl, rank, notice)


def subject_positions(handle: Any, text: str, subject: str) -> list[int]:
    """The model's token positions of ``subject``'s words in ``text`` (their first occurrence)."""
    text_model = _model_text(handle, text)
    _, _, offsets, special, _ = handle._encode(text_model)
    subject = subject.strip()
    if not subject:
        raise InputError("name the subject: the words whose embeddings are noised")
    start = text_model.lower().find(subject.lower())
    if start < 0:
        raise InputError(f"'{subject}' is not in the text")
    end = start + len(subject)
    spans = [(a, b) for a, b in word_spans(text_model) if a < end and b > start]
    lo, hi = spans[0][0], spans[-1][1]
    found = [t for t, (a, b) in enumerate(offsets) if not special[t] and b > a and a < hi and b > lo]
    if not found:
        raise InputError(f"'{subject}' lies beyond the part of the text this model reads")
    return found


def _contrast_ids(handle: Any, ids: list[int], segments: list[int], contrast: str,
                  most: int = MAX_TRACE_TOKENS + 1) -> list[int]:
    """The contrast sentence's tokens (the first ``most``), checked against the text's: as many, its [MASK] in the
    same place (so each state of one run has its counterpart in the other), and not the same sentence."""
    other, other_segments, _, _ = _inputs(handle, contrast, most)
    if len(other) != len(ids) or other_segments != segments:
        words = [handle._token_text(i) for i in other]
        raise InputError(f"the contrast sentence must have as many tokens as the text ({len(ids)}) to put one run's "
                         f"states in the other's place; it has {len(other)}: {' '.join(words)}")
    mask = handle.adapter.mask_id if handle.adapter.objective == "masked" else None
    if mask is not None and [i == mask for i in other] != [i == mask for i in ids]:
        raise InputError("the contrast sentence must have its [MASK] where the text has it")
    if other == ids:
        raise InputError("the contrast sentence is the text itself: change the words whose effect you want to see")
    return other


def causal_trace(handle: Any, text: str, subject: str, *, samples: int = 3, noise: float | None = None,
                 seed: int = 0, contrast: str | None = None) -> CausalTrace:
    """Restore each (layer, position) state of the clean run into a run whose ``subject`` embeddings are
    noised (``samples`` noise draws, N(0, noise²) with ``noise`` 3 x the token embeddings' standard
    deviation unless given), and measure the clean prediction's probability at the [MASK] (masked LMs)
    or after the last token (left-to-right LMs). With ``contrast`` (a sentence of as many tokens, "The
    Colosseum is in [MASK]." beside "The Eiffel Tower is in [MASK]."), that sentence's run is the corrupted one
    and the subject is where the two differ: one pass per state, no noise."""
    adapter = handle.adapter
    ids, segments, special, _ = _inputs(handle, text, adapter.max_len)
    if len(ids) > MAX_TRACE_TOKENS:
        raise InputError(f"tracing explains one sentence of at most {MAX_TRACE_TOKENS} tokens; this text has "
                         f"{len(ids)}: shorten it")
    position = prediction_position(handle, ids, "the text has no [MASK]: tracing explains the prediction at a [MASK]")
    other = _contrast_ids(handle, ids, segments, contrast) if contrast is not None and contrast.strip() else None
    if other is not None:
        subj = [t for t in range(len(ids)) if ids[t] != other[t]]
        samples, noise = 1, 0.0
    else:
        subj = subject_positions(handle, text, subject)
    samples = check_samples(samples)
    embedding, blocks = adapter.layer_modules()
    n, layers = len(ids), len(blocks) + 1
    device = next(adapter.body.parameters()).device
    with torch.inference_mode():
        std = float(embedding.weight.float().std()) * NOISE_TIMES_STD if noise is None else float(noise)
        generator = torch.Generator().manual_seed(seed)
        draws = torch.randn(samples, len(subj), embedding.weight.shape[1], generator=generator) * std

    clean_states: list[torch.Tensor] = []
    clean_embedding: list[torch.Tensor] = []  # (a contrast run's layer 0 is put back from here)
    plan: dict[str, Any] = {}  # what the hooks do in the pass under way
    # the hooks sit on the loaded model, which other queries (another panel's, a worker's) may run at the same
    # time from their own threads: only this thread's passes are noised, patched and recorded
    tracer = threading.get_ident()

    def first(output: Any) -> torch.Tensor:
        return output[0] if isinstance(output, tuple) else output

    def with_first(output: Any, x: torch.Tensor) -> Any:
        return (x, *output[1:]) if isinstance(output, tuple) else x

    def noise_hook(module: Any, inputs: Any, output: Any) -> Any:
        if threading.get_ident() != tracer:
            return output
        if other is not None:  # the contrast sentence's run: its embeddings, but the text's at a restored token
            if "restore" not in plan:
                clean_embedding.append(output[0].clone())
                return output
            back = [(r, t) for r, (layer, t) in enumerate(plan["restore"]) if layer == 0]
            if not back:
                return output
            x = output.clone()
            for r, t in back:
                x[r, t] = clean_embedding[0][t]
            return x
        rows = plan.get("noise")  # (B, len(subj), d) per row, or None in the clean pass
        if rows is None:
            return output
        x = output.clone()
        x[:, subj] = x[:, subj] + rows.to(x.dtype)
        return x

    def block_hook(index: int) -> Any:
        def hook(module: Any, inputs: Any, output: Any) -> Any:
            if threading.get_ident() != tracer:
                return output
            x = first(output)
            if "restore" not in plan:  # the clean pass: keep every block's output
                clean_states.append(x[0].clone())
                return output
            rows = [r for r, (layer, _) in enumerate(plan["restore"]) if layer == index + 1]
            if not rows:
                return output
            x = x.clone()
            for r in rows:
                t = plan["restore"][r][1]
                x[r, t] = clean_states[index][t]
            return with_first(output, x)
        return hook

    handles = [embedding.register_forward_hook(noise_hook)]
    handles += [block.register_forward_hook(block_hook(i)) for i, block in enumerate(blocks)]
    try:
        with torch.inference_mode():
            clean = _probs_at(handle, [ids], [segments], position)[0]
            target = int(clean.argmax())
            p_clean = float(clean[target])
            cells = [(layer, t) for layer in range(layers) for t in range(n)]
            jobs = [(s, cell) for s in range(samples) for cell in [(-1, -1), *cells]]  # (-1, -1): nothing restored
            results = np.zeros(len(jobs), np.float64)
            for a in range(0, len(jobs), TRACE_ROWS):
                check_cancelled("causal tracing")  # a newer click supersedes this one
                chunk = jobs[a : a + TRACE_ROWS]
                rows = draws[[s for s, _ in chunk]].to(device)  # (B, len(subj), d)
                for r, (_, (layer, t)) in enumerate(chunk):
                    if layer == 0 and t in subj:  # the embedding row: this token left un-noised
                        rows[r, subj.index(t)] = 0.0
                plan.clear()
                plan.update({"noise": rows, "restore": [cell for _, cell in chunk]})
                probs = _probs_at(handle, [other or ids] * len(chunk), [segments] * len(chunk), position)
                results[a : a + len(chunk)] = probs[:, target].cpu().double().numpy()
    finally:
        for h in handles:
            h.remove()
        plan.clear()
    per_sample = results.reshape(samples, 1 + len(cells))
    p_corrupt = float(per_sample[:, 0].mean())
    restored = per_sample[:, 1:].mean(0).reshape(layers, n).astype(np.float32)
    return CausalTrace(text, tuple(handle._token_text(i) for i in ids), tuple(subj), position,
                       handle._token_text(target), p_clean, p_corrupt, restored, samples, std,
                       contrast=contrast.strip() if other is not None and contrast else "",
                       contrast_tokens=tuple(handle._token_text(i) for i in other) if other is not None else ())


def _probs_at(handle: Any, ids: list[list[int]], segments: list[list[int]], position: int) -> torch.Tensor:
    """(B, V) the model's distribution at ``position`` of each row."""
    out = handle._forward(ids, segments, logits=True, positions=[position])
    assert out.logits is not None
    return out.logits[:, 0].float().softmax(-1)
