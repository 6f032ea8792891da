"""load(): built-in names and shipped defaults come described by the catalog (what, trained on, headline
scores), and each view's role lists loadable models."""

import os

import pytest

from engine import api


def test_defaults_and_builtins_say_what_they_are():
    for name in ("glove-6b-50d", *api.default_checkpoints()):
        info = api.load(name).info
        assert info.get("what") and info.get("trained") and info.get("headline"), name


def test_every_model_a_role_names_can_be_loaded_by_name():
    known = set(api.BUILTIN_MODELS) | set(api.default_checkpoints())
    for role in ("masked_lm", "next_token", "contextual"):
        names = api.preferred_models(role)
        if not names and os.environ.get("WORD2BERT_GPU_CHECK"):  # the GPU machine gets the tree without the
            pytest.skip(f"needs a shipped {role} checkpoint, not on this machine")  # bigger checkpoints
        assert names and set(names) <= known, role
    assert api.preferred_models("no-such-role") == []


def test_a_preferred_model_missing_from_this_install_is_passed_over(monkeypatch):
    from engine.handles import load as loading

    listed = [n for n in api.catalog()["roles"]["masked_lm"] if n not in api.BUILTIN_MODELS]
    assert listed, "the catalog prefers a shipped masked LM"
    left = listed[0]  # every shipped checkpoint the catalog names is here but this one
    monkeypatch.setattr(loading, "default_checkpoints", lambda: sorted(set(api.catalog()["models"]) - {left}))
    preferred = api.preferred_models("masked_lm")
    assert left not in preferred and preferred == [n for n in api.catalog()["roles"]["masked_lm"] if n != left]


def test_a_model_that_would_not_fit_in_free_memory_is_refused_with_what_to_do(monkeypatch, contextual_runs):
    import pytest

    from engine.handles import load as loading

    run = contextual_runs["bert"][0]
    monkeypatch.setattr(loading, "free_memory", lambda: 1024)  # 1 KB free: nothing fits
    for model in ("bert-tiny", str(run)):
        with pytest.raises(api.InputError, match="not enough memory to load .*unload a model"):
            api.load(model)
    monkeypatch.setattr(loading, "free_memory", lambda: None)  # a system that does not say: no guess, it loads
    assert api.load(str(run)).name == "bert"
    monkeypatch.setattr(loading, "free_memory", lambda: 64 * 2**30)
    assert api.load("bert-tiny").name == "bert-tiny"


def test_a_shipped_contextual_model_opens_at_its_last_layer_unless_an_earlier_one_is_clearly_better():
    """The catalog's sense layer is the measured one: an earlier layer only where it tells the development sense set's
    senses apart better than the last beyond the noise (minilm-gpt's layer 2 leads its last by 0.025, interval
    -0.008 … +0.060: noise). Measured again: a new ship cannot rot it."""
    from engine.inspection.quality import clear_sense_layer

    if os.environ.get("WORD2BERT_GPU_CHECK"):  # the GPU machine gets neither the bigger checkpoints nor MiniLM
        pytest.skip("measures the shipped checkpoints, not all on this machine")
    models = api.catalog()["models"]
    names = set(api.preferred_models("contextual")) | {n for n, e in models.items() if "sense_layer" in e}
    assert {"bert-tiny", "elmo-tiny", "gpt-tiny"} <= names
    for name in sorted(names):
        handle = api.load(name)
        assert api.sense_layer(handle.info) == clear_sense_layer(handle, draws=500), name


def test_the_catalogs_sense_separation_is_the_shipped_models_own_measured_again():
    """The All models view writes each shipped model's sense separation beside its name (the room tells a model
    that confuses the senses from one that does not): the catalog's number is the model's own, at the layer the
    lens opens it at, on the sense set — measured again, so that a new ship cannot leave an old number."""
    from engine.inspection.quality import sense_separation

    if os.environ.get("WORD2BERT_GPU_CHECK"):  # the GPU machine gets neither the bigger checkpoints nor MiniLM
        pytest.skip("measures the shipped checkpoints, not all on this machine")
    models = api.catalog()["models"]
    measured = {n for n, e in models.items() if "sense_separation" in e}
    assert {"bert-tiny", "elmo-tiny", "gpt-tiny", "minilm-mlm"} <= measured
    for name in sorted(measured):
        handle = api.load(name)
        score = float(sense_separation(handle)[api.sense_layer(handle.info)])
        assert handle.info["sense_separation"] == pytest.approx(score, abs=0.0015), name
    assert "sense_separation" not in api.load("glove-6b-50d").info  # (one vector a word: nothing to separate)


def test_a_model_the_catalog_does_not_describe_opens_at_its_last_layer():
    assert api.sense_layer({"vector_layers": 5}) == 4
    assert api.sense_layer({"vector_layers": 5, "sense_layer": 2}) == 2
    for wrong in (7, -1, True, "2", None):  # a catalog edited by hand: out of range or not a layer
        assert api.sense_layer({"vector_layers": 5, "sense_layer": wrong}) == 4
    assert api.sense_layer({}) == 0  # static vectors: one layer


def test_every_shipped_tuned_lens_fits_the_save_of_its_model_that_ships():
    """A shipped model remade (another stage) leaves its shipped lens reading layers it was not trained on: this
    fails until the lens is trained again (word2bert-train tuned-lens --model NAME, assets/checkpoints/README.md)."""
    if os.environ.get("WORD2BERT_GPU_CHECK"):  # the GPU machine gets neither the bigger checkpoints nor MiniLM
        pytest.skip("opens the shipped checkpoints, not all on this machine")
    lenses = [n for n in api.default_checkpoints() if n.startswith("tuned-lens-")]
    assert lenses
    for name in lenses:
        handle = api.load(name)
        assert handle.tuned_lens is not None and not handle.tuned_lens_notice, (name, handle.tuned_lens_notice)
