"""A view's model chooser: greys out models that cannot do what it shows (with the engine's reason),
opens on the catalog's best model for its role, and keeps a model the user picked."""

from engine.api import Capability


class Handle:
    def __init__(self, capabilities):
        self.capabilities = capabilities

    def missing(self, capability):
        return "" if capability in self.capabilities else f"cannot do {capability.name}"


def test_the_role_picks_the_catalogs_best_and_a_users_choice_stays(qtbot, monkeypatch):
    import engine.api
    from explorer.widgets.model_picker import ModelPicker

    monkeypatch.setattr(engine.api, "preferred_models", lambda role: ["best", "second"] if role == "masked_lm" else [])
    picker = ModelPicker(Capability.MASKED_LM, role="masked_lm")
    qtbot.addWidget(picker)
    masked, static = Handle(Capability.MASKED_LM), Handle(Capability.STATIC)
    picker.set_models({"first": masked, "vectors": static})
    assert picker.currentText() == "first" and picker.reasons["vectors"] == "cannot do MASKED_LM"
    picker.set_models({"first": masked, "vectors": static, "second": masked})
    assert picker.currentText() == "second"  # the catalog ranks it above "first"
    picker.set_models({"first": masked, "vectors": static, "second": masked, "best": masked})
    assert picker.currentText() == "best"
    picker.setCurrentIndex(0)
    picker.activated.emit(0)  # the user picks "first" by hand
    picker.set_models({"first": masked, "vectors": static, "second": masked, "best": masked, "more": masked})
    assert picker.currentText() == "first"
    picker.set_models({"first": masked, "best": masked}, prefer="best")  # a scene's choice wins
    assert picker.currentText() == "best"


def test_rows_follow_the_models_as_they_change_what_they_can_do(qtbot):
    """The rows are updated in place, not rebuilt: a model that can now answer becomes choosable again with no
    leftover reason, models unloaded leave no row, and the talk window finds the picker under its panel."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QWidget

    from explorer.widgets.model_picker import ModelPicker, pickers_within

    panel = QWidget()
    qtbot.addWidget(panel)
    picker = ModelPicker(Capability.MASKED_LM, parent=panel)
    masked, static = Handle(Capability.MASKED_LM), Handle(Capability.STATIC)
    picker.set_models({"a": static, "b": masked, "c": masked})
    rows = picker.model()
    assert [rows.item(i).text() for i in range(rows.rowCount())] == ["a (cannot)", "b", "c"]
    assert not rows.item(0).flags() & Qt.ItemFlag.ItemIsEnabled and rows.item(0).toolTip() == "cannot do MASKED_LM"
    picker.set_models({"a": masked, "b": static})  # "a" can now, "b" cannot, "c" was unloaded
    assert [rows.item(i).text() for i in range(rows.rowCount())] == ["a", "b (cannot)"]
    assert rows.item(0).flags() & Qt.ItemFlag.ItemIsEnabled and rows.item(0).flags() & Qt.ItemFlag.ItemIsSelectable
    assert rows.item(0).toolTip() == "" and picker.currentText() == "a" and picker.usable() == ["a"]
    assert pickers_within(panel) == [picker] and pickers_within(QWidget()) == []


def test_each_handle_is_asked_once_what_it_cannot_do_and_a_swapped_one_anew(qtbot):
    """Every picker of every panel lists the models again at each load, unload and scrubber step: a handle's
    reason is kept (what it can do is fixed when it loads); a checkpoint swapped in under the same name is asked."""
    from explorer.widgets.model_picker import ModelPicker

    class Counting(Handle):
        asked = 0

        def missing(self, capability):
            Counting.asked += 1
            return super().missing(capability)

    pickers = [ModelPicker(Capability.MASKED_LM), ModelPicker(Capability.MASKED_LM), ModelPicker(Capability.STATIC)]
    for picker in pickers:
        qtbot.addWidget(picker)
    masked, static = Counting(Capability.MASKED_LM), Counting(Capability.STATIC)
    for _ in range(5):
        for picker in pickers:
            picker.set_models({"m": masked, "s": static})
    assert Counting.asked == 4  # each handle once per need
    assert pickers[0].reasons == {"m": "", "s": "cannot do MASKED_LM"} and pickers[2].reasons["m"] == "cannot do STATIC"
    swapped = Counting(Capability.STATIC)  # the scrubber's next checkpoint, under the same name, another head
    pickers[0].set_models({"m": swapped, "s": static})
    assert Counting.asked == 5 and pickers[0].reasons["m"] == "cannot do MASKED_LM" and pickers[0].usable() == []
