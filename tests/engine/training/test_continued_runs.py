"""Pretraining continued from an earlier run (init_from): a BERT, GPT or ELMo goes on learning on new text from
the earlier run's weights, with its tokenizer and architecture, and says so."""

import json

import pytest
import torch

from tests.conftest import make_topic_corpus, tiny_spec


@pytest.fixture(scope="module")
def new_text(tmp_path_factory):
    return make_topic_corpus(tmp_path_factory.mktemp("new-text") / "other.txt", n_docs=120, seed=1)


def _weights(run_dir):
    from safetensors.torch import load_file

    return load_file(str(run_dir / "model.safetensors"))


@pytest.mark.parametrize("kind", ["bert", "gpt", "elmo"])
def test_a_run_goes_on_from_an_earlier_ones_weights_vocabulary_and_architecture(kind, contextual_runs, new_text,
                                                                                  tmp_path):
    from engine import api

    earlier = contextual_runs[kind][0]
    out = tmp_path / "continued"
    # its own settings ask for a narrower model: the earlier run's architecture wins, and the run says so;
    # a learning rate of almost nothing keeps its two steps' weights where they began
    spec = tiny_spec(kind, new_text, out, max_steps=2, init_from=str(earlier), hidden=32, lr=1e-9)
    events = list(api.train(spec))
    assert events[-1].status == "completed", events[-1].message
    notes = " ".join(events[0].info.get("notes", []))
    assert f"goes on from {earlier}" in notes and "hidden 32 → 64" in notes
    config = json.loads((out / "config.json").read_text())
    theirs = json.loads((earlier / "config.json").read_text())
    assert config["model"]["hidden"] == theirs["model"]["hidden"] == 64
    assert config["init_from"] == str(earlier) and config["init_from_steps"] == theirs["trained_steps"] == 40
    assert config["corpus"] != theirs["corpus"]  # the new text's
    vocabulary = "vocab.txt" if kind == "elmo" else "tokenizer.json"
    assert (out / vocabulary).read_text() == (earlier / vocabulary).read_text()  # not one learned from the new text
    before, after = _weights(earlier), _weights(out)
    assert before.keys() == after.keys()
    assert all(torch.allclose(before[k].float(), after[k].float(), atol=1e-5) for k in before)
    assert "on from" in api.describe_run(out)
    # the same settings from nothing: other weights (the test above could not pass by chance)
    fresh = list(api.train(tiny_spec(kind, new_text, tmp_path / "fresh", max_steps=2, lr=1e-9)))
    assert fresh[-1].status == "completed"
    assert not all(torch.allclose(before[k].float(), w.float(), atol=1e-3)
                   for k, w in _weights(tmp_path / "fresh").items() if k in before and w.shape == before[k].shape)


def test_a_resumed_continued_run_keeps_where_it_began(contextual_runs, new_text, tmp_path):
    from engine import api

    out = tmp_path / "gpt-on"
    spec = tiny_spec("gpt", new_text, out, max_steps=2, init_from=str(contextual_runs["gpt"][0]))
    assert list(api.train(spec))[-1].status == "completed"
    from engine.config.run_spec import RunSpec

    resumed = list(api.train(RunSpec("gpt", out=str(out), resume=True, max_steps=4)))
    assert resumed[-1].status == "completed" and not resumed[0].info.get("notes")  # not read again
    config = json.loads((out / "config.json").read_text())
    assert config["trained_steps"] == 4 and config["init_from_steps"] == 40


@pytest.mark.parametrize("settings, said", [
    ({"init_from": "bert"}, "is a 'bert' run, not a gpt run"),
    ({"init_from": "nowhere"}, "no run folder at nowhere"),
    ({"init_from": "gpt", "init_embeddings": "glove-6b-50d"}, "init_from and init_embeddings: not both"),
    ({"init_from": "gpt", "seq_len": 100, "max_len": 512}, "architecture: seq_len (100) cannot exceed max_len (64)"),
])
def test_a_continued_run_that_cannot_be_is_refused_before_it_begins(settings, said, contextual_runs, new_text,
                                                                    tmp_path):
    from engine import api

    runs = {kind: str(folder) for kind, (folder, _) in contextual_runs.items()}
    settings = {k: runs.get(v, v) if k == "init_from" else v for k, v in settings.items()}
    out = tmp_path / "refused"
    with pytest.raises((api.Word2BertError, ValueError), match=said.replace("(", r"\(").replace(")", r"\)")):
        list(api.train(tiny_spec("gpt", new_text, out, max_steps=2, **settings)))
    assert not out.exists()


