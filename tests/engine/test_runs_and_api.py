"""Run folders through engine.api: train, save, load, resume, refuse bad files, query safely."""

import json
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import api
from engine.config import GloveConfig, NGramConfig, NNLMConfig, RunSpec, Word2VecConfig
from engine.errors import CheckpointError, Word2BertError
from engine.training.events import RunFinished, StepMetrics


def run(spec, stop=None):
    events = list(api.train(spec, stop=stop))
    assert isinstance(events[-1], RunFinished)
    return events


def w2v_spec(corpus, out, log_every=5, **kw):
    model = Word2VecConfig(sg=1, vector_size=24, epochs=8, min_count=2, batch_pairs=512)
    return RunSpec("word2vec", out=str(out), corpus=str(corpus), model=model, log_every=log_every, **kw)


@pytest.fixture(scope="module")
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


def test_static_handles_answer_queries(runs):
    w2v = api.load(runs["word2vec"][0])
    assert api.Capability.STATIC in w2v.capabilities
    assert api.Capability.SENTENCE_SCORE not in w2v.capabilities
    neighbours = w2v.static_neighbours("banana", k=5)
    assert len(neighbours) == 5 and all(n.word != "banana" for n in neighbours)
    assert neighbours[0].similarity >= neighbours[-1].similarity
    assert w2v.vocabulary(3)[0] in ("the", ".")
    with pytest.raises(api.UnknownWord, match="zeppelin"):
        w2v.vector("zeppelin")
    with pytest.raises(api.Unsupported, match="masked-LM"):
        w2v.fill_mask("the [MASK] is red")
    ngram = api.load(runs["ngram"][0])
    good, bad = ngram.score("he drove the car to town"), ngram.score("town car the drove to he")
    assert good.logprob > bad.logprob and good.perplexity < bad.perplexity
    with pytest.raises(api.Unsupported):
        ngram.static_neighbours("car")
    nnlm = api.load(runs["nnlm"][0])
    assert nnlm.score("she played the piano on stage").perplexity > 1
    assert len(nnlm.static_neighbours("piano", 3)) == 3


def test_static_contextual_vectors_are_the_same_for_every_occurrence(runs):
    h = api.load(runs["word2vec"][0])
    a = h.contextual_vectors("she played the guitar on stage")
    b = h.contextual_vectors("he drove the car to the guitar shop")
    assert a.vectors.shape[0] == 1 and a.vectors.dtype == np.float32
    np.testing.assert_array_equal(a.vectors[0, a.words.index("guitar")], b.vectors[0, b.words.index("guitar")])


def test_save_load_gives_identical_vectors_and_scores(runs):
    from safetensors.numpy import load_file

    path = runs["word2vec"][0]
    saved = load_file(str(path / "model.safetensors"))["vectors"]
    h1, h2 = api.load(path), api.load(path)
    i = h1.static_vectors().index["piano"]
    np.testing.assert_array_equal(h1.vector("piano"), saved[i])
    np.testing.assert_array_equal(h1.vector("piano"), h2.vector("piano"))
    n1, n2 = api.load(runs["ngram"][0]), api.load(runs["ngram"][0])
    assert n1.score("the car stopped").logprob == n2.score("the car stopped").logprob


def test_word2vec_format_round_trip_with_gensim(runs, tmp_path):
    from gensim.models import KeyedVectors

    from engine.cli.export import export_main

    h = api.load(runs["word2vec"][0])
    for binary in (False, True):
        out = tmp_path / f"v{int(binary)}.w2v"
        assert export_main([str(runs["word2vec"][0]), "--to", "word2vec", str(out)] + (["--binary"] if binary else [])) == 0
        kv = KeyedVectors.load_word2vec_format(str(out), binary=binary)
        np.testing.assert_allclose(kv["piano"], h.vector("piano"), rtol=1e-5, atol=1e-6)
        back = api.load(out)  # we read our own files
        np.testing.assert_allclose(back.vector("piano"), h.vector("piano"), rtol=1e-5, atol=1e-6)
        gensim_file = tmp_path / f"g{int(binary)}.bin"
        kv.save_word2vec_format(str(gensim_file), binary=binary)  # ... and gensim's
        np.testing.assert_allclose(api.load(gensim_file).vector("piano"), kv["piano"], rtol=1e-5, atol=1e-6)


