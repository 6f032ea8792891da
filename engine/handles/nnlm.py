"""The NNLM's handle (Bengio et al. 2003): a word-level language model with static word vectors (BaseHandle),
which also says which words of its window its next word rests on (engine.handles.word_attribution)."""

from __future__ import annotations

from typing import Any

from engine.handles.base import BaseHandle
from engine.lab_results import Attribution


class NnlmHandle(BaseHandle):
    def __init__(self, name: str, path: str, info: dict[str, Any], model: Any, index: dict[str, int],
                 words: list[str], **kwargs: Any) -> None:
        super().__init__("nnlm", name, path, info, **kwargs)
        self.model, self._index, self._words = model, index, words

    def token_attribution(self, text: str, target: str | None = None, foil: str | None = None) -> Attribution:
        """Which of the words in the NNLM's window its next word rests on: each word's feature vector C(w) faded
        in from zero; the words before the window score 0."""
        from engine.handles.word_attribution import nnlm_input, word_attribution

        find = self._index.get
        return word_attribution(self, text, nnlm_input(self, text, self.model, find), find, self._words, target, foil)
