"""A frozen teacher for distillation (engine/models/distill.py): a Hugging Face encoder (a built-in name
such as all-minilm-l6-v2, or a folder) that gives per-word states of the student's own words."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from engine.data.inputs import whole_texts
from engine.errors import CheckpointError
from engine.models.distill import pool_words
from engine.models.hf_lock import one_thread_in_transformers


def student_words(ids: np.ndarray, vocabulary: list[str], special: set[int]) -> tuple[np.ndarray, list[list[str]]]:
    """From a student's WordPiece ids (B, T): each token's word number (-1 for special tokens) and each
    row's words, spelled from their pieces ("play" "##ing" -> "playing")."""
    index = np.full(ids.shape, -1, np.int64)
    words: list[list[str]] = []
    for b, row in enumerate(ids.tolist()):
        row_words: list[str] = []
        for t, i in enumerate(row):
            if i in special:
                continue
            piece = vocabulary[i]
            if piece.startswith("##") and row_words and index[b, t - 1] == len(row_words) - 1:
                row_words[-1] += piece[2:]
            else:
                row_words.append(piece.removeprefix("##"))
            index[b, t] = len(row_words) - 1
        words.append(row_words)
    return index, words


class Teacher:
    @one_thread_in_transformers
    def __init__(self, name: str, device: torch.device) -> None:
        import transformers
        from transformers import AutoModel, AutoTokenizer

        from engine.models.hf_memory import from_pretrained_in_memory
        from engine.models.masked_lm_head import base_folder
        from engine.models.tokenizer_vocab import without_python_vocab

        transformers.logging.set_verbosity_error()
        try:
            folder = base_folder(name)
        except CheckpointError as e:
            raise CheckpointError(f"{e}; nor a masked-LM run such as minilm-mlm (a teacher's predictions)") from None
        self.name = name
        self.model = from_pretrained_in_memory(AutoModel, folder, local_files_only=True, attn_implementation="eager")
        self.model.to(device).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        hf_tokenizer = without_python_vocab(AutoTokenizer.from_pretrained(folder, local_files_only=True, use_fast=True))
        self.tokenizer: Any = whole_texts(hf_tokenizer.backend_tokenizer)
        self.pad_id = int(hf_tokenizer.pad_token_id or 0)
        config = self.model.config
        self.layers, self.dim = int(config.num_hidden_layers), int(config.hidden_size)
        self.max_len = min(int(getattr(config, "max_position_embeddings", 512)), 512)
        self.device = device

    @torch.no_grad()
    def word_states(self, words: list[list[str]], layers: list[int]) -> tuple[list[torch.Tensor], torch.Tensor]:
        """Per teacher layer in ``layers``: (B, W, d) the mean state of each word's pieces; and (B, W) which
        words it saw (a word cut off by the teacher's length, or an empty row, is left out)."""
        encodings = self.tokenizer.encode_batch(words, is_pretokenized=True, add_special_tokens=True)
        length = min(max(len(e.ids) for e in encodings), self.max_len)
        ids = np.full((len(words), length), self.pad_id, np.int64)
        index = np.full((len(words), length), -1, np.int64)
        for b, e in enumerate(encodings):
            n = min(len(e.ids), length)
            ids[b, :n] = e.ids[:n]
            index[b, :n] = [w if w is not None else -1 for w in e.word_ids[:n]]
        n_words = max(1, max(len(w) for w in words))
        ids_t = torch.from_numpy(ids).to(self.device)
        index_t = torch.from_numpy(index).to(self.device)
        out = self.model(input_ids=ids_t, attention_mask=(ids_t != self.pad_id).long(), output_hidden_states=True)
        states = [pool_words(out.hidden_states[j], index_t, n_words) for j in layers]
        seen = torch.zeros(len(words), n_words, device=self.device).scatter_add_(
            1, index_t.clamp(min=0), (index_t >= 0).float()) > 0
        lengths = torch.tensor([len(w) for w in words], device=self.device)
        valid = seen & (torch.arange(n_words, device=self.device)[None] < lengths[:, None])
        return states, valid


