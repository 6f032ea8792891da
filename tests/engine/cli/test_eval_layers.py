"""``word2bert-eval A --against B``: the layer similarity table from the command line, and along a run."""

import json

import numpy as np


def test_every_layer_against_every_layer_as_json_and_as_a_table(contextual_runs, topic_corpus, capsys):
    from engine.cli.eval import eval_main

    bert, gpt = (str(contextual_runs[k][0]) for k in ("bert", "gpt"))
    common = ["--against", gpt, "--sentences", "20", "--corpus", str(topic_corpus)]
    assert eval_main([bert, *common, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    cka = np.array(out["cka"])
    assert out["against"] == "gpt" and cka.shape[0] >= 2 and cka.shape[1] >= 2 and out["words"] > 50
    assert np.all(cka <= 1.0 + 1e-9) and out["debiased"] is False
    assert eval_main([bert, *common, "--debiased"]) == 0
    text = capsys.readouterr().out
    assert "(debiased)" in text and text.splitlines()[1].split() == ["input", *sum(
        (["layer", str(i)] for i in range(1, cka.shape[1])), [])]


def test_along_a_run_each_checkpoint_against_its_last_save_ends_at_one(contextual_runs, topic_corpus, capsys):
    from engine.cli.eval import eval_main

    run = str(contextual_runs["bert"][0])
    assert eval_main([run, "--all-checkpoints", "--against", run, "--sentences", "20", "--corpus", str(topic_corpus),
                      "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["step"] for r in rows] == sorted(r["step"] for r in rows) and len(rows) >= 2
    np.testing.assert_allclose(rows[-1]["settled"], 1.0, atol=1e-6)  # the last save is the run itself
    assert min(rows[0]["settled"][1:]) < 0.9999  # an earlier checkpoint's layers were elsewhere


def test_a_model_that_cannot_is_refused_with_why(contextual_runs, capsys):
    from engine.cli.eval import eval_main

    assert eval_main(["glove-6b-50d", "--against", str(contextual_runs["bert"][0]), "--sentences", "20"]) == 2
    assert "word2bert-eval:" in capsys.readouterr().err
