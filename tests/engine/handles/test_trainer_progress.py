"""How far a Hugging Face Trainer run has got, from its folder alone: what the Run history follows it by."""

import json
from dataclasses import astuple


def state(folder, **fields):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": [], **fields}), encoding="utf-8")


def test_a_trainer_run_has_ended_at_its_max_steps_or_when_its_folder_holds_the_final_state(tmp_path):
    from engine.api import trainer_progress, trainer_saved_step

    assert astuple(trainer_progress(tmp_path / "none")) == (-1, True, 0.0)  # no run: nothing to follow
    run = tmp_path / "run"
    (run / "checkpoint-100").mkdir(parents=True)  # its weights being written: no state yet
    assert trainer_progress(run).saved_step == -1 and trainer_progress(run).ended
    state(run / "checkpoint-50", global_step=50, max_steps=200)
    now = trainer_progress(run)
    assert now.saved_step == 50 and not now.ended and now.written > 0
    state(run / "checkpoint-100", global_step=100, max_steps=200)
    assert trainer_progress(run).saved_step == 100 and not trainer_progress(run).ended
    assert trainer_saved_step(run) == 100 and trainer_saved_step(tmp_path / "none") == -1
    state(run, global_step=150, max_steps=200)  # save_state at the end (stopped early, say)
    assert trainer_progress(run).ended
    other = tmp_path / "other"
    state(other / "checkpoint-200", global_step=200, max_steps=200)
    assert trainer_progress(other).ended
    state(other / "checkpoint-300")  # a state that does not say how far it goes: not followed
    assert trainer_progress(other).saved_step == 300 and trainer_progress(other).ended
    (other / "checkpoint-400").mkdir()
    (other / "checkpoint-400" / "trainer_state.json").write_text("{cut short", encoding="utf-8")
    assert astuple(trainer_progress(other)) == (400, False, 0.0)  # read again at the next look
