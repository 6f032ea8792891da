"""Saves are all or nothing: a kill at any moment of a save, a save cut short after its commit, or a full
disk leaves a run that loads (the previous or the new save, never a mix) and no temporary files."""

import errno
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from engine import api
from engine.checkpoints.files import WEIGHTS
from engine.checkpoints.reading import read_config, read_tensors
from engine.checkpoints.saves import STAGING, finish_interrupted_save, save_run
from engine.errors import CheckpointError, SaveError
from tests.engine.helpers import w2v_spec

SAVER = """
import sys, torch
from engine.checkpoints.saves import save_run
run = sys.argv[1]
big = {"w": torch.randn(400, 1000), "b": torch.randn(1000)}
step = 0
def tokenizer(path):
    path.write_text("x" * 200_000)
print("ready", flush=True)
while True:
    step += 1
    save_run(run, "word2vec", {"model": {}, "trained_steps": step}, big, files={"tokenizer.json": tokenizer},
             training_state={"step": step, "opt": big})
"""


def loads_whole(run_dir):
    config = read_config(run_dir)
    tensors = read_tensors(run_dir, config)  # same save_id in config.json and the weights
    assert set(tensors) == {"w", "b"}
    assert torch.load(run_dir / "training_state.pt", weights_only=True)["step"] == config["trained_steps"]
    return config["trained_steps"]


def test_kill_9_at_random_moments_of_saves_never_loses_the_run(tmp_path):
    run_dir = tmp_path / "run"
    rng = random.Random(0)
    last = 0
    for _ in range(12):
        proc = subprocess.Popen([sys.executable, "-c", SAVER, str(run_dir)], stdout=subprocess.PIPE, text=True,
                                cwd=os.getcwd(), env={**os.environ, "PYTHONPATH": os.getcwd()})
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.6))  # somewhere inside one of the saves
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if not (run_dir / "config.json").exists() and not (run_dir / STAGING).exists():
            continue  # killed before its first save began
        step = loads_whole(run_dir)  # finishes or drops the interrupted save, then loads
        assert step >= 1
        assert not (run_dir / STAGING).exists()
        assert not [p.name for p in run_dir.iterdir() if ".tmp" in p.name]  # no temporary files left
        last = step
    assert last >= 1


def test_a_save_cut_short_after_its_commit_is_finished_on_load(tmp_path, monkeypatch):
    import engine.checkpoints.saves as checkpoint

    run_dir = tmp_path / "run"
    save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 1}, {"w": torch.zeros(3)}, training_state={"step": 1})
    real_commit = checkpoint._commit

    def killed_mid_commit(folder):  # the weights moved into place, then the process died
        os.replace(folder / STAGING / WEIGHTS, folder / WEIGHTS)
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint, "_commit", killed_mid_commit)
    with pytest.raises(KeyboardInterrupt):
        save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 2}, {"w": torch.ones(3)}, training_state={"step": 2})
    monkeypatch.setattr(checkpoint, "_commit", real_commit)
    assert (run_dir / STAGING).is_dir()  # new weights, old config.json: a mix until the save is finished
    config = read_config(run_dir)
    assert config["trained_steps"] == 2 and read_tensors(run_dir, config)["w"].sum() == 3
    assert not finish_interrupted_save(run_dir)  # nothing left to do


def test_a_save_killed_before_its_commit_keeps_the_previous_one(tmp_path):
    run_dir = tmp_path / "run"
    save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 1}, {"w": torch.zeros(3)})
    stage = run_dir / STAGING
    stage.mkdir()
    (stage / WEIGHTS).write_bytes(b"half a file")  # what a kill during the next save leaves
    (run_dir / ".model.safetensors.tmp123-456.safetensors").write_bytes(b"x" * 1000)  # an older version's stray
    config = read_config(run_dir)
    assert config["trained_steps"] == 1 and read_tensors(run_dir, config)["w"].sum() == 0
    assert sorted(p.name for p in run_dir.iterdir()) == ["config.json", "model.safetensors"]


