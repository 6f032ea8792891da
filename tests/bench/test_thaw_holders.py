"""The thaw bench says what holds an unloaded model: a closure by its function's name, an attribute by its owner."""

from bench.robustness.thaw_holders import referrers


class Model:
    pass


class Panel:
    pass


def test_a_model_held_by_an_attribute_and_a_closure_is_said_by_owner_and_function():
    model = Model()
    panel = Panel()
    panel.answer_model = model  # type: ignore[attr-defined]

    def query():
        return model

    said = referrers(model)
    assert "attribute ['answer_model'] of Panel" in said
    assert any(s.startswith("cell <- (") and "function " in s and ".query" in s for s in said)
    assert query() is model


def test_a_model_held_by_nothing_of_ours_is_said_by_nothing():
    assert referrers(Model()) == []
