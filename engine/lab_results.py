"""What the lab's queries return (engine.api.lens_grid, engine.api.causal_trace, engine.api.token_attribution):
numpy arrays and frozen dataclasses on the CPU, like engine.results."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# what colours a lens grid's cells; each is an array of LensGrid
LENS_MEASURES = {
    "probability": "the top prediction's probability",
    "entropy": "entropy of the layer's distribution (nats): low = sure",
    "kl": "KL divergence from the final layer's distribution (nats): 0 = the final answer already",
    "rank": "rank of the actual token (1 = the top prediction)",
}


@dataclass(frozen=True)
class LensGrid:
    """What every layer predicts at every position, each layer's state read through the model's own
    output head (the logit lens) or first through that layer's trained translator (the tuned lens).

    Row 0 is the embedding layer, the last row the model's own prediction. A masked LM predicts, at each
    position, the token there (at a [MASK]: the hidden one); a left-to-right LM the token after it."""

    text: str
    lens: str  # "logit" or "tuned"
    objective: str  # "masked" or "causal"
    tokens: tuple[str, ...]  # the model's tokens, special ones included
    special: tuple[bool, ...]  # per token: a special token the model adds ([CLS], [SEP], BOS)
    targets: tuple[str | None, ...]  # per position: the actual token to predict (None: unknown or none)
    top_tokens: tuple[tuple[tuple[str, ...], ...], ...]  # [layer][position]: the k best, best first
    top_probs: np.ndarray  # (layers + 1, T, k)
    entropy: np.ndarray  # (layers + 1, T) nats
    kl: np.ndarray  # (layers + 1, T) KL(final || layer), nats
    rank: np.ndarray  # (layers + 1, T) rank of the target, 1 = top; nan where there is no target
    notice: str = ""

    @property
    def layers(self) -> int:
        return int(self.entropy.shape[0])

    def measure(self, name: str) -> np.ndarray:
        """(layers + 1, T) values of one of LENS_MEASURES."""
        if name == "probability":
            return self.top_probs[..., 0]
        if name in ("entropy", "kl", "rank"):
            return getattr(self, name)
        raise ValueError(f"no lens measure '{name}' (there are {', '.join(LENS_MEASURES)})")


MIN_LOST = 0.01  # a trace whose noise cost the prediction less probability than this explains nothing


@dataclass(frozen=True)
class CausalTrace:
    """Why a prediction happens (Meng et al. 2022): the subject's token embeddings are noised, then one
    layer's state at one position is restored from the clean run; ``restored[l, t]`` is the probability
    of the clean prediction afterwards (row 0: the embedding of token t left un-noised)."""

    text: str
    tokens: tuple[str, ...]
    subject: tuple[int, ...]  # positions whose embeddings are noised
    position: int  # where the prediction is read (the [MASK], or the last token)
    target: str  # the clean run's prediction there
    p_clean: float
    p_corrupt: float  # the mean over noise samples, nothing restored
    restored: np.ndarray  # (layers + 1, T)
    samples: int
    noise: float  # the noise's standard deviation (0 with a contrast sentence)
    contrast: str = ""  # the sentence run instead of noise (activation patching); "" = the subject noised
    contrast_tokens: tuple[str, ...] = ()

    @property
    def informative(self) -> bool:
        """Whether the noise cost the prediction enough probability for restoring to show anything."""
        return self.p_clean - self.p_corrupt >= MIN_LOST

    @property
    def effect(self) -> np.ndarray:
        """(layers + 1, T): the share of the probability lost to the noise that restoring brings back
        (0 = nothing, 1 = all of it)."""
        lost = self.p_clean - self.p_corrupt
        if lost < MIN_LOST:  # the noise did not hurt the prediction: there is nothing to bring back
            return np.zeros_like(self.restored)
        return (self.restored - self.p_corrupt) / lost


ATTRIBUTION_METHODS = {
    "integrated gradients": "each embedding faded in from zero, the gradient averaged along the way, times the "
                            "embedding: the scores add up to the change of the explained log-probability",
    "gradient × input": "the gradient at the text times the embedding: a first-order guess of each token's share",
    "gradient norm": "how much the explained log-probability moves when the token's embedding does: a size, no sign",
}


@dataclass(frozen=True)
class Attribution:
    """Which tokens a prediction rests on (LIT's salience): per method of ``ATTRIBUTION_METHODS``, one score
    per token of the explained quantity, log P(target) at ``position`` (less log P(foil) with a foil). The
    special tokens and the [MASK] are not attributed (0)."""

    text: str
    tokens: tuple[str, ...]
    fixed: tuple[bool, ...]  # per token: kept as it is (a special token, the [MASK]), not attributed
    position: int  # where the prediction is read (the [MASK], or the last token)
    target: str
    p_target: float
    foil: str  # "" without one
    p_foil: float  # nan without a foil
    scores: dict[str, np.ndarray]  # method -> (T,)
    f_input: float  # the explained quantity at the text
    f_baseline: float  # ... with every attributed token's input vector at the baseline (zero; ELMo's: its average word)
    steps: int  # integrated gradients' steps along the line
    notice: str = ""
    words: tuple[str, ...] = ()  # the text's words as the model read them ([MASK] one of them)
    word_of: tuple[int, ...] = ()  # per token: its word's index in ``words``; -1 for a special token

    @property
    def word_position(self) -> int:
        """The word where the prediction is read (the [MASK], or the last word)."""
        return self.word_of[self.position] if self.word_of and self.word_of[self.position] >= 0 else len(self.words) - 1

    def word_scores(self, method: str) -> np.ndarray:
        """(words,): each word's tokens' scores added up (integrated gradients keep adding up to the change; the
        gradient's norm adds its pieces' sizes)."""
        out = np.zeros(len(self.words), np.float32)
        for t, w in enumerate(self.word_of):
            if w >= 0:
                out[w] += self.scores[method][t]
        return out

    @property
    def explained(self) -> str:
        """What the scores explain, in words."""
        return explained(self.target, self.foil)

    @property
    def gap(self) -> float:
        """How far integrated gradients' scores miss the change from the faded-out text to the text."""
        return float(self.scores["integrated gradients"].sum()) - (self.f_input - self.f_baseline)


@dataclass(frozen=True)
class HeadAblation:
    """Which attention heads a prediction needs: ``effect[l, h]`` is what knocking out head h of layer l (its output
    replaced by its mean over the text's tokens) costs the explained quantity, log P(target) at ``position``
    (less log P(foil) with a foil): positive where the head pushed the prediction up."""

    text: str
    tokens: tuple[str, ...]
    position: int  # where the prediction is read (the [MASK], or the last token)
    target: str
    p_target: float
    foil: str  # "" without one
    p_foil: float  # nan without a foil
    value: float  # the explained quantity with every head in place
    effect: np.ndarray  # (layers, heads)
    p_ablated: np.ndarray  # (layers, heads): P(target) with that head knocked out
    notice: str = ""
    mean_over: str = "text"  # what a knocked-out head's output was replaced by: its mean over the "text" or the
    # "corpus", or its output on a "contrast" sentence
    contrast: str = ""  # that sentence
    direct: DirectEffects | None = None  # each head's direct effect on the logits, read from the same text
    direct_refusal: str = ""  # why there is none (a post-LN network)

    @property
    def explained(self) -> str:
        """What the effects are of, in words."""
        return explained(self.target, self.foil)

    def strongest(self, n: int = 3) -> list[tuple[int, int, float]]:
        """The ``n`` heads (layer, head, effect) whose removal costs the prediction the most."""
        return strongest_cells(self.effect, n)


@dataclass(frozen=True)
class DirectEffects:
    """Each attention head's direct effect on the prediction (direct logit attribution, as TransformerLens's
    ``decompose_resid``): in a pre-LN network the residual stream the head reads at the end is a sum of every head's
    output, the embeddings' and the MLPs'; each part read through the head with the final norm's scale held at the
    text's gives ``effect[l, h]``, in logits: logit(target) − logit(foil) with a foil (which is log P(target) −
    log P(foil)), else logit(target) less the mean of all the vocabulary's logits. ``rest`` is the other parts'
    (the token's embedding, each layer's MLP, the attention's biases and the final norm's); ``effect.sum() + rest ==
    value``."""

    target: str
    foil: str  # "" without one
    value: float  # the model's own logit difference (or centred logit) at the position
    effect: np.ndarray  # (layers, heads)
    mlps: np.ndarray  # (layers,): each block's MLP output's direct effect
    embedding: float  # the token's own embedding's (with its position's), at the position read
    biases: float  # the attention's output biases', the final norm's bias's and the head's

    @property
    def rest(self) -> float:
        """What is not a head's: the embedding, the MLPs, the biases."""
        return float(self.mlps.sum()) + self.embedding + self.biases

    @property
    def explained(self) -> str:
        """What the effects are of, in words."""
        return logits_explained(self.target, self.foil)

    def strongest(self, n: int = 3) -> list[tuple[int, int, float]]:
        """The ``n`` heads (layer, head, effect) that write the most for the target."""
        return strongest_cells(self.effect, n)


@dataclass(frozen=True)
class MlpNeurons:
    """What one layer's MLP writes straight into the logits, neuron by neuron: ``effect[n]`` is neuron n's
    activation times its column of the MLP's output projection, read as ``DirectEffects`` reads a head; with
    ``bias`` they add up to that MLP's cell of the direct table."""

    layer: int  # from 0
    target: str
    foil: str
    effect: np.ndarray  # (neurons,)
    activation: np.ndarray  # (neurons,): each neuron's output at the position (the projection's input)
    bias: float

    @property
    def total(self) -> float:
        return float(self.effect.sum()) + self.bias

    @property
    def explained(self) -> str:
        return logits_explained(self.target, self.foil)

    def strongest(self, n: int = 10) -> list[int]:
        """The ``n`` neurons that write the most, for the target or against it, largest |effect| first."""
        return [int(i) for i in np.argsort(-np.abs(self.effect))[:n]]


@dataclass(frozen=True)
class NeuronExample:
    """One sentence where a neuron fires: its tokens and the neuron's output at each (the MLP output projection's
    input there; 0 at the model's own special tokens, which are not read)."""

    text: str
    tokens: tuple[str, ...]
    special: tuple[bool, ...]
    activation: np.ndarray  # (tokens,)
    cut: bool = False  # the sentence goes on past the tokens read

    @property
    def peak(self) -> int:
        """Where it fires most (of the text's own tokens)."""
        return int(np.argmax(np.where(np.array(self.special, bool), -np.inf, self.activation)))


@dataclass(frozen=True)
class NeuronExamples:
    """What makes one MLP neuron fire (the sentences of a corpus where its output is highest, as Neuroscope and
    Bills et al. 2023 show a neuron) and, where the network is pre-LN, what it writes straight into the logits at
    its highest: the tokens its output column pushes up and down, read through the final norm (its scale held at
    that token's) and the head."""

    layer: int  # from 0
    neuron: int
    neurons: int  # the layer's MLP width
    examples: tuple[NeuronExample, ...]  # highest first
    sentences: int  # the corpus's sentences read
    tokens: int  # their tokens (special tokens not counted)
    mean: float  # its mean output over those tokens
    fires: float  # the share of those tokens where its output is above 0
    corpus: str
    promotes: tuple[tuple[str, float], ...] = ()  # (token, logit it adds at its highest), most first
    suppresses: tuple[tuple[str, float], ...] = ()  # (token, logit it takes away), most first
    writes_refusal: str = ""  # why there are no promoted or suppressed tokens (a post-LN network)

    @property
    def highest(self) -> float:
        return float(self.examples[0].activation[self.examples[0].peak]) if self.examples else float("nan")


@dataclass(frozen=True)
class WordNeurons:
    """The neurons of one layer's MLP most selective for a word in a corpus: their output at the word's tokens
    against their output at the other tokens of the same sentences, in units of its spread there."""

    word: str
    layer: int  # from 0
    neurons: np.ndarray  # (k,) most selective first
    selectivity: np.ndarray  # (k,) (mean at the word − mean elsewhere) / spread elsewhere
    at_word: np.ndarray  # (k,) mean output at the word's tokens
    elsewhere: np.ndarray  # (k,) mean output at the sentences' other tokens
    fires: np.ndarray  # (k,) share of the word's tokens where it is above 0
    tokens: int  # the word's tokens read
    sentences: int
    corpus: str


@dataclass(frozen=True)
class HeadPositions:
    """Where one attention head matters: ``effect[t]`` is what knocking out head ``head`` of ``layer`` at token t
    alone (its output there replaced by its mean over the text's tokens) costs the explained quantity, as
    ``HeadAblation`` measures it; ``every`` is its knock-out at every token together (``HeadAblation``'s cell)."""

    text: str
    tokens: tuple[str, ...]
    position: int  # where the prediction is read (the [MASK], or the last token)
    layer: int  # from 0
    head: int
    target: str
    p_target: float
    foil: str  # "" without one
    p_foil: float  # nan without a foil
    value: float  # the explained quantity with every head in place
    effect: np.ndarray  # (tokens,)
    every: float
    notice: str = ""
    mean_over: str = "text"  # what the head's output was replaced by: its mean over the "text" or the "corpus", or
    # its output on a "contrast" sentence
    contrast: str = ""  # that sentence

    @property
    def explained(self) -> str:
        """What the effects are of, in words."""
        return explained(self.target, self.foil)

    @property
    def strongest(self) -> int:
        """The token where knocking the head out costs the prediction most."""
        return int(np.argmax(self.effect))


def strongest_cells(effect: np.ndarray, n: int) -> list[tuple[int, int, float]]:
    """The ``n`` largest cells of a (layers, heads) table: (layer, head, value), largest first."""
    order = np.argsort(-effect, axis=None)[:n]
    heads = effect.shape[1]
    return [(int(i) // heads, int(i) % heads, float(effect.flat[i])) for i in order]


def logits_explained(target: str, foil: str) -> str:
    """The quantity direct effects are of, in words: logit(target) − logit(foil), or less the mean logit."""
    if foil:
        return f"logit('{target.strip()}') − logit('{foil.strip()}')"
    return f"logit('{target.strip()}') − the mean logit"


def explained(target: str, foil: str) -> str:
    """The quantity a lab page explains, in words: log P(target), less log P(foil) with a foil."""
    if foil:
        return f"log P('{target.strip()}') − log P('{foil.strip()}')"
    return f"log P('{target.strip()}')"
