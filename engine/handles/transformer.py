"""Transformer models (our BERT and GPT, and Hugging Face checkpoints) behind the BaseHandle interface.

A ``TransformerHandle`` talks to its network through a small adapter (``forward`` returning hidden
states, attention probabilities and logits), so word alignment, truncation, fill-mask, next-token,
sentence scores and next-sentence prediction are written once for every Transformer; its lab queries (lens, tracing,
attribution, heads) in engine.handles.transformer_lab.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.cancel import check_cancelled
from engine.checkpoints.reading import read_tensors
from engine.config.checks import config_from_dict
from engine.data.inputs import encode_text
from engine.data.text import word_spans
from engine.device import pick_device, threads_for
from engine.errors import CheckpointError, InputError, Unsupported
from engine.handles.base import (
    BaseHandle,
    check_generation,
    check_k,
    check_text,
    padded_runs,
    run_info,
)
from engine.handles.lens import MASK_TEXT, no_mask
from engine.handles.transformer_lab import TransformerLab
from engine.models.wrappers.ours import BertAdapter, GPTAdapter
from engine.models.wrappers.protocol import Adapter, ForwardOutput
from engine.results import (
    AttentionMaps,
    Capability,
    ContextVectors,
    MaskCandidates,
    SentenceScore,
    TokenCandidates,
)

SHARED_MAX_TOKENS = 128  # texts up to this long share one forward pass between fill_mask and attention
PLL_BUDGET_BYTES = 256 * 2**20  # vocabulary logits held at once while a masked LM scores a sentence
PLL_MAX_TOKENS = 128  # a masked LM scores a sentence with one pass per token: at most this many
# on a CPU, fewer for bigger models: a score's work grows as tokens² × weights, and this bounds it (a bert-tiny
# reads 109 tokens, a MiniLM 54: a few seconds of one core each; the 22M-weight MiniLM took up to 21 s at 128,
# bench/robustness/fuzz.py); never fewer than PLL_MIN_TOKENS
PLL_CPU_WORK = 128 * 128 * 4e6
PLL_MIN_TOKENS = 32


class TransformerHandle(TransformerLab, BaseHandle):
    def __init__(self, kind: str, name: str, path: str | None, info: dict[str, Any], adapter: Adapter) -> None:
        super().__init__(kind, name, path, info)
        self.adapter = adapter
        caps = Capability.CONTEXTUAL | Capability.ATTENTION
        if adapter.objective == "masked":
            caps |= Capability.MASKED_LM | Capability.FILL_BLANK | Capability.SENTENCE_SCORE
        elif adapter.objective == "causal":
            caps |= Capability.NEXT_TOKEN | Capability.SENTENCE_SCORE
        if adapter.has_nsp:
            caps |= Capability.NEXT_SENTENCE
        self.capabilities = caps
        self.info.setdefault("objective", adapter.objective)
        if "layers" in self.info:  # contextual_vectors gives the embedding layer and every layer's output
            self.info["vector_layers"] = int(self.info["layers"]) + 1
        self.info.setdefault("max_tokens", adapter.max_len)
        self._shared: tuple[Any, ForwardOutput] | None = None  # the last short text's full forward pass
        self._shared_lock = threading.Lock()
        self._n_parameters: int | None = None  # (counted once: it decides how many threads a pass gets)
        self.tuned_lens: Any = None  # engine.models.tuned_lens.TunedLens, when loaded from a tuned-lens run
        self.tuned_lens_notice = ""  # why that lens may not fit (trained on another save of the model)

    def _shared_forward(self, ids: list[int], segments: list[int]) -> ForwardOutput | None:
        """One forward pass of a short masked-LM text with attention and the logits at its [MASK]
        positions (none without a [MASK]), kept for the next query on the same text: as the speaker types,
        the masked view's fill_mask and the attention view's maps of one edit cost one pass, not two
        (bench/speed/attention_predictions_speed.py). Only the [MASK] rows go through the output head: on a
        BERT-base its 30k x 768 matrix is a fifth of the pass at 20 tokens. None for long texts and other
        objectives."""
        if self.adapter.objective != "masked" or len(ids) > SHARED_MAX_TOKENS:
            return None
        key = (tuple(ids), tuple(segments))
        with self._shared_lock:
            if self._shared is not None and self._shared[0] == key:
                return self._shared[1]
        masks = [i for i, t in enumerate(ids) if t == self.adapter.mask_id]
        out = self._forward(ids, segments, attention=True, logits=bool(masks), positions=masks or None)
        with self._shared_lock:
            self._shared = (key, out)
        return out

    def missing(self, capability: Capability) -> str:
        reason = super().missing(capability)
        if reason and capability in (Capability.MASKED_LM, Capability.FILL_BLANK, Capability.SENTENCE_SCORE,
                                     Capability.NEXT_TOKEN):
            if self.adapter.missing_head_reason:
                return self.adapter.missing_head_reason
            if capability in (Capability.MASKED_LM, Capability.FILL_BLANK):
                return f"{self.name} ({self.kind}) reads left to right (GPT-style): it cannot fill [MASK]"
            if capability is Capability.NEXT_TOKEN:
                return f"{self.name} ({self.kind}) is a masked LM: it sees both sides, so it does not predict next tokens"
        return reason

    # ------------------------------------------------------------ encoding

    def _encode(self, text: str, pair: str | None = None) -> tuple[list[int], list[int], list[tuple[int, int]], list[int], str]:
        """ids, segments, offsets (into text, or into pair for segment 1), special mask; a notice when
        truncated. The same path as fine-tuning's (engine/data/inputs.py), with the adapter's specials."""
        enc = encode_text(self.adapter.tokenizer, self.adapter.specials, text, pair, self.adapter.max_len)
        notice = ""
        if enc.truncated:
            notice = f"the text has {enc.length} tokens; truncated to the first {self.adapter.max_len} this model reads"
        return enc.ids, enc.segments, enc.offsets, [int(s) for s in enc.special], notice

    def _forward(self, ids: list[int] | list[list[int]], segments: list[int] | list[list[int]] | None = None,
                 **kwargs: Any) -> ForwardOutput:
        device = getattr(self.adapter, "device", torch.device("cpu"))
        t = torch.tensor(ids, device=device)
        t = t[None] if t.dim() == 1 else t
        s = None
        if segments is not None:
            s = torch.tensor(segments, device=device)
            s = s[None] if s.dim() == 1 else s
        if kwargs.get("pad_mask") is not None:
            kwargs["pad_mask"] = torch.tensor(kwargs["pad_mask"], device=device).bool()
        with torch.inference_mode(), threads_for(self._parameters() * t.numel()):
            return self.adapter.forward(t, s, **kwargs)

    def _parameters(self) -> int:
        if self._n_parameters is None:
            model = getattr(self.adapter, "model", None)
            self._n_parameters = sum(p.numel() for p in model.parameters()) if model is not None else 0
        return self._n_parameters

    def _token_text(self, token_id: int) -> str:
        tok = self.adapter.tokenizer
        if self.adapter.byte_level:
            return tok.decode([token_id], skip_special_tokens=False)
        text = tok.id_to_token(token_id) or f"<{token_id}>"
        return text.replace("\u2581", " ") if self.adapter.metaspace else text  # "▁the" -> " the", as byte-level

    # ------------------------------------------------------------ queries

    def contextual_vectors(self, sentence: str) -> ContextVectors:
        return self.contextual_vectors_batch([sentence])[0]

    def contextual_vectors_batch(self, sentences: list[str]) -> list[ContextVectors]:
        """``contextual_vectors`` of several sentences in one padded forward pass (corpus indexes)."""
        texts = [check_text(s) for s in sentences]
        encoded = []
        for text in texts:
            spans = word_spans(text)
            if not spans:
                raise InputError("the sentence has no words")
            encoded.append((text, spans, *self._encode(text)))
        longest = max(len(e[2]) for e in encoded)
        pad = int(getattr(self.adapter, "pad_id", None) or 0)
        ids = [e[2] + [pad] * (longest - len(e[2])) for e in encoded]
        mask = [[1] * len(e[2]) + [0] * (longest - len(e[2])) for e in encoded]
        out = self._forward(ids, None, pad_mask=None if len(encoded) == 1 else mask)
        # one copy of the whole batch to the host, then numpy: on a GPU, pooling word by word on the device
        # cost a sync per word (0.9 s for a word's 300 occurrences under a MiniLM on an H200)
        every = torch.stack(list(out.hidden)).float().cpu().numpy()  # (layers + 1, B, T, d)
        results = []
        for row, (text, spans, tok_ids, _, offsets, special, notice) in enumerate(encoded):
            hidden = every[:, row, : len(tok_ids)]  # (layers + 1, T, d)
            results.append(self._pool_words(text, spans, offsets, special, hidden, notice))
        return results

    @staticmethod
    def _pool_words(text: str, spans: list[tuple[int, int]], offsets: list[tuple[int, int]], special: list[int],
                    hidden: np.ndarray, notice: str) -> ContextVectors:
        word_of = np.full(len(offsets), -1)
        starts = np.array([s for s, _ in spans])
        for i, ((a, b), sp) in enumerate(zip(offsets, special, strict=True)):
            if sp or b <= a:
                continue
            w = int(np.searchsorted(starts, b - 1, side="right")) - 1  # the word holding the token's last char
            if w >= 0 and spans[w][0] <= b - 1 < spans[w][1]:
                word_of[i] = w
        covered = sorted({int(w) for w in word_of if w >= 0})
        if not covered:
            raise InputError("none of the words could be encoded by this model's tokenizer")
        pool = (word_of[None, :] == np.array(covered)[:, None]).astype(np.float32)  # (words, T)
        pool /= pool.sum(1, keepdims=True)  # the mean of the sub-word pieces of each word
        vectors = np.matmul(pool, hidden).astype(np.float32)  # (layers + 1, words, d)
        words = tuple(text[spans[w][0] : spans[w][1]] for w in covered)
        if len(covered) < len(spans) and not notice:
            notice = f"{len(spans) - len(covered)} word(s) could not be encoded"
        return ContextVectors(words, vectors, tuple(True for _ in words), notice)

    def attention(self, sentence_or_pair: Any) -> AttentionMaps:
        if isinstance(sentence_or_pair, (tuple, list)):
            if len(sentence_or_pair) != 2:
                raise InputError("give one sentence or a pair of sentences")
            a, b = (self._masks_as_typed(check_text(x)) for x in sentence_or_pair)
            if self.adapter.objective == "causal":
                ids, segments, _, _, notice = self._encode(f"{a} {b}")
            else:
                ids, segments, _, _, notice = self._encode(a, b)
        else:
            ids, segments, _, _, notice = self._encode(self._masks_as_typed(check_text(sentence_or_pair)))
        out = self._shared_forward(ids, segments) or self._forward(ids, segments, attention=True)
        weights = torch.stack([a[0] for a in out.attentions]).float().cpu().numpy()  # (L, H, T, T)
        return AttentionMaps(tuple(self._token_text(i) for i in ids), weights, tuple(segments), notice)

    def _masks_as_typed(self, text: str) -> str:
        """A typed [MASK] as this masked LM's own mask token (RoBERTa's "<mask>"), as fill-mask reads it: the
        attention on a masked sentence is then the pass fill-mask makes, its [MASK] one token, not six pieces."""
        if self.adapter.objective != "masked" or self.adapter.mask_id is None or MASK_TEXT not in text:
            return text
        return text.replace(MASK_TEXT, self.adapter.tokenizer.id_to_token(self.adapter.mask_id))

    def fill_mask(self, text: str, k: int = 10) -> list[MaskCandidates]:
        k = check_k(k)
        if self.adapter.objective != "masked":
            raise Unsupported(self.adapter.missing_head_reason or
                              f"{self.name} ({self.kind}) is not a masked language model: it cannot fill [MASK]")
        text = check_text(text)
        if MASK_TEXT not in text:
            raise no_mask(text)
        mask_token = self.adapter.tokenizer.id_to_token(self.adapter.mask_id)
        ids, segments, _, _, _ = self._encode(text.replace(MASK_TEXT, mask_token))
        positions = [i for i, t in enumerate(ids) if t == self.adapter.mask_id]
        if not positions:
            raise InputError("every [MASK] lies beyond the part of the text this model reads")
        if len(positions) > 1 and getattr(self.adapter, "sentinel", None) is not None:
            raise InputError(f"{self.name} fills one [MASK] at a time (T5's sentinel stands for one span of the "
                             "text): leave one")
        out = self._shared_forward(ids, segments) or self._forward(ids, segments, logits=True, positions=positions)
        assert out.logits is not None
        logits = out.logits[0]  # (masks, V): the head ran at the [MASK] positions only
        probs = logits.float().softmax(-1)  # (masks, V)
        not_words = getattr(self.adapter, "not_words", None)
        if not_words:  # T5's end, padding and sentinels: not words, though the decoder may write them first
            probs[:, not_words] = 0.0
        top = probs.topk(min(max(1, int(k)), probs.shape[-1]), dim=-1)
        values, indices = top.values.cpu().numpy(), top.indices.cpu().numpy()
        return [MaskCandidates(p, tuple(self._token_text(int(i)) for i in idx), tuple(float(v) for v in val))
                for p, idx, val in zip(positions, indices, values, strict=True)]

    def next_token(self, text: str, k: int = 10) -> TokenCandidates:
        k = check_k(k)
        if self.adapter.objective != "causal":
            raise Unsupported(f"{self.name} ({self.kind}) is not a left-to-right language model: "
                              "next-token prediction needs GPT-style models")
        text = check_text(text)
        ids, _, _, _, _ = self._encode(text)
        out = self._forward(ids, logits=True, positions=[len(ids) - 1])
        assert out.logits is not None
        probs = out.logits[0, 0].float().softmax(-1)
        top = probs.topk(min(max(1, int(k)), probs.shape[-1]))
        return TokenCandidates(text, tuple(self._token_text(int(i)) for i in top.indices.cpu()),
                               tuple(float(v) for v in top.values.cpu()))

    def generate(self, text: str, tokens: int = 20, temperature: float = 0.0, seed: int = 0,
                 no_repeat: int = 0) -> str:
        """The continuation of ``text`` by a left-to-right model, greedy (temperature 0) or sampled, up to
        ``tokens`` tokens or where the model ends the text, no run of ``no_repeat`` tokens repeated (0: any);
        written as text (engine.handles.continuation)."""
        from engine.handles.continuation import choose, repeats, token_roles, written

        if self.adapter.objective != "causal":
            raise Unsupported(self.missing(Capability.NEXT_TOKEN) or f"{self.name} cannot continue text")
        tokens, temperature, seed, no_repeat = check_generation(tokens, temperature, seed, no_repeat)
        ids, _, _, _, _ = self._encode(check_text(text))
        tok = self.adapter.tokenizer
        specials = [i for i, added in tok.get_added_tokens_decoder().items() if added.special]
        roles = token_roles(specials, tuple(self.adapter.specials.prefix), self.adapter.end_of_text)
        rng = np.random.default_rng(seed)
        new: list[int] = []
        for _ in range(tokens):
            window = ids[-self.adapter.max_len :]
            out = self._forward(window, logits=True, positions=[len(window) - 1])
            assert out.logits is not None
            avoid = repeats(ids, no_repeat, keep=roles.stop | roles.breaks)
            next_id = choose(out.logits[0, 0].float().cpu().numpy(), temperature, rng, roles.banned, avoid)
            if next_id in roles.stop:
                break
            ids.append(next_id)
            new.append(next_id)
        return written(self.adapter, self._token_text, new, roles.breaks)

    def score(self, sentence: str) -> SentenceScore:
        text = check_text(sentence)
        if self.adapter.objective == "causal":
            ids, _, _, _, notice = self._encode(text)
            if len(ids) < 2:
                raise InputError("the sentence has no tokens to score")
            out = self._forward(ids, logits=True)
            assert out.logits is not None
            logp = out.logits[0, :-1].float().log_softmax(-1)
            target = torch.tensor(ids[1:], device=logp.device)
            lp = logp.gather(1, target[:, None])[:, 0].cpu().numpy()
            tokens = ids[1:]
        elif self.adapter.objective == "masked":
            ids, segments, _, special, notice = self._encode(text)
            positions = [i for i, s in enumerate(special) if not s]
            if not positions:
                raise InputError("the sentence has no tokens to score")
            cap = self._pll_cap()
            if len(positions) > cap:  # one pass per token over the whole text: T² work
                notice = (f"a masked LM scores a text one token at a time: its first {cap} of "
                          f"{len(positions)} tokens are scored, as a text of their own")
                end = positions[cap - 1] + 1
                ids, segments = ids[:end] + ids[-1:], segments[:end] + segments[-1:]  # … [SEP]
                positions = positions[:cap]
            lp = self._pseudo_log_likelihood(ids, segments, positions)
            tokens = [ids[p] for p in positions]
        else:
            raise Unsupported(self.adapter.missing_head_reason or f"{self.name} has no language-model head")
        total = float(lp.sum())
        return SentenceScore(tuple(self._token_text(t) for t in tokens), tuple(float(x) for x in lp), total,
                             math.exp(-total / len(lp)), notice)

    def perplexity(self, sentences: list[str]) -> float:
        """Per-token perplexity of ``score`` over ``sentences``. A left-to-right model reads rows of about one
        length padded into one pass (a pass a sentence took 26 ms each for gpt-tiny on two cores: 5 minutes for
        the default corpus's held-out part); a masked LM scores each sentence token by token, as ``score``."""
        if self.adapter.objective != "causal":
            return super().perplexity(sentences)
        rows = [tokens for s in sentences if s.strip() and len(tokens := self._encode(check_text(s))[0]) >= 2]
        if not rows:
            raise InputError("no sentences to score")
        vocab = int(self.adapter.tokenizer.get_vocab_size())
        pad = int(getattr(self.adapter, "pad_id", None) or 0)
        total, count = 0.0, 0
        for part in padded_runs(rows, len, PLL_BUDGET_BYTES // (4 * vocab)):  # (their logits within the budget)
            longest = len(part[-1])
            ids = [r + [pad] * (longest - len(r)) for r in part]
            mask = [[1] * len(r) + [0] * (longest - len(r)) for r in part]
            out = self._forward(ids, None, logits=True, pad_mask=None if len(part) == 1 else mask)
            assert out.logits is not None
            logp = out.logits[:, :-1].float().log_softmax(-1)  # (B, T - 1, V): position k predicts token k + 1
            target = torch.tensor(ids, device=logp.device)[:, 1:]
            real = torch.tensor(mask, device=logp.device)[:, 1:].bool()
            total += float(logp.gather(2, target[..., None])[..., 0][real].sum())
            count += int(real.sum())
        return math.exp(-total / count)

    def _pll_cap(self) -> int:
        """How many tokens a sentence score of this masked LM reads here (see PLL_CPU_WORK)."""
        if getattr(self.adapter, "device", torch.device("cpu")).type != "cpu":
            return PLL_MAX_TOKENS
        fits = int(math.sqrt(PLL_CPU_WORK / max(1, self._parameters())))
        return min(PLL_MAX_TOKENS, max(PLL_MIN_TOKENS, fits))

    def _pseudo_log_likelihood(self, ids: list[int], segments: list[int], positions: list[int]) -> np.ndarray:
        """log p(token | the rest) with each token masked in turn, in chunks of copies whose vocabulary
        logits are computed only at their own masked position (one row of V each; all T copies with (T, V)
        logits grew as T², and a chunk's copies at each other's positions as chunk² — 64x the output
        head's work). Memory stays near PLL_BUDGET_BYTES whatever the length. Cancellable between chunks
        (engine.cancel)."""
        mask_id = int(self.adapter.mask_id or 0)
        vocab = int(self.adapter.tokenizer.get_vocab_size())
        chunk = max(1, min(64, PLL_BUDGET_BYTES // max(1, 4 * vocab * len(ids))))
        out = np.empty(len(positions), np.float32)
        for start in range(0, len(positions), chunk):
            check_cancelled("scoring the sentence")  # a newer request, or Stop: between chunks
            part = positions[start : start + chunk]
            batch = [list(ids) for _ in part]
            for row, p in zip(batch, part, strict=True):
                row[p] = mask_id
            result = self._forward(batch, [segments] * len(batch), logits=True, row_positions=part)
            assert result.logits is not None
            logp = result.logits.float().log_softmax(-1)  # (copies, V): each copy at its own masked position
            rows = torch.arange(len(part), device=logp.device)  # (indexes on the logits' device: no copy, no sync)
            out[start : start + len(part)] = logp[rows, torch.tensor([ids[p] for p in part], device=logp.device)].cpu().numpy()
        return out

    def next_sentence(self, a: str, b: str) -> float:
        if not self.adapter.has_nsp:
            raise Unsupported(f"{self.name} ({self.kind}) has no next-sentence head")
        ids, segments, _, _, _ = self._encode(check_text(a, "first sentence"), check_text(b, "second sentence"))
        out = self._forward(ids, segments, nsp=True)
        assert out.nsp is not None
        return float(out.nsp[0].float().softmax(-1)[0])


# ---------------------------------------------------------------- our BERT and GPT

def expected_shapes(module: torch.nn.Module) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in module.state_dict().items()}


def tokenizer_file(run_dir: Path, config: dict) -> str:
    """config.json's tokenizer: a file name inside the run folder (never a path that leaves it)."""
    name = config.get("tokenizer", "tokenizer.json")
    if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
        raise CheckpointError(f"{run_dir}/config.json: 'tokenizer' must name a file in the run folder, not {name!r}")
    return name


def _load_transformer(kind: str, network: Any, adapter: Any, run_dir: Path, config: dict) -> TransformerHandle:
    from engine.data.text import load_subword_tokenizer
    from engine.models.shared_tokenizers import shared_tokenizer

    cfg = config_from_dict(kind, config["model"])
    model = network(cfg)
    tensors = read_tensors(run_dir, config, expected_shapes(model))
    model.load_state_dict({k: v.float() for k, v in tensors.items()})
    path = run_dir / tokenizer_file(run_dir, config)
    tokenizer = shared_tokenizer(run_dir, lambda: load_subword_tokenizer(path), file=path)  # (one per run)
    info = run_info(run_dir, config)
    info.update({"layers": cfg.layers, "heads": cfg.heads, "dim": cfg.hidden, "preset": cfg.preset,
                 "parameters": sum(p.numel() for p in model.parameters())})
    return TransformerHandle(kind, run_dir.name, str(run_dir), info, adapter(model, tokenizer, pick_device()))


def load_bert(run_dir: Path, config: dict) -> TransformerHandle:
    from engine.models.bert import Bert

    return _load_transformer("bert", Bert, BertAdapter, run_dir, config)


def load_gpt(run_dir: Path, config: dict) -> TransformerHandle:
    from engine.models.gpt import GPT

    handle = _load_transformer("gpt", GPT, GPTAdapter, run_dir, config)
    adapter: Any = handle.adapter
    adapter.glued_sentences &= not config.get("sentences_spaced", False)
    return handle
