"""Weight averaging (word2bert-export RUN --to slim OUT --average-with SAVE…): the shipped copy holds the
mean of the saves' weights, says so, loads and fills masks; saves of one lineage of continued pretraining are
averaged; saves with no start in common are refused."""

import json
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file

from engine import api
from engine.cli.export import export_main
from engine.config.run_spec import RunSpec
from engine.config.settings import model_config
from tests.conftest import tiny_spec


def adapted_run(out, corpus, train_layers=1, lr=1e-3, seed=0):
    cfg = model_config("mlm-head", train_layers=train_layers, seq_len=24, batch_size=4, eval_every=0, warmup=1, lr=lr)
    events = list(api.train(RunSpec("mlm-head", out=str(out), corpus=str(corpus), model=cfg, max_steps=2,
                                    log_every=1, seed=seed)))
    assert events[-1].status == "completed"
    return out


def test_an_averaged_slim_copy_holds_the_mean_of_the_saves_and_says_so(topic_corpus, tmp_path):
    a = adapted_run(tmp_path / "a", topic_corpus)
    b = adapted_run(tmp_path / "b", topic_corpus, lr=3e-3, seed=1)  # same base, another run
    assert export_main([str(a), "--to", "slim", str(tmp_path / "soup"), "--average-with", str(b)]) == 0
    wa, wb = load_file(str(a / "model.safetensors")), load_file(str(b / "model.safetensors"))
    soup = load_file(str(tmp_path / "soup" / "model.safetensors"))
    assert set(soup) == set(wa)
    moved = [k for k in wa if not torch.equal(wa[k], wb[k])]
    assert moved  # the two runs learned differently: the mean is neither
    for k in moved[:5]:
        torch.testing.assert_close(soup[k].float(), (wa[k] + wb[k]) / 2, rtol=0, atol=2e-3)  # fp16
    config = json.loads((tmp_path / "soup" / "config.json").read_text())
    assert [s["path"] for s in config["averaged"]] == [str(a), str(b)] and "metrics" not in config
    handle = api.load(tmp_path / "soup")
    assert "mean of 2 saves" in handle.info["description"]
    assert len(handle.fill_mask("the cat sat on the [MASK] .", k=5)[0].tokens) == 5


def test_saves_without_a_common_start_are_refused(topic_corpus, contextual_runs, tmp_path, capsys):
    bert = contextual_runs["bert"][0]
    kept = sorted((bert / "checkpoints").iterdir())
    assert kept  # a run with its own kept checkpoints: that is averaged
    assert export_main([str(bert), "--to", "slim", str(tmp_path / "ok"), "--average-with", str(kept[0])]) == 0
    other = tmp_path / "other-bert"
    list(api.train(tiny_spec("bert", topic_corpus, other, max_steps=2)))
    assert export_main([str(bert), "--to", "slim", str(tmp_path / "x"), "--average-with", str(other)]) == 2
    assert "random starts are not averaged" in capsys.readouterr().err
    assert export_main([str(bert), "--to", "slim", str(tmp_path / "y"), "--average-with",
                        str(contextual_runs["gpt"][0])]) == 2
    assert "cannot average a bert" in capsys.readouterr().err
    one, two = adapted_run(tmp_path / "one", topic_corpus), adapted_run(tmp_path / "two", topic_corpus, train_layers=2)
    assert export_main([str(one), "--to", "slim", str(tmp_path / "z"), "--average-with", str(two)]) == 2
    assert "trained other layers" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "z").exists()  # nothing half-written


def test_average_with_goes_with_a_slim_copy_only(contextual_runs, tmp_path):
    bert = str(contextual_runs["bert"][0])
    with pytest.raises(SystemExit):
        export_main([bert, "--to", "hf", str(tmp_path / "hf"), "--average-with", bert])


def test_saves_of_one_lineage_of_continued_pretraining_are_averaged(topic_corpus, tmp_path, capsys):
    """A run that went on from another (--init-from) shares its start: it is averaged with that run, with a run
    that went on from it in turn, and with a sibling that went on from the same save (bert-tiny's continued runs:
    the mean of the shipped weights and a run continued from them was refused as "random starts")."""
    def run(out, seed, init_from=""):
        spec = replace(tiny_spec("bert", topic_corpus, out, max_steps=2, init_from=init_from), seed=seed)
        assert list(api.train(spec))[-1].status == "completed"
        return out

    first = run(tmp_path / "first", 0)
    child = run(tmp_path / "child", 1, str(first))
    grandchild = run(tmp_path / "grandchild", 2, str(child))
    sibling = run(tmp_path / "sibling", 3, str(first))
    for i, (a, b) in enumerate([(first, child), (grandchild, first), (child, sibling)]):
        assert export_main([str(a), "--to", "slim", str(tmp_path / f"mean-{i}"), "--average-with", str(b)]) == 0
    stranger = run(tmp_path / "stranger", 4)
    assert export_main([str(child), "--to", "slim", str(tmp_path / "x"), "--average-with", str(stranger)]) == 2
    assert "random starts are not averaged" in capsys.readouterr().err
    (first / "config.json").write_text((first / "config.json").read_text().replace(
        json.loads((first / "config.json").read_text())["save_id"], "another-save"))  # first saved again since
    assert export_main([str(grandchild), "--to", "slim", str(tmp_path / "y"), "--average-with", str(first)]) == 2
