"""A model family is one declaration: a family made here, in the test alone — its settings, its run and
its loader declared once with ``register`` — trains, saves, loads and answers through the public API
like the built-in ones."""

import dataclasses
from collections import Counter

import numpy as np
import pytest

from engine import api, families
from engine.checkpoints.reading import read_tensors
from engine.checkpoints.saves import save_run
from engine.config.run_spec import RunSpec
from engine.errors import CheckpointError
from engine.handles.base import BaseHandle, run_info


@dataclasses.dataclass
class UnigramConfig:
    """A unigram language model: each word's share of the training text (add-k smoothed)."""

    add_k: float = 0.5
    lowercase: bool = True


def run_unigram(ctx):
    cfg = ctx.spec.model
    counts = Counter(w for sentence in ctx.sentences("train", cfg.lowercase) for w in sentence)
    words = sorted(counts)
    yield ctx.started(sum(counts.values()), "words", {"vocabulary_size": len(words)})
    ctx.step = 1
    yield ctx.step_metrics(0, sum(counts.values()), 0.0, 0.0)
    vocab = words + ["<unk>"]
    freq = np.array([counts[w] for w in words] + [0], dtype=np.float64) + cfg.add_k
    config = {"model": dataclasses.asdict(cfg), "corpus": ctx.corpus.name, "trained_steps": ctx.step,
              "vocabulary_size": len(vocab)}
    save_run(ctx.run_dir, "unigram", config, {"logprob": np.log(freq / freq.sum()).astype(np.float32)},
             files={"vocab.txt": lambda path: path.write_text("\n".join(vocab) + "\n", encoding="utf-8")})
    yield ctx.saved()
    yield ctx.finished("completed")


def load_unigram(run_dir, config):
    vocab = (run_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    logprob = read_tensors(run_dir, config)["logprob"].cpu().numpy()
    if logprob.shape != (len(vocab),):
        raise CheckpointError(f"{run_dir}: {logprob.shape[0]} probabilities for {len(vocab)} words")
    index = {w: i for i, w in enumerate(vocab)}

    def scorer(sentences):
        return [np.array([logprob[index.get(w, len(vocab) - 1)] for w in [*s, "<unk>"]]) for s in sentences]

    return BaseHandle("unigram", run_dir.name, str(run_dir), run_info(run_dir, config), scorer=scorer,
                      knows=index.__contains__)


@pytest.fixture
def unigram_family():
    families.register(families.Family("unigram", UnigramConfig, f"{__name__}:run_unigram",
                                      f"{__name__}:load_unigram", description="unigram LM (a test's)"))
    yield
    families.unregister("unigram")


def test_a_family_declared_once_trains_saves_loads_and_answers(unigram_family, topic_corpus, tmp_path):
    assert "unigram" in api.model_kinds()
    assert [s.name for s in api.model_settings("unigram")] == ["add_k", "lowercase"]
    events = list(api.train(RunSpec("unigram", out=str(tmp_path / "uni"), corpus=str(topic_corpus))))
    assert isinstance(events[-1], api.RunFinished) and events[-1].status == "completed", events[-1]
    handle = api.load(tmp_path / "uni")
    assert handle.kind == "unigram" and api.Capability.SENTENCE_SCORE in handle.capabilities
    common, rare = handle.score("the piano"), handle.score("zebra quantum")
    assert common.logprob > rare.logprob  # words of the corpus are likelier than words it never had
    assert all(u for u in rare.unknown[:2]) and not any(common.unknown[:2])
    from engine.cli.export import export_hf
    from engine.errors import Unsupported

    with pytest.raises(Unsupported, match="this run is unigram"):  # it declared no transformers export
        export_hf(tmp_path / "uni", tmp_path / "hf")


def test_a_family_config_file_is_checked_like_the_built_in_ones(unigram_family, topic_corpus, tmp_path):
    import json

    list(api.train(RunSpec("unigram", out=str(tmp_path / "uni"), corpus=str(topic_corpus))))
    config = json.loads((tmp_path / "uni" / "config.json").read_text())
    config["model"]["add_k"] = "lots"
    (tmp_path / "uni" / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="add_k"):
        api.load(tmp_path / "uni")


def test_every_built_in_family_is_declared_with_a_run_and_a_loader():
    for kind, declaration in families.FAMILIES.items():
        assert callable(declaration.run_generator()) and callable(declaration.loader()), kind
    with pytest.raises(ValueError, match="unknown model kind 'electra'"):
        families.family("electra")