def test_resume_continues_the_loss_curve(topic_corpus, tmp_path):
    spec = w2v_spec(topic_corpus, tmp_path / "r", log_every=2, max_steps=8)  # about half the run
    first = run(spec)
    assert first[-1].status == "stopped"
    losses_before = [e.loss for e in first if isinstance(e, StepMetrics)]
    resumed = run(RunSpec("word2vec", out=str(tmp_path / "r"), resume=True, log_every=2))
    assert resumed[-1].status == "completed"
    losses_after = [e.loss for e in resumed if isinstance(e, StepMetrics)]
    assert resumed[0].resumed_step >= 8
    # the resumed curve starts where the stopped one ended, far below a fresh start
    assert losses_after[0] < losses_before[0] * 0.9
    assert abs(losses_after[0] - losses_before[-1]) < 0.25 * losses_before[0]
    steps = [json.loads(x)["step"] for x in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()
             if json.loads(x)["event"] == "step"]
    assert steps == sorted(steps)


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


class Planted:
    def __reduce__(self):
        return (Path.touch, (Path(PLANTED_MARK),))


PLANTED_MARK = "/tmp/word2bert-pickle-was-executed"


def test_planted_pickles_are_refused_and_never_executed(runs, tmp_path):
    import pickle
    import shutil

    Path(PLANTED_MARK).unlink(missing_ok=True)
    payload = pickle.dumps({"x": Planted()})
    (tmp_path / "model.pkl").write_bytes(payload)
    with pytest.raises(CheckpointError, match="pickle"):
        api.load(tmp_path / "model.pkl")
    hf_like = tmp_path / "hf"
    hf_like.mkdir()
    (hf_like / "pytorch_model.bin").write_bytes(payload)
    with pytest.raises(CheckpointError, match="pickle"):
        api.load(hf_like)
    # a run folder whose training state was replaced by a malicious pickle: resume refuses it
    run_dir = tmp_path / "w2v"
    shutil.copytree(runs["word2vec"][0], run_dir)
    (run_dir / "training_state.pt").write_bytes(payload)
    with pytest.raises(CheckpointError, match="cannot be read safely"):
        list(api.train(RunSpec("word2vec", out=str(run_dir), resume=True)))
    assert not Path(PLANTED_MARK).exists()


def test_damaged_foreign_and_newer_folders_give_clear_errors(runs, tmp_path):
    import shutil

    src = runs["word2vec"][0]
    with pytest.raises(CheckpointError, match="no run folder"):
        api.load(tmp_path / "missing")
    trunc = tmp_path / "trunc"
    shutil.copytree(src, trunc)
    data = (trunc / "model.safetensors").read_bytes()
    (trunc / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="damaged or truncated"):
        api.load(trunc)
    newer = tmp_path / "newer"
    shutil.copytree(src, newer)
    cfg = json.loads((newer / "config.json").read_text())
    cfg["format_version"] = 99
    (newer / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="newer word2bert"):
        api.load(newer)
    bad = tmp_path / "badjson"
    shutil.copytree(src, bad)
    (bad / "config.json").write_text('{"format_version": 1, "kind": ')
    with pytest.raises(CheckpointError, match="not valid JSON"):
        api.load(bad)
    mixed = tmp_path / "mixed"
    shutil.copytree(src, mixed)
    shutil.copy(runs["glove"][0] / "model.safetensors", mixed / "model.safetensors")
    with pytest.raises(CheckpointError, match="different saves"):
        api.load(mixed)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "config.json").write_text(json.dumps({"model_type": "bert"}))
    with pytest.raises(CheckpointError, match="Hugging Face"):
        api.load(foreign)


def test_wrong_shapes_are_refused_with_names(runs, tmp_path):
    import shutil

    from safetensors.torch import load_file, save_file

    bad = tmp_path / "shape"
    shutil.copytree(runs["word2vec"][0], bad)
    tensors = load_file(str(bad / "model.safetensors"))
    meta = {"save_id": json.loads((bad / "config.json").read_text())["save_id"]}
    tensors["syn1"] = tensors["syn1"][:, :3].contiguous()
    tensors["extra"] = tensors["vectors"][:2].clone()
    save_file(tensors, str(bad / "model.safetensors"), metadata=meta)
    with pytest.raises(CheckpointError, match=r"unexpected: extra.*wrong shape: syn1"):
        api.load(bad)


