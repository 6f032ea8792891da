"""Model settings: described for forms and checked in words."""



from engine import api
from tests.engine.helpers import run, w2v_spec  # noqa: F401


def test_settings_are_described_and_checked_for_every_family():

    for kind in api.model_kinds():
        settings = api.model_settings(kind, "small" if kind in ("bert", "gpt", "elmo") else None)
        assert settings and api.check_settings(kind, {s.name: s.value for s in settings}) == []
    bert = {s.name: s for s in api.model_settings("bert", "base")}
    assert bert["layers"].value == 12 and bert["hidden"].type == "int" and bert["nsp"].type == "bool"
    assert "next-sentence" in bert["nsp"].help and bert["preset"].choices == ("tiny", "small", "base")
    assert api.check_settings("bert", {"mask_prob": 1.5, "seq_len": 600, "lr": 0.0}) == [
        "lr must be above 0 (it is 0.0)", "mask_prob must be at least 0 and below 1 (it is 1.5)",
        "seq_len (600) cannot exceed max_len (512)"]
    assert api.check_settings("word2vec", {"hs": 0, "negative": 0}) and api.check_settings("elmo", {"filters": "3x"})
    assert api.check_settings("gpt", {"no_such": 1}) == ["gpt has no setting 'no_such'"]


def test_a_familys_help_is_read_from_its_source_once_and_handed_out_as_a_copy(monkeypatch):
    """The settings form asks for a family's settings at every change of model on the Pretrain tab, on the window's
    thread; reading the help from the source each time was most of that change's time. Read once, the help stays
    the same, and a caller that edits what it was given changes nothing for the next."""
    import inspect

    from engine.config.settings import field_help

    first = field_help("word2vec")
    assert first["sg"]  # a comment beside the setting
    read: list[object] = []
    real = inspect.getsource
    monkeypatch.setattr(inspect, "getsource", lambda obj: (read.append(obj), real(obj))[1])
    first["sg"] = "changed by a caller"
    again = field_help("word2vec")
    assert again["sg"] and again["sg"] != "changed by a caller"
    assert {s.name: s.help for s in api.model_settings("word2vec")}["sg"] == again["sg"]
    assert not read  # not read from the source again
