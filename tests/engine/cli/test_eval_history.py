"""word2bert-eval --all-checkpoints: one JSON line per checkpoint a run kept, ours or a Trainer's."""

import json
import shutil

from engine.handles.history import run_history


def test_every_kept_checkpoint_is_scored_in_step_order(topic_corpus, tmp_path, capsys):
    from engine import api
    from engine.cli.eval import eval_main
    from tests.conftest import tiny_spec

    spec = tiny_spec("bert", topic_corpus, tmp_path / "run", max_steps=6, keep_every=2, eval_every=0)
    assert list(api.train(spec))[-1].status == "completed"
    history = run_history(tmp_path / "run")
    assert [k.step for k in history] == [2, 4, 6]
    assert eval_main([str(tmp_path / "run"), "--all-checkpoints", "--tasks", "cloze,senses", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["step"] for r in rows] == [2, 4, 6]
    assert all("cloze_top10" in r["cloze"] and len(r["senses"]["by_layer"]) == 3 for r in rows)
    assert rows[-1]["tokens_seen"] == 6 * spec.model.batch_size * spec.model.seq_len
    # without --tasks: what a BERT can take (its cloze and senses, read from the cache now), not word-vector tests
    assert eval_main([str(tmp_path / "run"), "--all-checkpoints", "--json"]) == 0
    again = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["cloze"] for r in again] == [r["cloze"] for r in rows] and "analogy" not in again[0]


def test_a_trainer_style_folder_of_checkpoints_is_a_run(contextual_runs, tmp_path):
    from engine.cli.export import export_hf

    root = tmp_path / "trainer-run"
    root.mkdir()
    for step in (500, 1000):
        export_hf(contextual_runs["bert"][0], root / f"checkpoint-{step}")
    (root / "checkpoint-1500").mkdir()  # a checkpoint cut off before its config: not listed
    shutil.copy(root / "checkpoint-500" / "config.json", root / "notes.json")
    assert [(k.step, k.path.endswith(f"checkpoint-{k.step}")) for k in run_history(root)] == [(500, True), (1000, True)]
    log = {"log_history": [{"loss": 3.2, "learning_rate": 5e-5, "step": 500, "num_input_tokens_seen": 64_000},
                           {"eval_loss": 3.0, "step": 500},
                           {"loss": 2.5, "learning_rate": 2e-5, "step": 1000, "num_input_tokens_seen": 128_000},
                           {"train_runtime": 9.5, "step": 1000}]}
    (root / "checkpoint-1000" / "trainer_state.json").write_text(json.dumps(log), encoding="utf-8")
    (root / "checkpoint-500" / "trainer_state.json").write_text(json.dumps({"log_history": log["log_history"][:2]}))
    from engine.handles.history import trainer_log

    assert trainer_log(root) == ([(500, 3.2), (1000, 2.5)], [(500, "eval loss", 3.0)])  # the latest's log: all of it
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    from engine import api

    rows = list(api.checkpoint_scores(root, ("senses",)))
    assert [r["step"] for r in rows] == [500, 1000] and all("senses" in r for r in rows)
    assert [r["tokens_seen"] for r in rows] == [64_000, 128_000]  # what each checkpoint's Trainer state counted
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before  # nothing written into the user's folder