def test_cli_train_then_eval_json(topic_corpus, tmp_path, capsys):
    from engine.cli.eval import eval_main
    from engine.cli.train import train_main

    out = tmp_path / "cli"
    rc = train_main(["word2vec", "--corpus", str(topic_corpus), "--out", str(out), "--arch", "skipgram", "--loss", "hs",
                     "--dim", "20", "--epochs", "2", "--min-count", "2", "--workers", "1"])
    assert rc == 0
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["model"]["sg"] == 1 and cfg["model"]["hs"] == 1 and cfg["model"]["vector_size"] == 20
    assert cfg["model"]["workers"] == 1
    capsys.readouterr()
    assert eval_main([str(out), "--tasks", "analogy,wordsim,simlex", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"analogy", "wordsim", "simlex"}
    assert 0 <= result["wordsim"]["coverage"] <= 1 and "accuracy" in result["analogy"]
    assert train_main(["word2vec", "--corpus", "/no/such", "--out", str(tmp_path / "x")]) == 2
    capsys.readouterr()
    with pytest.raises(SystemExit):  # KIND --help lists the family's settings
        train_main(["word2vec", "--help"])
    assert "--workers" in capsys.readouterr().out
    assert train_main(["gpt", "--out", str(tmp_path / "y"), "--hidden", "100", "--heads", "3"]) == 2
    assert "hidden (100) must be a multiple of heads (3)" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()


def test_settings_are_described_and_checked_for_every_family():
    from engine import api

    for kind in api.model_kinds():
        settings = api.model_settings(kind, "small" if kind in ("bert", "gpt", "elmo") else None)
        assert settings and api.check_settings(kind, {s.name: s.value for s in settings}) == []
    bert = {s.name: s for s in api.model_settings("bert", "base")}
    assert bert["layers"].value == 12 and bert["hidden"].type == "int" and bert["nsp"].type == "bool"
    assert "next-sentence" in bert["nsp"].help and bert["preset"].choices == ("tiny", "small", "base")
    assert api.check_settings("bert", {"mask_prob": 1.5, "seq_len": 600, "lr": 0.0}) == [
        "lr must be above 0 (it is 0.0)", "mask_prob must be at least 0 and below 1 (it is 1.5)",
        "seq_len (600) cannot exceed max_len (512)"]
    assert api.check_settings("word2vec", {"hs": 0, "negative": 0}) and api.check_settings("elmo", {"filters": "3x"})
    assert api.check_settings("gpt", {"no_such": 1}) == ["gpt has no setting 'no_such'"]


QUERY_TEXT = st.text(max_size=60) | st.sampled_from(["", " ", "\x00", "[MASK]", "bank", "piano", "a" * 30000])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=QUERY_TEXT, other=QUERY_TEXT)
def test_every_query_gives_a_result_or_a_clear_error(runs, text, other):
    handles = getattr(test_every_query_gives_a_result_or_a_clear_error, "_handles", None)
    if handles is None:
        handles = [api.load(p) for p, _ in runs.values()]
        test_every_query_gives_a_result_or_a_clear_error._handles = handles
    for h in handles:
        for name, args in (("static_neighbours", (text, 3)), ("vector", (text,)), ("score", (text,)),
                           ("contextual_vectors", (text,)), ("analogy", (text, other, "car", 2)),
                           ("fill_mask", (text,)), ("attention", (text,))):
            try:
                getattr(h, name)(*args)
            except Word2BertError as e:
                assert str(e)


def test_glove_package_vectors_load_and_make_sense():
    h = api.load("glove-6b-50d")
    assert h.info["vocabulary_size"] == 400000 and h.info["dim"] == 50
    top = [n.word for n in h.static_neighbours("king", 10)]
    assert "queen" in top or "prince" in top
    assert h.analogy("man", "king", "woman", 3)[0].word == "queen"


def test_word2vec_and_glove_stream_the_corpus_through_an_id_file(topic_corpus, tmp_path, monkeypatch):
    """The training text is never held as a list: counted while streaming, then written as ids to a
    memory-mapped file, which is removed when the run ends."""
    from engine.data.text import encode_sentences, encode_to_file, tokenized_sentences
    from engine.training.loop import TrainContext

    sentences = list(tokenized_sentences(["a b c.", "", "b c d e.", "z"], True))
    index = {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
    ids, starts = encode_to_file(iter(sentences), index, tmp_path / "ids.int32", block=2)
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


def test_throughput_is_measured_over_half_a_second_not_between_close_events(topic_corpus, tmp_path, monkeypatch):
    """Events a few ms apart would plot timer jitter; the speed covers at least RATE_WINDOW_S."""
    from engine.training import context

    clock = [100.0]
    monkeypatch.setattr(context.time, "perf_counter", lambda: clock[0])
    ctx = context.TrainContext(w2v_spec(topic_corpus, tmp_path / "t"), None)
    ctx.started(1e6, "words")
    rates, done = [], 0
    for dt, words in [(0.1, 1000), (0.01, 900), (0.02, 50), (0.5, 4000), (0.6, 600)]:  # seconds, words since
        clock[0] += dt
        done += words
        rates.append(ctx.step_metrics(0, done, 1.0, 0.01).throughput)
    assert rates[0] == pytest.approx(1000 / 0.1)  # the first: since the start
    assert rates[1] == rates[2] == rates[0]  # 10 and 30 ms later: too soon to measure again
    assert rates[3] == pytest.approx((900 + 50 + 4000) / 0.53)
    assert rates[4] == pytest.approx(600 / 0.6)
