"""Helpers shared by the engine tests: run a spec to its end; a tiny word2vec spec."""

from engine import api
from engine.config.run_spec import RunSpec
from engine.config.settings import Word2VecConfig
from engine.training.events import RunFinished


def run(spec, stop=None):
    events = list(api.train(spec, stop=stop))
    assert isinstance(events[-1], RunFinished)
    return events


def w2v_spec(corpus, out, log_every=2, **kw):
    """word2vec on the topic corpus: 8 epochs of one kernel call each on a CPU (a call is 10,000
    positions a thread: the whole tiny corpus)."""
    model = Word2VecConfig(sg=1, vector_size=24, epochs=8, min_count=2, batch_pairs=512)
    return RunSpec("word2vec", out=str(out), corpus=str(corpus), model=model, log_every=log_every, **kw)
