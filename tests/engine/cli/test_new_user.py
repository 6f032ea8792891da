"""What a new user met on a fresh machine (issue 37, item 6): a bad step count refused before any work,
no empty run folder after a failed start, a misspelt model name answered with the right one, a stopped
run's exit status and its resume step, and results printed for people."""

import json
import re

import pytest

from engine import api
from engine.cli.eval import eval_main
from engine.cli.train import train_main
from engine.errors import CheckpointError


@pytest.mark.parametrize("value", ["-1", "0"])
def test_a_step_count_below_one_is_refused_before_anything_is_built(value, tmp_path, capsys):
    out = tmp_path / "bad"
    assert train_main(["bert", "--preset", "tiny", "--max-steps", value, "--out", str(out)]) == 2
    assert f"max steps must be a whole number of at least 1, not {value}" in capsys.readouterr().err
    assert not out.exists()  # no tokenizer trained, no folder left


def test_a_run_that_cannot_read_its_corpus_leaves_no_folder(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    for corpus in (str(tmp_path / "missing.txt"), str(empty)):
        out = tmp_path / "run"
        assert train_main(["word2vec", "--corpus", corpus, "--out", str(out)]) == 2
        assert not out.exists(), corpus
    assert "word2bert-train:" in capsys.readouterr().err


def test_a_misspelt_model_name_is_answered_with_the_closest_name():
    with pytest.raises(CheckpointError, match="did you mean bert-tiny\\?") as refused:
        api.load("bert-tinny")
    assert "minilm-mlm" in str(refused.value) and "glove-6b-50d" in str(refused.value)  # every name, shipped too
    with pytest.raises(CheckpointError, match="did you mean glove-6b-50d\\?"):
        api.load("glove-6b-5Od")
    with pytest.raises(CheckpointError) as far:
        api.load("no-such-thing-at-all")
    assert "did you mean" not in str(far.value)


def test_a_stopped_run_exits_4_and_its_resume_says_where_it_goes_on(topic_corpus, tmp_path, capsys):
    out = tmp_path / "w2v"
    settings = ["--dim", "10", "--min-count", "2", "--epochs", "3", "--workers", "1"]
    assert train_main(["word2vec", "--corpus", str(topic_corpus), "--out", str(out), "--max-steps", "2", *settings]) == 4
    first = capsys.readouterr().err
    assert "stopped" in first and "corpus words × 3 epochs" in first  # the corpus once, not the words of every epoch
    step = json.loads((out / "config.json").read_text())["trained_steps"]
    assert train_main(["--resume", str(out)]) == 0
    assert f"resuming from step {step}" in capsys.readouterr().err


def test_eval_prints_scores_for_people_and_every_digit_as_json(contextual_runs, capsys):
    run = str(contextual_runs["bert"][0])
    assert eval_main([run, "--tasks", "cloze"]) == 0
    text = capsys.readouterr().out
    line = next(x for x in text.splitlines() if x.startswith("cloze: "))
    assert "{" not in text and not re.search(r"\d\.\d{5,}", text), text  # no Python dicts, no 16 digits
    assert re.fullmatch(r"cloze: cloze_top1 [\d.e-]+, cloze_top10 [\d.e-]+, cloze_items 102, cloze_copied [\d.e-]+", line), line
    assert eval_main([run, "--tasks", "cloze", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cloze"]["cloze_items"] == 102


def test_eval_without_tasks_scores_what_the_model_can_take(contextual_runs, capsys):
    """`word2bert-eval RUN` on a BERT run printed three "skipped: bert has no static word vectors" lines: the
    word-vector tests were the default whatever the model. Now a masked LM gets the cloze and sense sets, a GPT
    its senses and held-out perplexity."""
    assert eval_main([str(contextual_runs["bert"][0]), "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert {"cloze", "senses"} <= set(result) and "analogy" not in result
    assert result["cloze"]["cloze_items"] == 102 and "choose with --tasks" in captured.err
    assert eval_main([str(contextual_runs["gpt"][0]), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["perplexity"]["perplexity"] > 1 and "senses" in result and "cloze" not in result