def test_scores_along_a_run_are_computed_once_and_kept_in_the_cache_folder(contextual_runs, tmp_path):
    import threading

    from engine import api
    from tests.conftest import tiny_spec

    run_dir = tmp_path / "run"
    corpus = json.loads((contextual_runs["bert"][0] / "config.json").read_text())["corpus"]
    assert list(api.train(tiny_spec("bert", corpus, run_dir, max_steps=4, keep_every=2, eval_every=0)))[-1].status == "completed"
    seen = []
    rows = list(api.checkpoint_scores(run_dir, ("senses", "cloze"), progress=lambda f, m: seen.append(f)))
    assert [r["step"] for r in rows] == [2, 4] and seen[-1] == 1.0
    assert all(0 <= r["senses"]["best"] <= 1 and r["senses"]["best"] >= r["senses"]["last"] for r in rows)
    assert rows[0]["tokens_seen"] < rows[1]["tokens_seen"]

    def no_loading(path):
        raise AssertionError(f"{path} was loaded again")

    again = list(api.checkpoint_scores(run_dir, ("senses", "cloze"), load=no_loading))  # from the cache
    assert [r["senses"] for r in again] == [r["senses"] for r in rows]
    stop = threading.Event()
    stop.set()
    assert list(api.checkpoint_scores(run_dir, ("senses",), stop=stop)) == []
    # rows of an older measure of senses (cached before it changed) are scored again, not served
    from engine.inspection.history_scores import scores_file

    cache = json.loads(scores_file(run_dir).read_text())
    old = {key.replace("senses@2", "senses"): {**row, "senses": {"best": -1.0}} for key, row in cache.items()}
    scores_file(run_dir).write_text(json.dumps(old))
    assert [r["senses"] for r in api.checkpoint_scores(run_dir, ("senses", "cloze"))] == [r["senses"] for r in rows]


def test_perplexity_along_a_run_scores_a_stated_sample_says_what_it_does_and_a_rerun_reuses_it(
        topic_corpus, tmp_path, capsys, monkeypatch):
    """`--all-checkpoints --tasks perplexity` printed nothing for minutes and recomputed everything when run
    again: now the same first held-out sentences for every checkpoint, progress on stderr, and the second
    run reads every row from the cache folder (never from or into the run folder)."""
    from engine import api
    from engine.cli.eval import eval_main
    from engine.inspection import history_scores
    from tests.conftest import tiny_spec

    spec = tiny_spec("gpt", topic_corpus, tmp_path / "run", max_steps=4, keep_every=2, eval_every=0)
    assert list(api.train(spec))[-1].status == "completed"
    monkeypatch.setattr(history_scores, "PERPLEXITY_SENTENCES", 7)
    args = [str(tmp_path / "run"), "--all-checkpoints", "--tasks", "perplexity,cloze", "--json"]
    before = sorted(p.name for p in (tmp_path / "run").rglob("*"))
    assert eval_main(args) == 0
    out = capsys.readouterr()
    rows = [json.loads(line) for line in out.out.splitlines()]
    assert [r["step"] for r in rows] == [2, 4] and all(r["perplexity"]["sentences"] == 7 for r in rows)
    assert rows[0]["perplexity"]["perplexity"] > rows[1]["perplexity"]["perplexity"]  # it learned between them
    assert "first 7 held-out sentences" in out.err and "step 2: scoring (1 of 2)" in out.err
    calls = []
    monkeypatch.setattr(history_scores, "quality", lambda *a, **k: calls.append(a) or {})
    assert eval_main(args) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == rows and not calls  # all cached
    assert sorted(p.name for p in (tmp_path / "run").rglob("*")) == before  # nothing written into the run


def test_layers_along_a_run_are_compared_with_its_last_checkpoint_once_and_again_when_it_went_on(contextual_runs,
                                                                                                  tmp_path):
    import dataclasses

    import numpy as np

    from engine import api
    from engine.inspection.history_scores import checkpoint_settling
    from tests.conftest import tiny_spec

    run_dir = tmp_path / "run"
    corpus = json.loads((contextual_runs["bert"][0] / "config.json").read_text())["corpus"]
    assert list(api.train(tiny_spec("bert", corpus, run_dir, max_steps=4, keep_every=2, eval_every=0)))[-1].status == "completed"
    rows = list(checkpoint_settling(run_dir, sentences=20))
    assert [r["step"] for r in rows] == [2, 4] and all("error" not in r for r in rows)
    np.testing.assert_allclose(rows[-1]["settled"], 1.0, atol=1e-4)  # the last checkpoint against itself
    assert min(rows[0]["settled"]) < 0.9999

    def no_loading(path):
        raise AssertionError(f"{path} was loaded again")

    assert [r["settled"] for r in checkpoint_settling(run_dir, sentences=20, load=no_loading)] == [r["settled"] for r in rows]
    # the run goes on: its last checkpoint is another, so every step is compared again
    spec = dataclasses.replace(tiny_spec("bert", corpus, run_dir, max_steps=6, keep_every=2, eval_every=0), resume=True)
    assert list(api.train(spec))[-1].status == "completed"
    went_on = list(checkpoint_settling(run_dir, sentences=20))
    assert [r["step"] for r in went_on] == [2, 4, 6] and went_on[1]["settled"] != rows[1]["settled"]


