"""ELMo's biLM behind the BaseHandle interface: three layers of contextual vectors per word,
sentence scores from both directions, next-word prediction from the forward LM, and a [MASK] filled by both LMs
(engine.handles.elmo_blank), with the lab's pages for either."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.checkpoints.reading import read_tensors
from engine.config.checks import config_from_dict
from engine.data.text import word_spans
from engine.data.vocab import Vocab
from engine.data.word_list import WordList
from engine.device import pick_device
from engine.errors import InputError, Unsupported
from engine.handles.base import MAX_WORDS, BaseHandle, check_text, padded_runs, run_info
from engine.handles.continuation import next_words
from engine.handles.lens import MASK_TEXT
from engine.lab_results import Attribution, CausalTrace, LensGrid
from engine.models.packed_linear import pack_linears
from engine.results import Capability, ContextVectors, LogitLens, MaskCandidates, SentenceScore

PERPLEXITY_WORDS = 4096  # words (padding included) in one pass while scoring many sentences

NEXT_TOKEN_WORDS = 200  # the words before the next one that ELMo's forward LM reads
ATTRIBUTION_WORDS = 64  # ... that its attribution weighs (the fuzz bench, one thread: 11 s at 128 words, hostile text)
FREQUENT_WORDS = 2000  # the words whose character-CNN vectors give the lab its scale of noise and its average word


class ElmoHandle(BaseHandle):
    def __init__(self, name: str, path: str, info: dict[str, Any], model: Any, vocab: Vocab, device: torch.device) -> None:
        super().__init__("elmo", name, path, info, lowercase=model.cfg.lowercase)
        self.model, self.device = model.to(device).eval(), device
        self._frequent: torch.Tensor | None = None  # (frequent_word_vectors)
        # the words as one buffer, not a str each and a dict (see WordList: the chaos bench found a Vocab's among
        # what keeps mostly free pages, made again at each load)
        self.word_list, self.counts = WordList.from_words(vocab.words), vocab.counts
        pack_linears(self.model)  # queries' short products through oneDNN on the CPU (see its module)
        self.capabilities = (Capability.CONTEXTUAL | Capability.SENTENCE_SCORE | Capability.NEXT_TOKEN
                             | Capability.FILL_BLANK)
        # next words and continuations as every word-level LM's (BaseHandle): its sentences read as in training
        self._next_words = next_words(self.word_list, self.word_list.find,
                                      lambda words: self._next_word_log_probs(words).float().cpu().numpy())

    def _words(self, text: str) -> tuple[list[str], list[str], str]:
        text = check_text(text)
        shown = [text[a:b] for a, b in word_spans(text)]
        if not shown:
            raise InputError("the sentence has no words")
        notice = ""
        if len(shown) > MAX_WORDS:
            notice = f"the sentence has {len(shown)} words; truncated to the first {MAX_WORDS}"
            shown = shown[:MAX_WORDS]
        words = [w.lower() for w in shown] if self.lowercase else list(shown)
        return shown, words, notice

    def _chars(self, words: list[str], padded_to: int = 0) -> torch.Tensor:
        """(1, n + 2, C): <s> words </s> as characters, and empty words after them up to ``padded_to`` words."""
        from engine.models.elmo import BOS_WORD, EOS_WORD, word_chars

        rows = [word_chars(w, self.model.cfg.max_chars) for w in (BOS_WORD, *words, EOS_WORD)]
        rows += [word_chars("", self.model.cfg.max_chars)] * max(0, padded_to - len(words))
        return torch.tensor(rows, device=self.device)[None]

    def contextual_vectors(self, sentence: str) -> ContextVectors:
        shown, words, notice = self._words(sentence)
        with torch.inference_mode():
            reps = self.model.representations(self._chars(words))[:, 0, 1:-1]  # (3, n, 2 * proj), <s> </s> dropped
        return ContextVectors(tuple(shown), reps.float().cpu().numpy().astype(np.float32),
                              tuple(True for _ in shown), notice)

    def forward_inputs(self, words: list[str]) -> torch.Tensor:
        """(1, n + 1, proj): what the forward LM reads for the words (<s>, then each word's character-CNN vector;
        the closing </s> comes after its last prediction). Gradients follow only where the caller enables them."""
        return self.model.token_encoder(self._chars(words)[:, :-1])

    def frequent_word_vectors(self) -> torch.Tensor:
        """(N, proj): the character-CNN vectors of the model's ``FREQUENT_WORDS`` most frequent words (the lab's
        scale of noise and its average word), made once per loaded model."""
        if self._frequent is None:
            from engine.models.ngram import BOS, EOS, UNK

            words = [w for w in self.word_list[:FREQUENT_WORDS] if w not in (BOS, EOS, UNK)]
            with torch.inference_mode():
                vectors = self.model.token_encoder(self._chars(words)[:, 1:-1])[0]
            self._frequent = vectors.clone()
        return self._frequent

    @property
    def vocab(self) -> Vocab:
        """The model's vocabulary with its counts (a fine-tune saves it beside its encoder), made when asked."""
        return Vocab(list(self.word_list), self.counts)

    def _ids(self, words: list[str]) -> list[int]:
        from engine.models.ngram import BOS, EOS, UNK

        find = self.word_list.find
        unk = find(UNK)
        return [find(BOS), *(i if (i := find(w)) is not None else unk for w in words), find(EOS)]  # type: ignore[list-item]

    def score(self, sentence: str) -> SentenceScore:
        """log p = (forward log p(w_1..w_n </s> | <s>) + backward log p(w_n..w_1 <s> | </s>)) / 2."""
        shown, words, _ = self._words(sentence)
        ids = torch.tensor(self._ids(words), device=self.device)
        with torch.inference_mode():
            fwd, bwd = self.model.log_probs(self._chars(words))  # (n + 2, V) each
        positions = torch.arange(len(ids) - 1, device=self.device)
        forward = fwd[positions, ids[1:]]  # p(w_{k+1} | w_<=k)
        backward = bwd[positions + 1, ids[:-1]]  # p(w_k | w_>k)
        # word k: forward p(w_k | left) and backward p(w_k | right); the </s> term pairs with <s>
        token_lp = ((forward + torch.cat([backward[1:], backward[:1]])) / 2).cpu().numpy()
        total = float(token_lp.sum())
        unknown = tuple(w not in self.word_list for w in words) + (False,)
        return SentenceScore(tuple([*shown, "</s>"]), tuple(float(x) for x in token_lp), total,
                             math.exp(-total / len(token_lp)), unknown=unknown)

    def perplexity(self, sentences: list[str]) -> float:
        """Per-token perplexity of ``score`` over ``sentences``, rows of about one length padded into one pass
        (a pass a sentence: ~60 ms each on two cores, 12 minutes for the default corpus's held-out part)."""
        rows = []
        for s in sentences:
            if s.strip():
                _, words, _ = self._words(s)
                rows.append((self._ids(words), words))
        if not rows:
            raise InputError("no sentences to score")
        total = count = 0.0
        for part in padded_runs(rows, lambda row: len(row[0]), PERPLEXITY_WORDS):
            longest = len(part[-1][0])
            chars = torch.cat([self._chars(words, longest - 2) for _, words in part])  # (B, T, C)
            ids = torch.tensor([i + [0] * (longest - len(i)) for i, _ in part], device=self.device)
            lengths = torch.tensor([len(i) for i, _ in part], device=self.device)
            with torch.inference_mode():
                forward, backward = self.model.target_log_probs(chars, lengths, ids)
            total += float(forward.sum() + backward.sum()) / 2  # each word: the mean of its two directions'
            count += float(len(forward))
        return math.exp(-total / count)

    def _next_word_log_probs(self, words: list[str]) -> torch.Tensor:
        """The forward LM's next-word distribution after the last NEXT_TOKEN_WORDS words (it was trained on
        windows of tens of words; a page of text before them changes nothing but the time)."""
        with torch.inference_mode():
            return self.model.next_word_log_probs(self._chars(words[-NEXT_TOKEN_WORDS:]))

    def fill_mask(self, text: str, k: int = 10) -> list[MaskCandidates]:
        """The [MASK]'s likeliest words from both sides (engine.handles.elmo_blank): the forward LM's guess from the
        words before it times the backward LM's from the words after it."""
        from engine.handles.elmo_blank import elmo_fill_mask

        return elmo_fill_mask(self, text, k)

    def logit_lens(self, text: str, k: int = 10) -> LogitLens:
        """Each layer's next word after the text's last word, read through the forward LM's softmax (the lens
        grid's last column: engine.handles.elmo_lens)."""
        from engine.handles.elmo_lens import elmo_logit_lens

        return elmo_logit_lens(self, text, k, NEXT_TOKEN_WORDS)

    def lens_grid(self, text: str, k: int = 5, lens: str = "logit") -> LensGrid:
        """Every layer's next word at every word (engine.handles.elmo_lens): the logit lens through the softmax
        of the forward LM; with a [MASK], every layer's word at every word from both LMs, as the blank is filled
        (``elmo_blank_grid``). No tuned lens is trained for ELMo."""
        from engine.handles.elmo_lens import elmo_blank_grid, elmo_lens_grid

        if lens == "tuned":
            raise Unsupported(f"{self.name} (ELMo) has no tuned lens: tuned lenses are trained for Transformers; its "
                              "logit lens reads each layer through the softmax of its forward LM")
        if lens != "logit":
            raise InputError(f"no lens '{lens}' (logit or tuned)")
        if MASK_TEXT in text:  # the masked view's: both LMs at every word, as the blank is filled
            return elmo_blank_grid(self, text, k)
        return elmo_lens_grid(self, text, k)

    def causal_trace(self, text: str, subject: str, samples: int = 3, contrast: str | None = None) -> CausalTrace:
        """Why the forward LM's next word comes (engine.handles.elmo_trace): the subject's word vectors noised (or
        the text run as ``contrast``), each layer's state at each word put back in turn."""
        from engine.handles.elmo_blank_trace import elmo_blank_trace
        from engine.handles.elmo_trace import elmo_causal_trace

        if MASK_TEXT in text:  # the masked view's blank: each word's state in the LM that reads it on its way there
            return elmo_blank_trace(self, text, subject, samples, contrast)
        return elmo_causal_trace(self, text, subject, samples, contrast)

    def token_attribution(self, text: str, target: str | None = None, foil: str | None = None) -> Attribution:
        """Which of the text's words the forward LM's next word rests on, or its [MASK] filled by both LMs
        (engine.handles.word_attribution, engine.handles.elmo_blank): each word's character-CNN vector faded in from
        the model's average word."""
        from engine.handles.elmo_blank import blank_input
        from engine.handles.word_attribution import elmo_input, word_attribution

        read = blank_input(self, text) if MASK_TEXT in text else elmo_input(self, text, ATTRIBUTION_WORDS)
        return word_attribution(self, text, read, self.word_list.find, self.word_list, target, foil)

    def missing(self, capability: Capability) -> str:
        if capability is Capability.ATTENTION:
            return (f"{self.name} (ELMo) has no attention: it is a bidirectional LSTM; only Transformers "
                    "(GPT, BERT) have attention heads")
        if capability is Capability.MASKED_LM:
            return (f"{self.name} (ELMo) has no masked-LM head: it was trained to predict each next word and each "
                    "word before, and fills a [MASK] with those two LMs")
        return super().missing(capability)

    def attention(self, sentence_or_pair: Any) -> Any:
        raise Unsupported(f"{self.name} (ELMo) has no attention: it is a bidirectional LSTM; only Transformers "
                          "(GPT, BERT) have attention heads")


def load_elmo(run_dir: Path, config: dict) -> ElmoHandle:
    from engine.handles.transformer import expected_shapes
    from engine.models.elmo import BiLM

    cfg = config_from_dict("elmo", config["model"])
    vocab = Vocab.load(run_dir / "vocab.txt")
    model = BiLM(cfg, len(vocab))
    tensors = read_tensors(run_dir, config, expected_shapes(model))
    model.load_state_dict({k: v.float() for k, v in tensors.items()})
    info = run_info(run_dir, config)
    info.update({"layers": cfg.layers + 1, "vector_layers": cfg.layers + 1, "dim": 2 * cfg.proj, "preset": cfg.preset,
                 "parameters": sum(p.numel() for p in model.parameters())})
    return ElmoHandle(run_dir.name, str(run_dir), info, model, vocab, pick_device())
