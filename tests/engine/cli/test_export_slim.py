"""A slim copy keeps what answers: word2vec's vectors (its family declares them), not its training
matrices; it loads and answers as the run does."""

from engine import api
from engine.checkpoints.reading import read_config, read_tensors
from engine.cli.export import export_slim


def test_a_slim_word2vec_keeps_its_vectors_only_and_answers_as_the_run(runs, tmp_path):
    run_dir = runs["word2vec"][0]
    slim = export_slim(run_dir, tmp_path / "slim")
    config = read_config(slim)
    assert config["weights"] == "inference"
    assert set(read_tensors(slim, config)) == {"vectors"}
    assert set(read_tensors(run_dir, read_config(run_dir))) >= {"vectors", "syn0", "syn1"}
    ours, theirs = api.load(run_dir), api.load(slim)
    a, b = ours.static_neighbours("piano", 5), theirs.static_neighbours("piano", 5)
    # fp16 weights: near-ties may swap places, so the scores are compared rank by rank
    assert all(abs(x.similarity - y.similarity) < 1e-2 for x, y in zip(a, b, strict=True))


def test_a_slim_glove_keeps_every_weight(runs, tmp_path):
    run_dir = runs["glove"][0]
    slim = export_slim(run_dir, tmp_path / "slim")
    assert "weights" not in read_config(slim)
    assert set(read_tensors(slim, read_config(slim))) == set(read_tensors(run_dir, read_config(run_dir)))


def test_a_slim_copy_of_a_continued_run_names_its_source_but_not_where_it_lay(runs, tmp_path):
    import json
    import shutil

    run_dir = tmp_path / "continued"
    shutil.copytree(runs["glove"][0], run_dir)
    config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    config.update(init_from="glove-small", init_from_steps=40, init_from_folder=str(tmp_path / "somewhere"),
                  init_from_save="abc")
    (run_dir / "config.json").write_text(json.dumps(config), encoding="utf-8")
    slim = read_config(export_slim(run_dir, tmp_path / "slim"))
    assert (slim["init_from"], slim["init_from_steps"]) == ("glove-small", 40)
    assert "init_from_folder" not in slim
