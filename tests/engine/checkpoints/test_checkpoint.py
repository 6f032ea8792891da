"""Run folders: pickles refused, damaged/foreign/newer folders and wrong shapes explained."""

import json
from pathlib import Path

import pytest

from engine import api
from engine.config.run_spec import RunSpec
from engine.errors import CheckpointError
from tests.engine.helpers import run, w2v_spec  # noqa: F401


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
