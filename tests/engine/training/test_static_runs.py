"""Training the static families through engine.api: events, metrics.jsonl, resume, stop, divergence, bad corpora, streaming."""

import json
import threading
import time

import numpy as np
import pytest

from engine import api
from engine.config.run_spec import RunSpec
from engine.config.settings import GloveConfig, Word2VecConfig
from engine.errors import CheckpointError
from engine.training.events import StepMetrics
from tests.engine.helpers import run, w2v_spec  # noqa: F401


def test_every_static_kind_trains_and_completes(runs):
    for kind, (path, events) in runs.items():
        assert events[-1].status == "completed", (kind, events[-1])
        assert (path / "config.json").exists() and (path / "model.safetensors").exists()
        lines = (path / "metrics.jsonl").read_text().splitlines()
        assert json.loads(lines[0])["event"] == "started" and json.loads(lines[-1])["event"] == "finished"
        config = json.loads((path / "config.json").read_text())
        assert config["kind"] == kind and config["format_version"] == 1


def test_loss_falls_in_logged_steps(runs):
    for kind in ("word2vec", "glove", "nnlm"):
        steps = [e for e in runs[kind][1] if isinstance(e, StepMetrics)]
        assert len(steps) >= 2, kind
        assert steps[-1].loss < steps[0].loss, kind
        assert all(0 <= s.progress <= 1 for s in steps)


def test_metrics_jsonl_replots_the_run(runs):
    path, events = runs["word2vec"]
    again = api.read_metrics(path)
    assert [type(e) for e in again] == [type(e) for e in events]
    assert [e.loss for e in again if isinstance(e, StepMetrics)] == [e.loss for e in events if isinstance(e, StepMetrics)]


@pytest.fixture(params=["this machine's path", "batched steps"])
def word2vec_path(request, monkeypatch):
    """The path word2vec trains on here (the compiled kernel on a CPU), and the GPU's batched torch steps
    run on this machine's device: a step is then a batch of pairs, not a kernel call over the corpus."""
    if request.param == "batched steps":
        import engine.models.word2vec.model as word2vec_model
        import engine.training.loop as training_loop

        monkeypatch.setattr(training_loop, "runs_without_torch", lambda spec: False)
        monkeypatch.setattr(word2vec_model, "use_cpu_kernel", lambda model: False)
    return request.param


def test_resume_continues_the_loss_curve(topic_corpus, tmp_path, word2vec_path):
    stop = threading.Event()
    first = []
    for event in api.train(w2v_spec(topic_corpus, tmp_path / "r", log_every=1), stop=stop):
        first.append(event)
        if isinstance(event, StepMetrics) and event.progress >= 0.5:  # about half the run, whatever a step is
            stop.set()
    assert first[-1].status == "stopped"
    before = [e for e in first if isinstance(e, StepMetrics)]
    losses_before = [e.loss for e in before]
    resumed = run(RunSpec("word2vec", out=str(tmp_path / "r"), resume=True, log_every=1))
    assert resumed[-1].status == "completed"
    losses_after = [e.loss for e in resumed if isinstance(e, StepMetrics)]
    assert resumed[0].resumed_step >= before[-1].step
    # the resumed curve starts where the stopped one ended, far below a fresh start
    assert losses_after[0] < losses_before[0] * 0.9
    assert abs(losses_after[0] - losses_before[-1]) < 0.25 * losses_before[0]
    steps = [json.loads(x)["step"] for x in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()
             if json.loads(x)["event"] == "step"]
    assert steps == sorted(steps)


def test_a_run_records_what_its_default_was_made_of_and_resumes_on_that_text(tmp_path):
    from engine.training.loop import _prepare_resume

    out = tmp_path / "news"
    spec = RunSpec("word2vec", out=str(out), corpus="bbc-news", max_words=20_000,
                   model=Word2VecConfig(vector_size=8, epochs=1, min_count=2))
    assert run(spec)[-1].status == "completed"
    config = json.loads((out / "config.json").read_text())
    assert config["corpus"] == "bbc-news" and config["corpus_sources"] == ["bbc-news"]
    assert api.load(out).info["corpus_sources"] == ["bbc-news"]
    # a run of before chitchat joined the default: "default" and no sources, so it resumes on its own text
    config.update(corpus="default")
    del config["corpus_sources"]
    (out / "config.json").write_text(json.dumps(config))
    assert _prepare_resume(RunSpec("word2vec", out=str(out), resume=True)).corpus == "wiki-vital+bbc-news+enwiki-sample"


def test_stop_event_saves_a_resumable_checkpoint(topic_corpus, tmp_path):
    stop = threading.Event()
    stop.set()
    events = run(w2v_spec(topic_corpus, tmp_path / "s"), stop=stop)
    assert events[-1].status == "stopped"
    assert (tmp_path / "s" / "training_state.pt").exists()
    assert api.load(tmp_path / "s").static_neighbours("car", 3)


