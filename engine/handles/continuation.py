"""How a left-to-right model's continuation of a text is chosen and written out, for every family that
continues text (Transformers token by token, ELMo's forward LM word by word).

* **Where it stops.** A model that marks the end of a text (GPT-2's ``<|endoftext|>``, the separator our
  GPT reads between documents) ends the continuation there. A token that starts a new sentence inside a text
  (the ``[CLS]`` a MiniLM made a GPT here reads before each sentence, ELMo's ``</s> <s>``) is a sentence
  break: the continuation goes on after it, written as a space. Tokens that stand for no text at all
  (``[UNK]``, ``<unk>``, padding, ``[MASK]``, ``[SEP]``) are never chosen.
* **How it reads.** Sub-words and words are joined the way text is written: no space before a full stop or a
  comma, "i ' m" as "i'm" (Hugging Face's ``clean_up_tokenization`` rules, and ";" ":"), quotes around what
  they quote. Our GPT read the sentences of a document one after another with no space between them (as
  trained before 2026-12-06; a run since says ``sentences_spaced`` in its config), so where such a GPT starts a
  sentence straight after a full stop the space is put back ("future.i think" -> "future. i think"); a single
  letter after a full stop is not a sentence ("u.s.", "e.g.").
* **No loops.** Asked to, a continuation never repeats a run of ``NO_REPEAT`` tokens (words) already in the text
  (``repeats``): greedy decoding's habit of saying one phrase over and over cannot start.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.data.text import word_spans
from engine.models.ngram import BOS, EOS, UNK

_CLEAN = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ;", ";"), (" :", ":"), (" ' ", "'"),
          (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"), (" 'll", "'ll"),
          (" 'd", "'d"))
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*$")
_SENTENCE_START = re.compile(r"^(?:[A-Za-z]{2}|[AaIi](?![A-Za-z]))")


def clean_spaces(text: str) -> str:
    """Words or sub-words joined by spaces, written as text: "end of the day ." -> "end of the day."; a
    double quote standing alone opens and closes in turn: 'he said , " i know . "' -> 'he said, "i know."'."""
    parts = (" " + text + " ").split(' " ')  # quotes first (a quote that opens the text opens too; '" .' closes)
    text = parts[0] + "".join((' "' if n % 2 == 0 else '" ') + part for n, part in enumerate(parts[1:]))
    text = text[1:-1] if text.endswith(" ") else text[1:]
    for spaced, written in _CLEAN:
        text = text.replace(spaced, written)
    return text


def starts_glued_sentence(before: str, token: str) -> bool:
    """Whether ``token`` (a byte-level token's text, no leading space) starts a sentence glued to ``before``."""
    return bool(_SENTENCE_END.search(before)) and bool(_SENTENCE_START.match(token))


@dataclass(frozen=True)
class TokenRoles:
    """What a model's special tokens do in a continuation (ids)."""
    stop: frozenset[int]  # the text ends: the continuation stops (the token is not written)
    breaks: frozenset[int]  # a new sentence starts: written as a space, the continuation goes on
    banned: tuple[int, ...]  # never chosen (no text): unknown word, padding, [MASK], [SEP], …


def token_roles(specials: list[int], start: tuple[int, ...], end_of_text: int | None) -> TokenRoles:
    """``specials``: the tokenizer's special tokens; ``start``: the tokens a query's text begins with (a
    sentence's start for a model that read one after each); ``end_of_text``: the token that ends a text."""
    stop = frozenset({end_of_text} if end_of_text is not None else ())
    breaks = frozenset(start) - stop
    banned = tuple(sorted(set(specials) - stop - breaks))
    return TokenRoles(stop, breaks, banned)


def written(adapter: Any, token_text: Callable[[int], str], new: list[int], breaks: frozenset[int]) -> str:
    """A Transformer's generated ids as text, a space at each sentence break; ``token_text`` gives one token's text
    as the model's view shows it."""
    segments: list[list[int]] = [[]]
    for i in new:
        if i in breaks:
            segments.append([])
        else:
            segments[-1].append(i)
    text = _segment_text(adapter, token_text, segments[0])
    for ids in segments[1:]:
        part = _segment_text(adapter, token_text, ids)
        text += part if part[:1].isspace() or not part else " " + part
    return text


def _segment_text(adapter: Any, token_text: Callable[[int], str], ids: list[int]) -> str:
    """Tokens of one sentence as text: byte-level decoded together (a character may take several tokens), an
    older GPT of ours's glued sentences parted; SentencePiece's "▁" as spaces; WordPiece's "##" joined, then the
    spaces before punctuation taken out."""
    tok = adapter.tokenizer
    if adapter.byte_level:
        if not getattr(adapter, "glued_sentences", False):  # (only our GPT's adapter has it)
            return tok.decode(ids, skip_special_tokens=False)
        runs: list[list[int]] = [[]]  # (it read a document's sentences with no space between them)
        for i in ids:
            if runs[-1] and starts_glued_sentence(tok.decode(runs[-1][-1:]), tok.decode([i])):
                runs.append([])
            runs[-1].append(i)
        return " ".join(tok.decode(run, skip_special_tokens=False) for run in runs)
    if adapter.metaspace:  # "▁Old" "ander" -> " Oldander" (the decoder drops a text's first space)
        return "".join(token_text(i) for i in ids)
    pieces = [token_text(i) for i in ids]  # WordPiece: "##" joins to the previous piece
    return clean_spaces("".join(p[2:] if p.startswith("##") else " " + p for p in pieces))


TOP_P = 0.95  # a sampled token comes from the likeliest tokens that together hold this much probability


NO_REPEAT = 3  # the app's continuations never repeat a run of this many tokens (words) already in the text


def repeats(history: Sequence[Any], n: int, keep: Container[Any] = ()) -> list[Any]:
    """The tokens that would repeat a run of ``n`` already in ``history``: each that followed the last ``n`` − 1
    before (no_repeat_ngram_size of fairseq and Hugging Face's generate; greedy decoding's loops, "go to the gym
    and go to the gym and …", cannot start). ``keep``: never counted as a repeat (a sentence's end: a model may
    end every sentence). ``n`` ≤ 0: none."""
    if n <= 0 or len(history) < n:
        return []
    tail = list(history[len(history) - n + 1:])
    return [history[i + n - 1] for i in range(len(history) - n + 1)
            if list(history[i:i + n - 1]) == tail and history[i + n - 1] not in keep]


def choose(logits: np.ndarray, temperature: float, rng: np.random.Generator, banned: tuple[int, ...] | list[int],
           avoid: Sequence[int] = ()) -> int:
    """The next token from a row of logits (or log-probabilities): the likeliest at temperature 0, else drawn
    from the softmax at ``temperature`` among the likeliest tokens that hold TOP_P of it (nucleus sampling,
    Holtzman et al. 2020: a small model's long tail of unlikely tokens is where its gibberish comes from);
    ``banned`` ids never; ``avoid`` ids (``repeats``) not while any other token is left."""
    scores = np.asarray(logits, dtype=np.float64).copy()
    if len(banned):
        scores[list(banned)] = -np.inf
    if len(avoid):
        allowed = scores.copy()
        scores[list(avoid)] = -np.inf
        if not np.isfinite(scores).any():
            scores = allowed
    if temperature <= 0:
        return int(np.argmax(scores))
    scaled = scores / temperature
    p = np.exp(scaled - scaled.max())
    p /= p.sum()
    order = np.argsort(-p, kind="stable")
    kept = order[: int(np.searchsorted(np.cumsum(p[order]), TOP_P)) + 1]
    return int(kept[rng.choice(len(kept), p=p[kept] / p[kept].sum())])


# ---------------------------------------------------------------- word-level models (n-gram, NNLM, ELMo)

@dataclass(frozen=True)
class NextWords:
    """A word-level model's next-word distribution: ``log_probs(context)`` -> log p of each of ``words`` (its
    vocabulary, </s> included), where ``context`` is the words so far, each sentence after the first begun with
    </s> <s> (``context_words``); ``banned``: the ids never written (<unk>, <s>)."""
    words: Sequence[str]
    log_probs: Callable[[list[str]], np.ndarray]
    banned: tuple[int, ...]


def next_words(words: Sequence[str], find: Callable[[str], int | None],
               log_probs: Callable[[list[str]], np.ndarray]) -> NextWords:
    return NextWords(words, log_probs, tuple(i for w in (UNK, BOS) if (i := find(w)) is not None))


def context_words(text: str, lowercase: bool) -> list[str]:
    """The text's words as a word-level model reads them: each sentence after the first begun with </s> <s>, as
    in training (the first's <s> is the model's own)."""
    from engine.data.corpora import split_sentences

    words: list[str] = []
    for sentence in split_sentences(text, typed=True) or [text]:
        shown = [sentence[a:b] for a, b in word_spans(sentence)]
        if shown and words:
            words += [EOS, BOS]
        words += [w.lower() for w in shown] if lowercase else shown
    return words


def last_sentence(context: list[str]) -> list[str]:
    """The words of the sentence begun last (a model that reads one sentence at a time: n-gram, NNLM)."""
    return context[len(context) - context[::-1].index(BOS):] if BOS in context else context


def continue_words(model: NextWords, context: list[str], tokens: int, temperature: float, seed: int,
                   no_repeat: int = 0) -> str:
    """Up to ``tokens`` words after ``context``; where the model ends a sentence it goes on with the next; no run
    of ``no_repeat`` words repeated (``repeats``; 0: any)."""
    rng = np.random.default_rng(seed)
    context = list(context)
    before = context[-1] if context and context[-1] not in (EOS, BOS) else "."  # (nothing begun: no break to see)
    sentences: list[list[str]] = [[]]
    ids = {w: i for i, w in enumerate(model.words)} if no_repeat > 0 else {}
    for _ in range(max(1, min(int(tokens), 200))):
        avoid = [ids[w] for w in repeats(context, no_repeat, keep=(EOS, BOS)) if w in ids]
        word = model.words[choose(model.log_probs(context), temperature, rng, model.banned, avoid)]
        if word == EOS:
            context += [EOS, BOS]
            sentences.append([])
        else:
            context.append(word)
            sentences[-1].append(word)
    return ended_sentences(before, [clean_spaces(" " + " ".join(words)) if words else "" for words in sentences])


SENTENCE_FINAL = (".", "!", "?", "…", '"', "'", ")")
SENTENCE_BREAK = " /"  # where a word-level model ended a sentence with no full stop (as a line break is quoted)


def ended_sentences(before: str, pieces: list[str]) -> str:
    """A word-level model's continuation, sentence by sentence (``pieces[0]`` goes on with the text, whose last
    word is ``before``; each later one follows an end of sentence the model chose): a sentence it ended without
    punctuation — as conversation is typed, "im alright" — is marked with " /", else "the program i think …"
    ran two sentences together unseen."""
    out, last = "", before
    for k, piece in enumerate(pieces):
        if k and piece and not last.endswith(SENTENCE_FINAL):
            out += SENTENCE_BREAK
        out += piece
        if piece.strip():
            last = piece.rstrip()
    return out