def test_a_hugging_face_folder_is_pointed_to_the_head_families(contextual_runs, new_text, tmp_path):
    from engine import api
    from engine.cli.export import export_hf

    export_hf(contextual_runs["bert"][0], tmp_path / "hf-bert")
    with pytest.raises(api.Word2BertError, match="word2bert-train mlm-head --base"):
        list(api.train(tiny_spec("bert", new_text, tmp_path / "out", max_steps=2, init_from=str(tmp_path / "hf-bert"))))
    assert not (tmp_path / "out").exists()


def test_a_tokenizer_named_outside_the_earlier_run_is_refused(contextual_runs, new_text, tmp_path):
    import shutil

    from engine import api

    earlier = tmp_path / "earlier"
    shutil.copytree(contextual_runs["gpt"][0], earlier)
    config = json.loads((earlier / "config.json").read_text())
    (earlier / "config.json").write_text(json.dumps({**config, "tokenizer": "../../elsewhere.json"}))
    with pytest.raises(api.Word2BertError, match="not a file in the run folder"):
        list(api.train(tiny_spec("gpt", new_text, tmp_path / "out", max_steps=2, init_from=str(earlier))))


def test_a_student_cannot_also_go_on_from_an_earlier_run():
    from engine.config.checks import check_config
    from engine.config.settings import model_config

    problems = check_config("bert", model_config("bert", init_from="bert-tiny", teacher="minilm-mlm"))
    assert any("init_from and teacher: not both" in p for p in problems)


def test_the_cli_goes_on_learning_as_the_earlier_run_did_unless_told_otherwise(contextual_runs, new_text, tmp_path,
                                                                               capsys):
    import shutil

    from engine.cli.train import train_main

    earlier = tmp_path / "earlier"
    shutil.copytree(contextual_runs["bert"][0], earlier)
    config = json.loads((earlier / "config.json").read_text())
    learned = {"seq_len": 16, "mask_prob": 0.2, "whole_word": True, "nsp": False, "dropout": 0.0}
    (earlier / "config.json").write_text(json.dumps({**config, "model": {**config["model"], **learned}}))
    out = tmp_path / "on"
    assert train_main(["bert", "--init-from", str(earlier), "--corpus", str(new_text), "--out", str(out),
                       "--max-steps", "2", "--batch-size", "4", "--dropout", "0.05"]) == 0
    said = capsys.readouterr().err
    assert "seq len 16, mask prob 0.2, whole word on, nsp off" in said  # what it keeps, and how to change it
    assert "--seq-len --mask-prob --no-whole-word --nsp" in said and "dropout 0" not in said
    model = json.loads((out / "config.json").read_text())["model"]
    assert {k: model[k] for k in learned} == {**learned, "dropout": 0.05}  # the flag given wins
    # a run from nothing keeps the family's defaults
    fresh = tmp_path / "fresh"
    assert train_main(["bert", "--corpus", str(new_text), "--out", str(fresh), "--max-steps", "1", "--batch-size", "4",
                       "--hidden", "64", "--layers", "1", "--heads", "2", "--intermediate", "64",
                       "--vocab-size", "200"]) == 0
    assert json.loads((fresh / "config.json").read_text())["model"]["whole_word"] is False


def test_what_a_continued_run_keeps_is_read_from_the_earlier_runs_config(contextual_runs):
    from engine import api

    bert, gpt = str(contextual_runs["bert"][0]), str(contextual_runs["gpt"][0])
    assert api.kept_settings("bert", bert) == {"seq_len": 32, "dropout": 0.1, "mask_prob": 0.15, "whole_word": False,
                                               "nsp": True}
    assert api.kept_settings("gpt", gpt) == {"seq_len": 32, "dropout": 0.1}
    assert api.kept_settings("gpt", gpt, architecture=True)["hidden"] == 64
    assert api.kept_settings("gpt", bert) == {} and api.kept_settings("bert", "/no/such/run") == {}
    assert api.kept_settings("word2vec", bert) == {}
    assert api.said_settings({"whole_word": False, "dropout": 0.0, "seq_len": 64}) == "whole word off, dropout 0, seq len 64"