def test_non_finite_loss_reports_diverged_and_saves_nothing_bad(topic_corpus, tmp_path):
    spec = w2v_spec(topic_corpus, tmp_path / "d")
    spec.model.alpha = 1e30
    events = run(spec)
    assert events[-1].status == "diverged"
    weights = tmp_path / "d" / "model.safetensors"
    if weights.exists():
        assert np.isfinite(api.load(tmp_path / "d").static_vectors().vectors).all()


@pytest.mark.parametrize("kind", ["word2vec", "glove"])
def test_a_learning_rate_that_blows_up_ends_diverged_and_keeps_only_finite_weights(kind, topic_corpus, tmp_path):
    """Both hand-written loops share one skeleton (engine.training.hand_loop): a loss or weights that are
    no longer finite end the run as diverged, and no save writes them over the last good checkpoint."""
    if kind == "word2vec":
        spec = w2v_spec(topic_corpus, tmp_path / kind)
        spec.model.alpha = 1e30
    else:
        spec = RunSpec("glove", out=str(tmp_path / kind), corpus=str(topic_corpus), log_every=1,
                       model=GloveConfig(vector_size=8, min_count=1, epochs=3, learning_rate=1e30))
    events = run(spec)
    assert events[-1].status == "diverged", events[-1]
    assert "no longer finite" in events[-1].message
    weights = tmp_path / kind / "model.safetensors"
    if weights.exists():
        assert np.isfinite(api.load(tmp_path / kind).static_vectors().vectors).all()


def test_out_folder_with_a_run_is_not_overwritten(runs, topic_corpus):
    with pytest.raises(CheckpointError, match="already holds a run"):
        run(w2v_spec(topic_corpus, runs["word2vec"][0]))


