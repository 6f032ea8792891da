"""English function words: articles, pronouns, prepositions, conjunctions, auxiliaries and a few adverbs — the
words every sentence shares and no one means when they ask what a sentence's word means. Used to pick the word two
typed sentences have in common ("bank", not "the"). Torch-free: the explorer reads it on the GUI thread."""

from __future__ import annotations

_LISTED = """
a an the this that these those some any no every each either neither all both several many much more most
few fewer less least other another such what which whose whatever whichever
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself it its itself they them their theirs themselves who whom someone anyone everyone nobody somebody
anybody everybody something anything everything nothing
of in on at by for with about against between into through during before after above below to from up down out off
over under again further across along among around behind beside besides beyond since toward towards
upon within without via per than onto
and or but nor so yet if then else because although though while whereas unless until whether as once when where
why how
be am is are was were been being have has had having do does did doing will would shall should can could may might
must ought
not n't 's 're 've 'll 'd 'm very too also just only even still already there here now then ever never always often
quite rather really
"""
FUNCTION_WORDS = frozenset(_LISTED.split())


def is_function_word(word: str) -> bool:
    """Whether ``word`` (any case) is one of ``FUNCTION_WORDS``."""
    return word.lower() in FUNCTION_WORDS
