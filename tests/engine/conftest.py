"""Fixtures of the engine tests: a finished run of every static family (made once per session)."""

from pathlib import Path

import pytest

from engine.config.run_spec import RunSpec
from engine.config.settings import GloveConfig, NGramConfig, NNLMConfig
from tests.engine.helpers import run, w2v_spec


@pytest.fixture(scope="session")
def runs(topic_corpus, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    specs = {
        "word2vec": w2v_spec(topic_corpus, root / "w2v"),
        "glove": RunSpec("glove", out=str(root / "glove"), corpus=str(topic_corpus),
                         model=GloveConfig(vector_size=16, epochs=5, min_count=2, batch_size=1024), log_every=5),
        "ngram": RunSpec("ngram", out=str(root / "ngram"), corpus=str(topic_corpus), model=NGramConfig(order=3, min_count=1)),
        "nnlm": RunSpec("nnlm", out=str(root / "nnlm"), corpus=str(topic_corpus),
                        model=NNLMConfig(context=3, dim=16, hidden=32, epochs=2, batch_size=256, lr=5e-3, min_count=1), log_every=5),
    }
    finished = {}
    for kind, spec in specs.items():
        events = run(spec)
        finished[kind] = (Path(spec.out), events)
    return finished
