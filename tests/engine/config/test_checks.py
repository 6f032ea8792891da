"""Hand-edited or hostile config.json values: every case a CheckpointError naming the file and the field,
before anything is allocated (issue: malformed checkpoints)."""

import json
import os
import shutil

import pytest

from engine import api


@pytest.fixture
def bert_copy(contextual_runs, tmp_path):
    run = tmp_path / "bert"
    shutil.copytree(contextual_runs["bert"][0], run)
    return run


def edit(run, change):
    path = run / "config.json"
    config = json.loads(path.read_text())
    change(config)
    path.write_text(json.dumps(config))


CASES = {
    "kind a list": (lambda c: c.update(kind=["bert"]), "'kind' must name"),
    "model missing": (lambda c: c.pop("model"), "must be a JSON object"),
    "model null": (lambda c: c.update(model=None), "must be a JSON object"),
    "hidden as text": (lambda c: c["model"].update(hidden="256"), "'hidden' must be a whole number"),
    "hidden fractional": (lambda c: c["model"].update(hidden=256.5), "'hidden' must be a whole number"),
    "no heads": (lambda c: c["model"].update(heads=0), "heads must be at least 1"),
    "heads not dividing": (lambda c: c["model"].update(heads=3), "multiple of heads"),
    "negative hidden": (lambda c: c["model"].update(hidden=-256), "hidden must be at least 1"),
    "hidden 1e9": (lambda c: c["model"].update(hidden=1e9), "'hidden' must be a whole number"),
    "vocabulary 1e12": (lambda c: c["model"].update(vocab_size=10**12), "no model of this kind is that large"),
    # ten million layers of the tiny BERT: 1.3 TB of weights, more than any machine has (a million was
    # 122 GB, which a 128 GB GPU machine tried to build)
    "layers ten million": (lambda c: c["model"].update(layers=10_000_000), "GB for its weights"),
    # a thousand layers fit any machine's memory but not this run's file: refused before anything is built
    "layers a thousand": (lambda c: c["model"].update(layers=1000), "does not belong to these weights"),
    "kind says glove": (lambda c: c.update(kind="glove"), "unknown glove settings"),
    "tokenizer escaping": (lambda c: c.update(tokenizer="../../etc/passwd"), "must name a file in the run folder"),
    "tokenizer missing": (lambda c: c.update(tokenizer="nothing.json"), "no tokenizer"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_values_are_refused_by_name(bert_copy, case):
    change, expected = CASES[case]
    edit(bert_copy, change)
    with pytest.raises(api.CheckpointError, match=expected.replace("(", r"\(").replace(")", r"\)")) as info:
        api.load(bert_copy)
    assert str(bert_copy) in str(info.value)


def test_config_files_that_are_not_files_are_refused(bert_copy, tmp_path):
    config = bert_copy / "config.json"
    config.unlink()
    config.mkdir()
    with pytest.raises(api.CheckpointError, match="not a regular file"):
        api.load(bert_copy)
    config.rmdir()
    os.mkfifo(config)  # reading a FIFO would hang
    with pytest.raises(api.CheckpointError, match="not a regular file"):
        api.load(bert_copy)
    config.unlink()
    config.symlink_to("/dev/zero")  # endless
    with pytest.raises(api.CheckpointError, match="not a regular file"):
        api.load(bert_copy)
    config.unlink()
    config.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(api.CheckpointError, match="nested too deeply|not a JSON object|not valid JSON"):
        api.load(bert_copy)


def test_the_cli_and_the_form_use_the_same_checks(tmp_path):
    assert api.check_settings("bert", {"heads": 3}) == ["hidden (256) must be a multiple of heads (3)"]
    with pytest.raises(ValueError, match="whole number"):
        api.RunSpec("bert", out=str(tmp_path / "x"), model={"hidden": "256"})


def _json_values():
    from hypothesis import strategies as st

    scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**15), max_value=10**15),
                        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20))
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                        max_leaves=6)


def test_any_json_value_in_any_field_loads_or_is_refused_clearly(bert_copy):
    """Property: a config.json whose one field holds an arbitrary JSON value either loads or raises
    CheckpointError (never another exception, never a huge allocation)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    path = bert_copy / "config.json"
    original = path.read_text()
    config = json.loads(original)
    fields = [("model", k) for k in config["model"]] + [(k,) for k in config if k != "model"]

    @settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
    @given(field=st.sampled_from(fields), value=_json_values())
    def check(field, value):
        changed = json.loads(original)
        target = changed["model"] if len(field) == 2 else changed
        target[field[-1]] = value
        path.write_text(json.dumps(changed))
        try:
            api.load(bert_copy)
        except api.CheckpointError:
            pass
        finally:
            path.write_text(original)

    check()