def test_empty_corpus_and_no_word_above_min_count(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(api.CorpusError):
        run(RunSpec("word2vec", out=str(tmp_path / "e"), corpus=str(empty)))
    rare = tmp_path / "rare.txt"
    rare.write_text("every word here is unique\n", encoding="utf-8")
    with pytest.raises(api.CorpusError, match="min_count"):
        run(RunSpec("word2vec", out=str(tmp_path / "m"), corpus=str(rare)))


def test_word2vec_and_glove_stream_the_corpus_through_an_id_file(topic_corpus, tmp_path, monkeypatch):
    """The training text is never held as a list: counted while streaming, then written as ids to a
    memory-mapped file, which is removed when the run ends."""
    from engine.data.text import count_and_encode, encode_sentences, remap_ids, tokenized_sentences
    from engine.training.context import TrainContext

    sentences = list(tokenized_sentences(["a b c.", "", "b c d e.", "z"], True))
    index = {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
    seen, _, raw, raw_starts = count_and_encode(iter(sentences), tmp_path / "raw.int32", block=2)
    mapping = np.array([index.get(w, -1) for w in seen])
    ids, starts = remap_ids(raw, raw_starts, mapping, tmp_path / "ids.int32", block=2)
    want_ids, want_starts = encode_sentences(sentences, index)
    assert isinstance(ids, np.memmap) and np.array_equal(ids, want_ids) and np.array_equal(starts, want_starts)

    def no_lists(*_a, **_k):
        raise AssertionError("the whole training text was materialised")

    monkeypatch.setattr(TrainContext, "sentences", no_lists)
    for kind, model in (("word2vec", Word2VecConfig(vector_size=16, min_count=2, epochs=1)),
                        ("glove", GloveConfig(vector_size=16, min_count=2, epochs=2))):
        out = tmp_path / kind
        events = list(api.train(RunSpec(kind, out=str(out), corpus=str(topic_corpus), model=model)))
        assert events[-1].status == "completed" and not (out / ".corpus-ids.int32").exists()
        assert api.load(str(out)).static_neighbours("piano", 3)


def test_glove_stops_mid_epoch_at_once_and_resumes_to_the_same_vectors(topic_corpus, tmp_path):
    def spec(out, **kw):
        return RunSpec("glove", out=str(out), corpus=str(topic_corpus), log_every=1, seed=0,
                       model=GloveConfig(vector_size=16, epochs=2, min_count=2, batch_size=256), **kw)

    whole = run(spec(tmp_path / "whole"))
    steps_per_epoch = sum(1 for e in whole if isinstance(e, StepMetrics)) // 2
    assert steps_per_epoch >= 4
    stop, seen = threading.Event(), []
    for event in api.train(spec(tmp_path / "cut"), stop=stop):  # Ctrl-C in the middle of the first epoch
        seen.append(event)
        if isinstance(event, StepMetrics) and event.step == steps_per_epoch // 2:
            stop.set()
    assert seen[-1].status == "stopped" and "epoch 1" in seen[-1].message
    stopped_at = max(e.step for e in seen if isinstance(e, StepMetrics))
    assert stopped_at == steps_per_epoch // 2  # not at the end of the epoch
    resumed = run(RunSpec("glove", out=str(tmp_path / "cut"), resume=True, log_every=1))
    assert resumed[-1].status == "completed"
    a = api.load(tmp_path / "whole").static_neighbours("car", 5)
    b = api.load(tmp_path / "cut").static_neighbours("car", 5)
    assert [n.word for n in a] == [n.word for n in b]
    assert np.allclose([n.similarity for n in a], [n.similarity for n in b], atol=1e-5)


def test_a_spent_time_budget_stops_the_run_resumably(topic_corpus, tmp_path, monkeypatch):
    """--max-minutes: when the budget is spent the run saves and stops as on Stop, and says why."""
    from engine.training import loop

    timers = []

    class Budget:  # the timer, fired by the test after the first logged step instead of by the clock
        def __init__(self, seconds, fn, spent_before=0.0):
            self.seconds, self.fn, self.finished, self.daemon = seconds, fn, threading.Event(), False
            timers.append(self)

        def start(self):
            pass

        def cancel(self):
            self.finished.set()

        def fire(self):
            self.finished.set()
            self.fn()

    monkeypatch.setattr(loop, "wall_budget", Budget)
    spec = w2v_spec(topic_corpus, tmp_path / "b", log_every=2)
    spec.max_minutes = 2
    events = []
    for event in api.train(spec):
        events.append(event)
        if isinstance(event, StepMetrics) and not timers[0].finished.is_set():
            timers[0].fire()  # at the first logged step
    assert timers[0].seconds == 120
    assert events[-1].status == "stopped" and "2-minute wall budget is spent" in events[-1].message
    resumed = run(RunSpec("word2vec", out=str(tmp_path / "b"), resume=True))
    assert resumed[-1].status == "completed" and resumed[0].resumed_step > 0


def test_a_time_budget_must_be_positive(topic_corpus, tmp_path):
    with pytest.raises(ValueError, match="max minutes"):
        RunSpec("word2vec", out=str(tmp_path / "x"), corpus=str(topic_corpus), max_minutes=-1)
    with pytest.raises(ValueError, match="budget clock"):
        RunSpec("word2vec", out=str(tmp_path / "x"), corpus=str(topic_corpus), max_minutes=1, budget_clock="moon")
    with pytest.raises(ValueError, match="needs a budget"):
        RunSpec("word2vec", out=str(tmp_path / "x"), corpus=str(topic_corpus), budget_schedule=True)


def test_a_cpu_budget_counts_the_process_own_computation_not_sleep():
    """--budget-clock cpu: time spent waiting (another job holding the core) does not use up the budget."""
    from engine.training.budget import Budget

    fired = threading.Event()
    budget = Budget(0.2, fired.set, time.process_time, poll=0.02)
    budget.start()
    time.sleep(0.5)  # waiting costs no CPU time
    assert not fired.is_set()
    end = time.monotonic() + 30
    while not fired.is_set() and time.monotonic() < end:
        sum(i * i for i in range(10_000))  # computing does
    assert fired.is_set() and budget.finished.is_set() and budget.fraction() == 1.0
    budget.cancel()


def test_word2vec_on_a_cpu_only_machine_trains_without_torch_and_resumes_from_its_json_state(topic_corpus, tmp_path):
    """The compiled kernel on numpy arrays: no second of torch import in a short command, and the loop
    state saved as JSON (torch.save needs torch) resumes as the .pt one does."""
    import subprocess
    import sys

    from engine.device import accelerator_possible

    if accelerator_possible():
        pytest.skip("this machine may have a GPU: word2vec asks torch which device to use")
    out = tmp_path / "nt"
    code = ("import sys, json; from engine.training.loop import train; from tests.engine.helpers import w2v_spec; "
            f"events = list(train(w2v_spec(r'{topic_corpus}', r'{out}', max_steps=4))); "
            "print(json.dumps([events[-1].status, 'torch' in sys.modules, 'numba' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["stopped", False, True], done.stderr[-2000:]
    assert not (out / "training_state.pt").exists()
    saved = (out / "training_state.json").read_text()
    assert json.loads(saved)["step"] >= 4
    (out / "training_state.json").write_text("{}")  # edited by hand: a clear error, not a traceback
    with pytest.raises(CheckpointError, match="epoch, chunk and step"):
        run(RunSpec("word2vec", out=str(out), resume=True))
    (out / "training_state.json").write_text(saved)
    import torch  # noqa: F401 - as in the app's process: its saves write the .pt form

    resumed = run(RunSpec("word2vec", out=str(out), resume=True, log_every=2))  # here, in a process with torch
    assert resumed[-1].status == "completed" and resumed[0].resumed_step >= 4
    assert (out / "training_state.pt").exists() and not (out / "training_state.json").exists()  # one form only
    assert api.load(out).static_neighbours("piano", 3)
