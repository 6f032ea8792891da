"""A tuned lens (Belrose et al. 2023) trained by the engine for our BERT and GPT: it fits the output better
than the logit lens on held-out text, opens as a model, and the lab's grid reads it."""

import numpy as np
import pytest
import torch

from engine import api
from engine.config.run_spec import RunSpec
from engine.config.settings import model_config
from engine.errors import Word2BertError


def train_lens(base, corpus, out, steps=40):
    cfg = model_config("tuned-lens", base=str(base), batch_size=8, positions=64, eval_every=steps, lr=3e-3)
    events = list(api.train(RunSpec("tuned-lens", out=str(out), corpus=str(corpus), model=cfg, max_steps=steps,
                                    log_every=10, seed=0)))
    return events[-1], [e for e in events if isinstance(e, api.EvalMetrics)]


@pytest.fixture(scope="module")
def lens_runs(contextual_runs, topic_corpus, tmp_path_factory):
    root = tmp_path_factory.mktemp("tuned")
    return {kind: (root / kind, *train_lens(contextual_runs[kind][0], topic_corpus, root / kind))
            for kind in ("bert", "gpt")}


@pytest.mark.parametrize("kind", ["bert", "gpt"])
def test_a_tuned_lens_reads_every_layer_closer_to_the_output_than_the_logit_lens(lens_runs, kind):
    run, finished, evals = lens_runs[kind]
    assert finished.status == "completed", finished.message
    held = evals[-1].metrics
    layers = sum(1 for k in held if k.startswith("kl_tuned_layer_"))
    assert layers == 2  # the tiny runs' two layers: the embeddings and layer 1 get translators
    assert held["kl_tuned"] < held["kl_logit"]  # held-out KL from the output, translated vs plain
    assert all(held[f"kl_tuned_layer_{i}"] <= held[f"kl_logit_layer_{i}"] + 1e-3 for i in range(layers))


@pytest.mark.parametrize("kind", ["bert", "gpt"])
def test_a_tuned_lens_run_opens_as_its_model_and_the_grid_reads_it(lens_runs, contextual_runs, kind):
    run, _, _ = lens_runs[kind]
    handle = api.load(run)
    assert handle.name == run.name and handle.tuned_lens is not None and "tuned lens" in handle.info["description"]
    text = "he drove the [MASK] to town" if kind == "bert" else "he drove the truck to"
    tuned, logit = api.lens_grid(handle, text, lens="tuned"), api.lens_grid(handle, text, lens="logit")
    assert tuned.lens == "tuned" and tuned.tokens == logit.tokens
    assert tuned.top_tokens[-1] == logit.top_tokens[-1]  # the output is read as it is: no translator there
    assert np.allclose(tuned.top_probs[-1], logit.top_probs[-1], atol=1e-6)
    assert tuned.kl[:-1].mean() < logit.kl[:-1].mean()
    plain = api.load(contextual_runs[kind][0])
    with pytest.raises(Word2BertError, match="no tuned lens"):
        api.lens_grid(plain, text, lens="tuned")


def test_an_untrained_tuned_lens_is_the_logit_lens():
    from engine.models.tuned_lens import TunedLens

    lens = TunedLens(3, 8)
    hidden = [torch.randn(5, 8) for _ in range(3)]
    assert all(torch.equal(a, b) for a, b in zip(lens.translate(hidden), hidden, strict=True))


def test_a_tuned_lens_needs_a_language_model(topic_corpus, tmp_path):
    cfg = model_config("tuned-lens", base="word2vec-sgns")
    with pytest.raises(Word2BertError, match="no output head"):
        list(api.train(RunSpec("tuned-lens", out=str(tmp_path / "x"), corpus=str(topic_corpus), model=cfg,
                               max_steps=5)))
    assert not (tmp_path / "x").exists()


def test_a_lens_opened_on_another_save_of_its_model_says_it_may_not_fit(topic_corpus, tmp_path):
    """A lens is trained on one save of its model's layers; the run trained on (or a shipped model remade) changes
    them, and the lens read them wrongly without a word. It opens, and the lens grid and the library say so."""
    import dataclasses

    from tests.conftest import tiny_spec

    base = tmp_path / "bert"
    spec = tiny_spec("bert", topic_corpus, base, max_steps=4, eval_every=0, keep_every=0)
    assert list(api.train(spec))[-1].status == "completed"
    finished, _ = train_lens(base, topic_corpus, tmp_path / "lens", steps=4)
    assert finished.status == "completed", finished.message
    text = "he drove the [MASK] to town"
    fits = api.load(tmp_path / "lens")
    assert not fits.info.get("note") and "another save" not in api.lens_grid(fits, text, lens="tuned").notice
    assert list(api.train(dataclasses.replace(spec, max_steps=6, resume=True)))[-1].status == "completed"
    stale = api.load(tmp_path / "lens")
    assert "trained on another save of bert" in stale.info["note"]  # (the library shows a model's note)
    assert "trained on another save of bert" in api.lens_grid(stale, text, lens="tuned").notice
    assert "another save" not in api.lens_grid(stale, text, lens="logit").notice  # the logit lens has no translators