def test_a_full_disk_says_so_and_keeps_the_previous_save(tmp_path):
    run_dir = tmp_path / "run"
    save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 1}, {"w": torch.zeros(3)})

    def no_space(path):
        path.write_bytes(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(SaveError, match="disk is full.*previous checkpoint is intact"):
        save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 2}, {"w": torch.ones(3)},
                 files={"vocab.txt": no_space})
    config = read_config(run_dir)
    assert config["trained_steps"] == 1 and read_tensors(run_dir, config)["w"].sum() == 0
    assert sorted(p.name for p in run_dir.iterdir()) == ["config.json", "model.safetensors"]


def test_a_training_run_on_a_full_disk_ends_failed_with_the_reason(topic_corpus, tmp_path, monkeypatch):
    import safetensors.numpy
    import safetensors.torch

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safetensors.torch, "save_file", disk_full)
    monkeypatch.setattr(safetensors.numpy, "save_file", disk_full)  # word2vec on a CPU saves numpy arrays
    events = list(api.train(w2v_spec(topic_corpus, tmp_path / "w2v")))
    last = events[-1]
    assert isinstance(last, api.RunFinished) and last.status == "failed"
    assert "disk is full" in last.message
    assert "failed" in (tmp_path / "w2v" / "metrics.jsonl").read_text()  # the event is in the run's log too


HOLDER = """
import sys, time
from pathlib import Path
from engine.checkpoints.file_lock import hold
lock = hold(Path(sys.argv[1]), "writer")
print("locked", flush=True)
time.sleep(60)
"""


def lock_in_another_process(path):
    """A live process holding the writer's lock on ``path`` (a training process saving while the app reads)."""
    other = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True)
    assert other.stdout is not None and other.stdout.readline().strip() == "locked"
    return other


def test_a_save_in_flight_in_another_process_is_left_alone(tmp_path):
    from engine.checkpoints.saves import OWNER

    run_dir = tmp_path / "run"
    save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 1}, {"w": torch.zeros(3)})
    stage = run_dir / STAGING
    stage.mkdir()
    other = lock_in_another_process(stage / OWNER)
    try:
        (stage / WEIGHTS).write_bytes(b"being written")
        config = read_config(run_dir)
        assert config["trained_steps"] == 1 and (stage / WEIGHTS).exists()  # read the last save, kept theirs
    finally:
        other.kill()
        other.wait()
    assert read_config(run_dir)["trained_steps"] == 1 and not (run_dir / STAGING).exists()  # now it is dropped


def test_leftovers_named_for_a_live_process_id_are_still_cleaned(tmp_path):
    """Process ids are reused: a dead save's files named for an id that a live process now has are
    leftovers all the same (only a held lock says a writer is alive)."""
    from engine.checkpoints.saves import OWNER

    run_dir = tmp_path / "run"
    save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 1}, {"w": torch.zeros(3)})
    live = os.getppid()  # alive for certain, and not this process
    stage = run_dir / STAGING
    stage.mkdir()
    (stage / OWNER).write_text(str(live))  # what a killed save of an older version, or a reused id, leaves
    (stage / WEIGHTS).write_bytes(b"half a file")
    (run_dir / f".model.safetensors.tmp{live}-1.safetensors").write_bytes(b"x" * 100)
    assert read_config(run_dir)["trained_steps"] == 1
    assert sorted(p.name for p in run_dir.iterdir()) == ["config.json", "model.safetensors"]


@pytest.mark.skipif(os.name != "posix", reason="temporary files are locked on POSIX only")
def test_a_temporary_file_a_live_writer_holds_is_left_alone(tmp_path):
    run_dir = tmp_path / "run"
    save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 1}, {"w": torch.zeros(3)})
    stray = run_dir / ".report.json.tmp1-1.json"
    stray.write_bytes(b"being written")
    other = lock_in_another_process(stray)
    try:
        assert not finish_interrupted_save(run_dir) and stray.exists()
    finally:
        other.kill()
        other.wait()
    assert finish_interrupted_save(run_dir) and not stray.exists()


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_saved_files_get_the_usual_permissions_not_private_ones(tmp_path):
    """safetensors writes its files 0600: a checkpoint folder copied or shared would not be readable."""
    from engine.checkpoints.files import FILE_MODE

    save_run(tmp_path / "run", "word2vec", {"model": {}, "trained_steps": 1}, {"w": torch.zeros(3)},
             training_state={"step": 1})
    for name in (WEIGHTS, "config.json", "training_state.pt"):
        assert (tmp_path / "run" / name).stat().st_mode & 0o777 == FILE_MODE, name  # 0o644 under umask 022


