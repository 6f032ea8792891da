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


def test_a_trainer_style_folder_of_checkpoints_is_a_run(contextual_runs, tmp_path):
    from engine.cli.export import export_hf

    root = tmp_path / "trainer-run"
    root.mkdir()
    for step in (500, 1000):
        export_hf(contextual_runs["bert"][0], root / f"checkpoint-{step}")
    (root / "checkpoint-1500").mkdir()  # a checkpoint cut off before its config: not listed
    shutil.copy(root / "checkpoint-500" / "config.json", root / "notes.json")
    assert [(k.step, k.path.endswith(f"checkpoint-{k.step}")) for k in run_history(root)] == [(500, True), (1000, True)]