def test_a_continued_runs_history_begins_with_the_run_it_went_on_from(contextual_runs, new_text, tmp_path, monkeypatch):
    """Its step 0 is the earlier run's folder (the weights it began with: "did going on help?" reads off the
    Run history), found wherever the reader starts, and only while that folder still holds the save it began
    from (a shipped model replaced since is not where it began)."""
    import shutil

    from engine import api
    from engine.inspection.history_scores import checkpoint_scores

    earlier = tmp_path / "earlier"
    shutil.copytree(contextual_runs["gpt"][0], earlier)
    out = tmp_path / "on"
    monkeypatch.chdir(tmp_path)
    spec = tiny_spec("gpt", new_text, out, max_steps=4, init_from="earlier", keep_every=2, eval_every=2)
    assert list(api.train(spec))[-1].status == "completed"
    evals = [e for e in api.read_metrics(out) if isinstance(e, api.EvalMetrics)]
    assert [e.step for e in evals] == [0, 2, 4]  # its held-out curve begins at the weights it went on from
    assert evals[0].metrics["loss"] > 0
    monkeypatch.chdir("/")  # (its init_from, "earlier", named a folder of the directory it started in)
    history = api.run_history(out)
    assert [k.step for k in history] == [0, 2, 4]
    assert history[0].began_from == "earlier" and history[0].path == str(earlier.resolve())
    assert history[0].tokens() == 0 and history[1].began_from == "" and history[1].tokens() > 0
    rows = list(checkpoint_scores(out, ("senses",)))
    assert rows[0]["path"] == str(earlier.resolve()) and rows[0]["tokens_seen"] == 0
    assert all("best" in r.get("senses", {}) for r in rows), rows
    # the earlier folder saved into since: it no longer holds where the run began
    config = json.loads((earlier / "config.json").read_text())
    (earlier / "config.json").write_text(json.dumps({**config, "save_id": "another-save"}))
    assert [k.step for k in api.run_history(out)] == [2, 4]
    # a run that recorded no save (before it was recorded): the steps behind the folder tell, e.g. a shipped model
    # replaced by this very run's export is not where it began
    mine = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({k: v for k, v in mine.items() if k != "init_from_save"}))
    assert [k.step for k in api.run_history(out)] == [0, 2, 4]  # (trusted: its steps are those it began with)
    (earlier / "config.json").write_text(json.dumps({**config, "trained_steps": config["trained_steps"] + 4,
                                                     "init_from_steps": 0}))
    assert [k.step for k in api.run_history(out)] == [2, 4]
    shutil.rmtree(earlier)
    assert [k.step for k in api.run_history(out)] == [2, 4]


def test_a_continued_run_before_its_first_save_begins_at_the_run_it_went_on_from(contextual_runs, new_text, tmp_path):
    """Before a run's first save (no config.json yet) where it went on from is read off what its start logged;
    a run that went on from nothing and has not saved holds no checkpoints, and says so."""
    import shutil

    from engine import api

    earlier = contextual_runs["gpt"][0]
    out = tmp_path / "on"
    spec = tiny_spec("gpt", new_text, out, max_steps=2, init_from=str(earlier))
    assert list(api.train(spec))[-1].status == "completed"
    for name in ("config.json", "model.safetensors", "checkpoints"):  # as it was before it saved
        shutil.rmtree(out / name) if (out / name).is_dir() else (out / name).unlink(missing_ok=True)
    history = api.run_history(out)
    assert [(k.step, k.path, k.began_from) for k in history] == [(0, str(earlier.resolve()), str(earlier))]
    lines = (out / "metrics.jsonl").read_text().splitlines()
    started = json.loads(lines[0])
    del started["info"]["init_from"]
    (out / "metrics.jsonl").write_text("\n".join([json.dumps(started), *lines[1:]]) + "\n")
    with pytest.raises(api.CheckpointError, match="holds no checkpoints"):
        api.run_history(out)
