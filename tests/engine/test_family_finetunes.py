"""A network family declared in the test alone — its settings, its pretraining run, its loader and its
encoder for fine-tuning, one ``register`` call — is pretrained, saved, loaded, queried and then
fine-tuned, saved and loaded again through the public API, like BERT: no engine file names it."""

import dataclasses
import random
from collections import Counter

import numpy as np
import pytest
import torch
from torch import nn

from engine import api, families
from engine.checkpoints.reading import read_tensors
from engine.checkpoints.saves import save_run
from engine.config.run_spec import RunSpec
from engine.data.inputs import Encoded, Specials, assemble
from engine.data.keyed_vectors import StaticVectors
from engine.data.text import word_spans
from engine.finetune.encoders import Encoder, EncoderMaker
from engine.finetune.spec import FinetuneSpec
from engine.handles.base import BaseHandle, run_info
from tests.conftest import FRAMES, TOPICS

PAD, UNK = "<pad>", "<unk>"


@dataclasses.dataclass
class BagConfig:
    """Word vectors from the words around each word (a count-based toy), used as a bag-of-words encoder."""

    dim: int = 8
    window: int = 2
    seed: int = 0


class BagNet(nn.Module):
    def __init__(self, cfg: BagConfig, vocab_size: int) -> None:
        super().__init__()
        self.cfg = cfg
        self.emb = nn.Embedding(vocab_size, cfg.dim)


def run_bag(ctx):
    cfg = ctx.spec.model
    sentences = list(ctx.sentences("train", True))
    counts = Counter(w for s in sentences for w in s)
    vocab = [PAD, UNK, *sorted(counts)]
    index = {w: i for i, w in enumerate(vocab)}
    yield ctx.started(sum(counts.values()), "words", {"vocabulary_size": len(vocab)})
    cooc = np.zeros((len(vocab), len(vocab)))
    for s in sentences:
        for i, w in enumerate(s):
            for c in s[max(0, i - cfg.window):i]:
                cooc[index[w], index[c]] += 1
                cooc[index[c], index[w]] += 1
    u, sv, _ = np.linalg.svd(np.log1p(cooc))  # the reduced co-occurrence rows are the vectors
    vectors = (u[:, :cfg.dim] * sv[:cfg.dim]).astype(np.float32)
    ctx.step = 1
    yield ctx.step_metrics(0, sum(counts.values()), 0.0, 0.0)
    config = {"model": dataclasses.asdict(cfg), "corpus": ctx.corpus.name, "trained_steps": 1,
              "vocabulary_size": len(vocab)}
    save_run(ctx.run_dir, "bag", config, {"emb.weight": vectors},
             files={"vocab.txt": lambda path: path.write_text("\n".join(vocab) + "\n", encoding="utf-8")})
    yield ctx.saved()
    yield ctx.finished("completed")


def _read_vocab(run_dir):
    return (run_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]


def load_bag(run_dir, config):
    from engine.config.checks import config_from_dict

    vocab = _read_vocab(run_dir)
    network = BagNet(config_from_dict("bag", config["model"]), len(vocab))
    network.load_state_dict({k: v.float() for k, v in read_tensors(run_dir, config).items()})
    handle = BaseHandle("bag", run_dir.name, str(run_dir), run_info(run_dir, config),
                        vectors=StaticVectors(vocab[2:], network.emb.weight.detach().cpu().numpy()[2:]))
    handle.network, handle.vocab = network, vocab
    return handle


class BagEncoder(Encoder):
    """Each word's vector, the sentence's mean: what fine-tuning needs of a family, and no more."""

    kind = "bag"

    def __init__(self, network, vocab):
        super().__init__()
        self.network, self.vocab = network, vocab
        self.index = {w: i for i, w in enumerate(vocab)}
        self.dim, self.max_len, self.n_layers = network.cfg.dim, 64, 0

    def encode(self, text, pair=None, max_len=None, truncate_first=True) -> Encoded:
        class Words:
            def __init__(self, words, offsets, index):
                self.ids = [index.get(w.lower(), 1) for w in words]
                self.word_ids, self.offsets = list(range(len(words))), offsets

        def words_of(t):
            spans = word_spans(t)
            return Words([t[a:b] for a, b in spans], spans, self.index)

        a = Words(text, [(0, 0)] * len(text), self.index) if isinstance(text, list) else words_of(text)
        b = words_of(pair) if pair is not None else None
        return assemble(a, b, Specials((), (), (), 0), min(max_len or self.max_len, self.max_len), truncate_first)

    def features(self, ids, segments, mask):
        return self.network.emb(ids)

    def pooled(self, states, mask):
        m = mask[..., None].to(states.dtype)
        return (states * m).sum(1) / m.sum(1).clamp(min=1)

    def files(self):
        return {"vocab.txt": lambda path: path.write_text("\n".join(self.vocab) + "\n", encoding="utf-8")}


def _bag_from_folder(run_dir, base):
    from engine.config.checks import config_from_dict

    vocab = _read_vocab(run_dir)
    return BagEncoder(BagNet(config_from_dict("bag", base["model"]), len(vocab)), vocab)


BAG_ENCODER = EncoderMaker(lambda handle: BagEncoder(handle.network, handle.vocab), _bag_from_folder)


@pytest.fixture
def bag_family():
    families.register(families.Family("bag", BagConfig, f"{__name__}:run_bag", f"{__name__}:load_bag",
                                      description="bag-of-words vectors (a test's)",
                                      encoder=f"{__name__}:BAG_ENCODER"))
    yield
    families.unregister("bag")


def test_a_network_family_declared_in_a_test_is_pretrained_queried_and_fine_tuned(bag_family, topic_corpus,
                                                                                   tmp_path):
    assert "bag" in api.model_kinds()
    events = list(api.train(RunSpec("bag", out=str(tmp_path / "bag"), corpus=str(topic_corpus))))
    assert isinstance(events[-1], api.RunFinished) and events[-1].status == "completed", events[-1]
    handle = api.load(tmp_path / "bag")
    assert api.Capability.STATIC in handle.capabilities
    topic_of = {w: t for t, words in TOPICS.items() for w in words}
    near = [n.word for n in handle.static_neighbours("mango", 3)]
    assert sum(topic_of.get(w) == "fruit" for w in near) >= 2, near  # its vectors put fruit by fruit

    rng = random.Random(0)
    rows = []
    for _ in range(150):
        topic = rng.choice(list(TOPICS))
        rows.append((rng.choice(FRAMES[topic]).format(rng.choice(TOPICS[topic])), topic))
    task = tmp_path / "topics.tsv"
    task.write_text("text\tlabel\n" + "".join(f"{t}\t{lab}\n" for t, lab in rows), encoding="utf-8")
    spec = FinetuneSpec(model=str(tmp_path / "bag"), task=str(task), out=str(tmp_path / "ft"), epochs=8,
                        batch_size=16, lr=3e-2, max_len=32, log_every=2, device="cpu")
    events = list(api.finetune(spec))
    assert isinstance(events[-1], api.RunFinished) and events[-1].status == "completed", events[-1]
    tuned = api.load(tmp_path / "ft")
    assert api.Capability.CLASSIFY in tuned.capabilities
    report = api.finetune_report(tmp_path / "ft")
    assert report["metrics"]["accuracy"] > 0.6, report["metrics"]  # three topics: chance is a third
    assert tuned.classify("a ripe mango from the market").labels[0] in TOPICS
    assert not torch.equal(tuned.model.encoder.network.emb.weight.detach().cpu(),
                           handle.network.emb.weight.detach().cpu()), "fine-tuning moved the vectors"