def test_layers_against_a_shipped_name_are_compared_again_when_the_shipped_model_is_replaced(contextual_runs, tmp_path,
                                                                                           monkeypatch, request):
    """`word2bert-eval RUN --all-checkpoints --against gpt-tiny`: the cache was keyed by the name alone, so once the
    shipped gpt-tiny was replaced by a newer export the rows against the old weights were given back as today's."""
    import shutil

    import numpy as np

    from engine import api
    from engine.handles import load as loading
    from engine.handles.history import run_history
    from engine.inspection.history_scores import checkpoint_settling
    from tests.conftest import tiny_spec

    run_dir = tmp_path / "run"
    corpus = json.loads((contextual_runs["bert"][0] / "config.json").read_text())["corpus"]
    assert list(api.train(tiny_spec("bert", corpus, run_dir, max_steps=4, keep_every=2, eval_every=0)))[-1].status == "completed"
    shipped = tmp_path / "assets"
    monkeypatch.setattr(loading, "DEFAULT_CHECKPOINTS", shipped)
    # the catalog is read once and kept: read from this folder here, and never kept for the tests after this one
    # (which found glove-6b-50d described by this folder's catalog, of which there is none)
    loading.catalog.cache_clear()
    request.addfinalizer(loading.catalog.cache_clear)
    history = run_history(run_dir)
    shutil.copytree(history[-1].path, shipped / "tiny-shipped", ignore=shutil.ignore_patterns("checkpoints", "*.pt"))
    rows = list(checkpoint_settling(run_dir, against="tiny-shipped", sentences=20))
    np.testing.assert_allclose(rows[-1]["settled"], 1.0, atol=1e-4)  # the run's last save is the shipped one
    shutil.rmtree(shipped / "tiny-shipped")  # replaced by another export: the step-2 weights
    shutil.copytree(history[0].path, shipped / "tiny-shipped", ignore=shutil.ignore_patterns("checkpoints", "*.pt"))
    again = list(checkpoint_settling(run_dir, against="tiny-shipped", sentences=20))
    np.testing.assert_allclose(again[0]["settled"], 1.0, atol=1e-4)  # step 2 against itself now
    assert min(again[-1]["settled"]) < 0.9999


def test_the_development_sense_set_says_where_the_lens_would_open_a_model(contextual_runs, capsys):
    """``--tasks senses-dev``: every layer on the development sense set and the layer the polysemy lens's rule
    (clear_sense_layer) opens the model at — what a researcher checks before naming a run's sense layer."""
    from engine import api
    from engine.cli.eval import eval_main
    from engine.inspection.quality import clear_sense_layer

    run = str(contextual_runs["bert"][0])
    assert eval_main([run, "--tasks", "senses-dev", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["senses-dev"]
    handle = api.load(run)
    assert len(found["by_layer"]) == len(handle.contextual_vectors("a cat").vectors)
    assert found["opens_at"] == clear_sense_layer(handle)
    low, high = found["lead_interval"]
    assert low <= found["best"] - found["last"] <= high or found["best_layer"] == len(found["by_layer"]) - 1
