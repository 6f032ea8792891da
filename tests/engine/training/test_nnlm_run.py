"""NNLM trains on the one gradient loop: stopped mid-epoch it resumes where it stopped (it restarted the
epoch on its own loop), and a loop state of another layout is refused with a clear message."""

import threading

import pytest
import torch

from engine import api
from engine.checkpoints.reading import read_config, read_tensors, read_training_state
from engine.checkpoints.saves import save_run
from engine.config.run_spec import RunSpec
from engine.config.settings import NNLMConfig
from engine.errors import CheckpointError


def nnlm_spec(corpus, out, **kw):
    model = NNLMConfig(context=3, dim=16, hidden=32, epochs=1, batch_size=64, lr=5e-3, min_count=1)
    return RunSpec("nnlm", out=str(out), corpus=str(corpus), model=model, log_every=5, **kw)


def test_a_stopped_nnlm_resumes_mid_epoch_and_finishes(topic_corpus, tmp_path):
    stop = threading.Event()
    first = []
    for event in api.train(nnlm_spec(topic_corpus, tmp_path / "n"), stop=stop):
        first.append(event)
        if isinstance(event, api.StepMetrics) and event.step >= 10:
            stop.set()
    assert first[-1].status == "stopped"
    stopped_at = read_training_state(tmp_path / "n")["step"]
    started = next(e for e in first if isinstance(e, api.RunStarted))
    assert 10 <= stopped_at < started.info["steps"]  # mid-epoch: the run has one epoch
    again = list(api.train(RunSpec("nnlm", out=str(tmp_path / "n"), resume=True, log_every=5)))
    steps = [e.step for e in again if isinstance(e, api.StepMetrics)]
    assert again[-1].status == "completed" and steps and steps[0] > stopped_at
    assert "heldout_perplexity" in again[-1].metrics
    assert api.load(tmp_path / "n").score("she played the piano .").perplexity < 200


def test_a_loop_state_of_another_layout_is_refused_by_name(topic_corpus, tmp_path):
    list(api.train(nnlm_spec(topic_corpus, tmp_path / "n", max_steps=5)))
    config = read_config(tmp_path / "n")
    weights = read_tensors(tmp_path / "n", config)
    state = read_training_state(tmp_path / "n")
    one_group = torch.optim.AdamW([torch.nn.Parameter(v.clone()) for v in state["model"].values()]).state_dict()
    kept = {k: v for k, v in config.items() if k not in ("format_version", "kind", "engine_version", "save_id")}
    save_run(tmp_path / "n", "nnlm", kept, weights,  # what NNLM's own loop saved before
             training_state={"epoch": 0, "step": 5, "model": state["model"], "optimizer": one_group, "scheduler": {}})
    with pytest.raises(CheckpointError, match="another version of word2bert's training loop"):
        list(api.train(RunSpec("nnlm", out=str(tmp_path / "n"), resume=True, max_steps=20)))