def is_masked_lm_run(name: str) -> bool:
    """Whether ``name`` is a masked-LM run folder or shipped name (an mlm-head run, e.g. minilm-mlm) rather
    than a Hugging Face encoder (a built-in name or folder)."""
    from engine.checkpoints.reading import read_config
    from engine.checkpoints.shipped import run_folder

    try:
        return read_config(run_folder(name)).get("kind") == "mlm-head"
    except CheckpointError:
        return False


def teacher_vocabulary(tokenizer_json: str) -> tuple[Any, np.ndarray]:
    """The student's tokenizer made from a teacher's WordPiece: the same pieces and the same splitting, its
    ids reordered to the engine's layout ([PAD] [UNK] [CLS] [SEP] [MASK] first, BERT's [unusedN] rows
    dropped). Returns (tokenizer, to_teacher) with to_teacher[student id] = teacher id."""
    import json

    from tokenizers import Tokenizer

    from engine.data.text import SPECIAL_TOKENS

    spec = json.loads(tokenizer_json)
    old: dict[str, int] = spec["model"]["vocab"]
    missing = [t for t in SPECIAL_TOKENS if t not in old]
    if spec["model"].get("type") != "WordPiece" or missing:
        raise ValueError(f"the teacher's tokenizer is not a BERT WordPiece (missing {', '.join(missing) or 'WordPiece'})")
    kept = [t for t, _ in sorted(old.items(), key=lambda kv: kv[1])
            if t not in SPECIAL_TOKENS and not (t.startswith("[unused") and t.endswith("]"))]
    order = [*SPECIAL_TOKENS, *kept]
    new = {t: i for i, t in enumerate(order)}
    spec["model"]["vocab"] = new
    spec["truncation"] = spec["padding"] = None
    for added in spec.get("added_tokens", []):
        added["id"] = new[added["content"]]
    for special in (spec.get("post_processor") or {}).get("special_tokens", {}).values():
        special["ids"] = [new[t] for t in special["tokens"]]
    return Tokenizer.from_str(json.dumps(spec)), np.asarray([old[t] for t in order], np.int64)


class MaskedLMTeacher:
    """A masked LM trained here (an mlm-head run such as minilm-mlm) read by a student that shares its
    vocabulary: for the student's masked text, the teacher's predictions at the masked positions (soft
    targets) and its hidden states (the same tokens on both sides)."""

    def __init__(self, name: str, device: torch.device) -> None:
        from engine.checkpoints.reading import read_config, read_tensors
        from engine.checkpoints.shipped import run_folder
        from engine.models.masked_lm_head import base_folder, build_to_load, load_trained

        folder = run_folder(name)
        config = read_config(folder)
        base = str(config.get("model", {}).get("base", ""))
        self.model, _, fresh = build_to_load(base)
        load_trained(self.model, read_tensors(folder, config), str(folder), fresh)
        self.model.to(device).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.name, self.device = name, device
        self.save_id = str(config.get("save_id", ""))  # which save of the run taught (a shipped name can be remade)
        self.tokenizer_json = (base_folder(base) / "tokenizer.json").read_text(encoding="utf-8")
        self.layers = int(self.model.config.num_hidden_layers)
        self.dim = int(self.model.config.hidden_size)

    @torch.no_grad()
    def read(self, ids: torch.Tensor, pad_mask: torch.Tensor, chosen: torch.Tensor,
             layers: list[int]) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """ids (B, T) in the teacher's vocabulary (the student's masked text mapped), pad_mask (B, T) True on
        real tokens, chosen (B, T) the masked positions -> (their (M, V_teacher) logits, the states of
        ``layers``, each (B, T, d))."""
        from engine.models.masked_lm_head import head

        out = self.model.base_model(input_ids=ids, attention_mask=pad_mask.long(), output_hidden_states=True)
        logits = head(self.model)(out.hidden_states[-1][chosen]).float()
        return logits, [out.hidden_states[j] for j in layers]
