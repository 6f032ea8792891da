"""Errors the engine raises on purpose; each message is meant to be shown to a user as is."""


class Word2BertError(Exception):
    """Base class: a problem the user can act on (bad input, bad file), not a bug."""


class UnknownWord(Word2BertError, KeyError):
    def __init__(self, word: str, model: str = "this model") -> None:
        super().__init__(word)
        self.word = word
        self.model = model

    def __str__(self) -> str:
        return f"'{self.word}' is not in the vocabulary of {self.model}"


class Unsupported(Word2BertError):
    """The model cannot serve this query (e.g. fill_mask on word2vec)."""


class CheckpointError(Word2BertError):
    """A run folder or vectors file is missing, truncated, foreign, unsafe or from a newer version."""


class SaveError(CheckpointError):
    """A checkpoint could not be written (a full disk, no permission); the previous one is intact."""


class CorpusError(Word2BertError):
    """A corpus is missing, empty, unreadable, or has no word above min_count."""


class InputError(Word2BertError):
    """Text given to a query is empty, too long or otherwise unusable."""


class Cancelled(Word2BertError):
    """A long job or query was cancelled (a newer request superseded it, or the user pressed Stop);
    nothing was saved."""