def test_a_training_state_names_its_layout_and_a_newer_one_is_refused_by_name(tmp_path):
    from engine.checkpoints.files import STATE_LAYOUT
    from engine.checkpoints.reading import read_training_state

    run_dir = tmp_path / "run"
    save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 1}, {"w": torch.zeros(3)}, training_state={"step": 1})
    assert read_training_state(run_dir) == {"step": 1, "layout": STATE_LAYOUT}
    save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 2}, {"w": torch.zeros(3)},
             training_state={"step": 2, "layout": STATE_LAYOUT + 1})  # what a later version would write
    with pytest.raises(CheckpointError, match="saved by a newer word2bert"):
        read_training_state(run_dir)


WRITER = """
import sys
from pathlib import Path
from engine.checkpoints.reading import read_config, read_tensors
from engine.checkpoints.saves import save_run
import time
run, first, done = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
config = read_config(run)
base = read_tensors(run, config, framework="np")
config = {k: v for k, v in config.items() if k not in ("format_version", "kind", "engine_version", "save_id")}
end, i = time.monotonic() + 120, first
while True:  # a training process saving again and again: every weight of save i is i
    weights = {k: (v * 0 + i).astype(v.dtype) if v.dtype.kind == "f" else v for k, v in base.items()}
    save_run(run, "word2vec", {**config, "trained_steps": i}, weights)
    i += 1
    if done.exists() or time.monotonic() > end:  # the reader has read enough (or has gone)
        break
"""


def test_a_run_being_saved_into_is_read_as_one_complete_save_at_a_time(runs, tmp_path):
    """The app reading a run while a training process writes checkpoints into it: no load fails with a
    mix of two saves, and what is read is one save (its weights and its config.json agree)."""
    import shutil

    from engine.checkpoints.reading import read_complete

    run_dir = tmp_path / "run"
    shutil.copytree(runs["word2vec"][0], run_dir)
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = tmp_path / "enough"
    done.touch()  # the first writer saves once
    subprocess.run([sys.executable, "-c", WRITER, str(run_dir), "0", str(done)], cwd=root, env=env, check=True)
    done.unlink()
    api.load(run_dir)  # the loader's imports made before the writer starts
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(run_dir), "1", str(done)], cwd=root, env=env,
                              stderr=subprocess.PIPE, text=True)

    def one_save():
        config = read_config(run_dir)
        return config, read_tensors(run_dir, config, framework="np")

    seen, loads = set(), 0
    try:  # reads while the writer saves, however slow this machine: the writer stops when told
        while writer.poll() is None and (loads < 20 or len(seen) < 3):
            config, weights = read_complete(run_dir, one_save)
            step = config["trained_steps"]
            assert all((w == step).all() for w in weights.values() if w.dtype.kind == "f"), step  # one save's
            seen.add(step)
            assert api.load(run_dir).info["trained_steps"] >= step  # never "come from different saves"
            loads += 1
    finally:
        done.touch()
        writer.wait(timeout=120)
    assert writer.returncode == 0, writer.stderr.read()
    assert loads >= 20 and len(seen) >= 3, (loads, seen)  # all while the writer saved


def test_a_run_saved_into_during_every_read_is_refused_not_read_mixed(tmp_path):
    """A reader slower than the saves: after its wait it says so (MixedSave), never returns what it read
    across two saves."""
    from engine.checkpoints.reading import MixedSave, read_complete

    run_dir = tmp_path / "run"
    save_run(run_dir, "word2vec", {"model": {}, "trained_steps": 0}, {"w": torch.zeros(3)})
    reads = []

    def read_while_a_save_lands():
        reads.append(read_config(run_dir)["trained_steps"])
        save_run(run_dir, "word2vec", {"model": {}, "trained_steps": len(reads)}, {"w": torch.zeros(3)})
        return reads[-1]

    with pytest.raises(MixedSave, match="saved into it during every read"):
        read_complete(run_dir, read_while_a_save_lands, wait_s=0.3)
    assert len(reads) >= 2  # it read again before giving up
